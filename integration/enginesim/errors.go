package enginesim

import "errors"

// Sentinel errors, for callers to classify failures with errors.Is.
var (
	// ErrInvalid reports a bad configuration value or request; the message names it.
	ErrInvalid = errors.New("enginesim: invalid argument")
	// ErrOverloaded reports a request refused because the engine's queue is full.
	ErrOverloaded = errors.New("enginesim: engine overloaded")
	// ErrStopped reports a request that arrived after the engine stopped.
	ErrStopped = errors.New("enginesim: engine stopped")
)
