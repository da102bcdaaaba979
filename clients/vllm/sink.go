package vllm

import "context"

// ResetReason says why a replica's entries must be dropped.
type ResetReason string

// Reasons passed to Sink.ResetReplica.
const (
	// ResetRestart: the publisher's sequence went backwards, or replay showed
	// a different process behind the same sequence numbers: the engine
	// restarted and its cache is gone.
	ResetRestart ResetReason = "restart"
	// ResetGap: batches were lost and replay is not configured or could not
	// supply them, so some removals may be missing.
	ResetGap ResetReason = "gap"
	// ResetMalformed: a batch could not be decoded, so its changes are unknown.
	ResetMalformed ResetReason = "malformed"
	// ResetSinkError: the Sink failed to apply a batch.
	ResetSinkError ResetReason = "sink_error"
	// ResetRemoved: the endpoint was removed; its events are no longer followed.
	ResetRemoved ResetReason = "removed"
)

// ResetReasons lists every reason, for exporting counters.
func ResetReasons() []ResetReason {
	return []ResetReason{ResetRestart, ResetGap, ResetMalformed, ResetSinkError, ResetRemoved}
}

// Sink receives what the Subscriber decodes. Calls for one (replica, rank)
// are sequential and in publisher order; calls for different ones are
// concurrent, so implementations must be safe for concurrent use.
type Sink interface {
	// ApplyBatch applies a batch of accepted events (never empty). The Batch
	// and its slices are not reused, so the Sink may keep them. An error
	// means the batch could not be applied; the Subscriber then resets the
	// replica, since the consumer no longer mirrors the engine.
	ApplyBatch(ctx context.Context, b Batch) error
	// ResetReplica drops everything held for the engine (replica, rank) on
	// every tier: its state can no longer be trusted.
	ResetReplica(ctx context.Context, replica string, rank int, reason ResetReason)
}
