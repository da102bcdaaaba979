package vllm

import "fmt"

// Limits bound what one payload may cost to decode. A payload beyond a
// batch-level limit is rejected whole; an event beyond an event-level limit is
// dropped and counted. Memory used by decoding is bounded by MaxPayloadBytes
// times a small constant whatever the length headers inside claim.
type Limits struct {
	// MaxPayloadBytes caps the msgpack payload of one batch (default 32 MiB).
	MaxPayloadBytes int
	// MaxEvents caps the events of one batch (default 65536).
	MaxEvents int
	// MaxBlocksPerEvent caps block_hashes of one event (default 65536).
	MaxBlocksPerEvent int
	// MaxTokensPerEvent caps token_ids of one event (default 4 Mi).
	MaxTokensPerEvent int
	// MaxBlockSize caps block_size (default 65536 tokens).
	MaxBlockSize int
	// MaxDepth caps nesting inside values this package skips (extra_keys,
	// unknown fields), so hostile nesting cannot exhaust the stack (default 32).
	MaxDepth int
}

// DefaultLimits returns the limits used when none are configured: generous
// for real engines (a 128k-token prefill is about 1 MiB), small enough that a
// hostile publisher cannot exhaust memory.
func DefaultLimits() Limits {
	return Limits{
		MaxPayloadBytes:   32 << 20,
		MaxEvents:         1 << 16,
		MaxBlocksPerEvent: 1 << 16,
		MaxTokensPerEvent: 4 << 20,
		MaxBlockSize:      1 << 16,
		MaxDepth:          32,
	}
}

// Validate reports the first limit that is not positive.
func (l Limits) Validate() error {
	for _, f := range []struct {
		name string
		v    int
	}{
		{"MaxPayloadBytes", l.MaxPayloadBytes},
		{"MaxEvents", l.MaxEvents},
		{"MaxBlocksPerEvent", l.MaxBlocksPerEvent},
		{"MaxTokensPerEvent", l.MaxTokensPerEvent},
		{"MaxBlockSize", l.MaxBlockSize},
		{"MaxDepth", l.MaxDepth},
	} {
		if f.v <= 0 {
			return fmt.Errorf("%w: %s must be positive, got %d", ErrInvalidConfig, f.name, f.v)
		}
	}
	return nil
}
