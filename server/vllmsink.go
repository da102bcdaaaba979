package server

import (
	"context"
	"log/slog"

	"github.com/switchyard-llm/switchyard/clients/vllm"
	"github.com/switchyard-llm/switchyard/index"
	"github.com/switchyard-llm/switchyard/scoring"
)

// vllmSink applies the batches that clients/vllm decodes from engines'
// native ZMQ streams to the router's index. An event the index refuses is
// counted by reason and skipped; the rest of its batch still applies.
type vllmSink struct {
	router   *scoring.Router
	counters *KVCounters
	log      *slog.Logger
}

// ApplyBatch implements vllm.Sink.
func (s *vllmSink) ApplyBatch(_ context.Context, b vllm.Batch) error {
	// Events of a replica that is not registered (yet) are each rejected as
	// "unknown_replica": nothing holds its blocks, so nothing needs a reset.
	for _, ev := range b.Events {
		reason := s.apply(b.Replica, b.Rank, ev)
		if reason != "" {
			s.counters.reject(reason, 1)
			continue
		}
		s.counters.applyOK(vllmKind(ev.Kind))
	}
	s.counters.batch(SourceZMQ)
	return nil
}

func (s *vllmSink) apply(replica string, rank int, ev vllm.Event) string {
	if ev.Kind == vllm.AllBlocksCleared {
		return kvRejectReason(s.router.ClearKV(replica, rank))
	}
	vt, ok := vllm.TierOf(ev.Medium)
	if !ok {
		return "unknown_tier"
	}
	tier, err := index.ParseTier(string(vt))
	if err != nil {
		return "unknown_tier"
	}
	if ev.Kind == vllm.BlockRemoved {
		return kvRejectReason(s.router.ApplyRemoved(replica, rank, index.Removed{BlockHashes: ev.BlockHashes, Tier: tier}))
	}
	return kvRejectReason(s.router.ApplyStored(replica, rank, index.Stored{
		BlockHashes: ev.BlockHashes,
		Parent:      ev.Parent,
		HasParent:   ev.HasParent,
		TokenIDs:    ev.TokenIDs,
		BlockSize:   ev.BlockSize,
		LoRA:        ev.LoRAName,
		Tier:        tier,
	}))
}

// ResetReplica implements vllm.Sink: the engine's entries can no longer be
// trusted (a gap replay could not fill, a restart, ...), so they go.
func (s *vllmSink) ResetReplica(_ context.Context, replica string, rank int, reason vllm.ResetReason) {
	s.log.Info("dropping an engine's KV index entries", "replica", replica, "rank", rank, "reason", string(reason))
	_ = s.router.ClearKV(replica, rank)
}

func vllmKind(k vllm.EventKind) string {
	switch k {
	case vllm.BlockStored:
		return "stored"
	case vllm.BlockRemoved:
		return "removed"
	}
	return "cleared"
}
