package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"connectrpc.com/connect"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/index"
	"github.com/switchyard-llm/switchyard/scoring"
)

// kvService implements KVEventService once for both transports.
type kvService struct {
	router   *scoring.Router
	limits   limits
	counters *KVCounters

	mu      sync.Mutex
	engines map[engineKey]*engineState
	gen     uint64
}

// engineState outlives streams, so a publisher that reconnects continues its
// sequence: a gap or reset between two streams is seen like one within a
// stream.
type engineState struct {
	owner   uint64 // generation of the stream that owns the engine; 0 = none
	seq     uint64 // last sequence applied
	haveSeq bool
}

// engineKey names one event publisher: a replica's data-parallel rank.
type engineKey struct {
	replica string
	rank    int
}

// kvStream is the state of one PublishKVEvents stream.
type kvStream struct {
	key  engineKey
	gen  uint64 // 0 until the first message claims the engine
	resp *v1.PublishKVEventsResponse
}

// seqAction is what a batch's sequence number says about the engine.
type seqAction uint8

const (
	seqInOrder seqAction = iota
	seqGap
	seqRestart
)

func (s *kvService) publish(ctx context.Context, recv func() (*v1.PublishKVEventsRequest, error)) (*v1.PublishKVEventsResponse, error) {
	st := &kvStream{resp: &v1.PublishKVEventsResponse{RejectedByReason: map[string]int64{}}}
	defer s.release(st)
	for msg := 0; ; msg++ {
		req, err := recv()
		if errors.Is(err, io.EOF) {
			return st.resp, nil
		}
		if err != nil {
			return nil, rpcError(err)
		}
		if err := s.batch(st, req); err != nil {
			return nil, fmt.Errorf("stream message %d: %w", msg, err)
		}
	}
}

// batch applies one message of a stream.
func (s *kvService) batch(st *kvStream, req *v1.PublishKVEventsRequest) error {
	if st.gen == 0 {
		if err := s.claim(st, req); err != nil {
			return err
		}
	} else if req.GetReplicaId() != "" && req.GetReplicaId() != st.key.replica {
		return invalid("replica_id", "stream belongs to %q, got %q", st.key.replica, req.GetReplicaId())
	}
	r := st.resp
	events := req.GetEvents()
	if len(events) > s.limits.MaxBatchEvents {
		r.EventsRejected += int64(len(events))
		r.RejectedByReason["batch_too_large"] += int64(len(events))
		s.counters.reject("batch_too_large", int64(len(events)))
		return nil
	}
	action, owned := s.advance(st, req.GetSequence())
	if !owned {
		return connect.NewError(connect.CodeAborted, fmt.Errorf("a newer stream for replica %q rank %d superseded this one", st.key.replica, st.key.rank))
	}
	switch action {
	case seqRestart:
		r.Restarts++
		s.counters.restart(SourceGRPC)
		s.clear(st)
	case seqGap:
		r.Gaps++
		s.counters.gap(SourceGRPC)
		s.clear(st)
	}
	for _, e := range events {
		if reason := s.apply(st.key, e); reason != "" {
			r.EventsRejected++
			r.RejectedByReason[reason]++
			s.counters.reject(reason, 1)
			continue
		}
		r.EventsApplied++
	}
	r.Batches++
	s.counters.batch(SourceGRPC)
	r.LastSequence = req.GetSequence()
	return nil
}

// claim validates the first message and makes this stream the engine's owner.
func (s *kvService) claim(st *kvStream, req *v1.PublishKVEventsRequest) error {
	if err := s.limits.id("replica_id", req.GetReplicaId(), true); err != nil {
		return err
	}
	if req.GetDataParallelRank() < 0 {
		return invalid("data_parallel_rank", "must not be negative, got %d", req.GetDataParallelRank())
	}
	if _, err := s.router.Replica(req.GetReplicaId()); err != nil {
		return rpcError(err)
	}
	st.key = engineKey{replica: req.GetReplicaId(), rank: int(req.GetDataParallelRank())}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.engines == nil {
		s.engines = map[engineKey]*engineState{}
	}
	e := s.engines[st.key]
	if e == nil {
		e = &engineState{}
		s.engines[st.key] = e
	}
	s.gen++
	st.gen = s.gen
	e.owner = st.gen
	return nil
}

// advance records a batch's sequence number for the stream's engine and
// says what it means; owned is false when a newer stream took the engine.
func (s *kvService) advance(st *kvStream, seq uint64) (action seqAction, owned bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.engines[st.key]
	if e == nil || e.owner != st.gen {
		return seqInOrder, false
	}
	switch {
	case !e.haveSeq:
	case seq <= e.seq:
		action = seqRestart
	case seq > e.seq+1:
		action = seqGap
	}
	e.seq, e.haveSeq = seq, true
	return action, true
}

func (s *kvService) release(st *kvStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e := s.engines[st.key]; e != nil && e.owner == st.gen {
		e.owner = 0
	}
}

// forget drops what is known of a replica's publishers (it was
// deregistered); a later stream starts afresh.
func (s *kvService) forget(replica string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.engines {
		if k.replica == replica {
			delete(s.engines, k)
		}
	}
}

// clear drops the engine's entries: after a gap they can no longer be
// trusted, after a restart they are gone.
func (s *kvService) clear(st *kvStream) {
	_ = s.router.ClearKV(st.key.replica, st.key.rank)
}

// apply applies one event and returns the rejection reason, "" when applied.
func (s *kvService) apply(k engineKey, e *v1.KVEvent) string {
	var err error
	switch ev := e.GetEvent().(type) {
	case *v1.KVEvent_Stored:
		tier, ok := tierFromProto(ev.Stored.GetTier())
		if !ok {
			return "unknown_tier"
		}
		err = s.router.ApplyStored(k.replica, k.rank, index.Stored{
			BlockHashes: ev.Stored.GetBlockHashes(),
			Parent:      ev.Stored.GetParentBlockHash(),
			HasParent:   ev.Stored.ParentBlockHash != nil,
			TokenIDs:    ev.Stored.GetTokenIds(),
			BlockSize:   int(ev.Stored.GetBlockSize()),
			LoRA:        ev.Stored.GetLoraName(),
			Tier:        tier,
		})
	case *v1.KVEvent_Removed:
		tier, ok := tierFromProto(ev.Removed.GetTier())
		if !ok {
			return "unknown_tier"
		}
		err = s.router.ApplyRemoved(k.replica, k.rank, index.Removed{BlockHashes: ev.Removed.GetBlockHashes(), Tier: tier})
	case *v1.KVEvent_Cleared:
		err = s.router.ClearKV(k.replica, k.rank)
	default:
		return "unset_event"
	}
	reason := kvRejectReason(err)
	if reason == "" {
		s.counters.applyOK(kvEventKind(e))
	}
	return reason
}

// kvEventKind names an event's kind for the counters.
func kvEventKind(e *v1.KVEvent) string {
	switch e.GetEvent().(type) {
	case *v1.KVEvent_Stored:
		return "stored"
	case *v1.KVEvent_Removed:
		return "removed"
	}
	return "cleared"
}

// kvRejectReason names why the index refused an event ("" for nil).
func kvRejectReason(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, index.ErrBlockSize):
		return "block_size"
	case errors.Is(err, index.ErrTokenCount):
		return "token_count"
	case errors.Is(err, index.ErrOrphan):
		return "orphan"
	case errors.Is(err, index.ErrUnknownTier):
		return "unknown_tier"
	case errors.Is(err, index.ErrUnknownBlock):
		return "unknown_block"
	case errors.Is(err, scoring.ErrUnknownReplica):
		return "unknown_replica"
	}
	return "other"
}
