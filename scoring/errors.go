package scoring

import "errors"

// Sentinel errors returned (wrapped with detail) by the Router so that callers can classify
// failures with errors.Is and map them to transport codes.
var (
	// ErrInvalid reports a malformed argument; the message names the field.
	ErrInvalid = errors.New("invalid argument")
	// ErrUnknownPolicy reports a policy name that is not configured.
	ErrUnknownPolicy = errors.New("unknown policy")
	// ErrNoReplica reports that no candidate replica is eligible for a pick.
	ErrNoReplica = errors.New("no eligible replica")
	// ErrUnknownModel reports a model with no registered replica.
	ErrUnknownModel = errors.New("unknown model")
	// ErrUnknownReplica reports a replica id that is not registered.
	ErrUnknownReplica = errors.New("unknown replica")
	// ErrConflict reports a request that contradicts existing state (e.g. re-registering a
	// replica under another model, or reusing a live request id for another model).
	ErrConflict = errors.New("conflict")
)
