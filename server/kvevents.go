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
	router *scoring.Router
	limits limits

	mu     sync.Mutex
	owners map[engineKey]uint64 // the stream generation that owns each engine
	gen    uint64
}

// engineKey names one event publisher: a replica's data-parallel rank.
type engineKey struct {
	replica string
	rank    int
}

// kvStream is the state of one PublishKVEvents stream.
type kvStream struct {
	key     engineKey
	gen     uint64 // 0 until the first message claims the engine
	haveSeq bool   // a batch has been applied, so LastSequence is meaningful
	resp    *v1.PublishKVEventsResponse
}

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
	if !s.owns(st) {
		return connect.NewError(connect.CodeAborted, fmt.Errorf("a newer stream for replica %q rank %d superseded this one", st.key.replica, st.key.rank))
	}
	r := st.resp
	events := req.GetEvents()
	if len(events) > s.limits.MaxBatchEvents {
		r.EventsRejected += int64(len(events))
		r.RejectedByReason["batch_too_large"] += int64(len(events))
		return nil
	}
	seq := req.GetSequence()
	switch {
	case !st.haveSeq:
	case seq <= r.LastSequence:
		r.Restarts++
		s.clear(st)
	case seq > r.LastSequence+1:
		r.Gaps++
		s.clear(st)
	}
	st.haveSeq = true
	for _, e := range events {
		if reason := s.apply(st.key, e); reason != "" {
			r.EventsRejected++
			r.RejectedByReason[reason]++
			continue
		}
		r.EventsApplied++
	}
	r.Batches++
	r.LastSequence = seq
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
	if s.owners == nil {
		s.owners = map[engineKey]uint64{}
	}
	s.gen++
	st.gen = s.gen
	s.owners[st.key] = st.gen
	return nil
}

func (s *kvService) owns(st *kvStream) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owners[st.key] == st.gen
}

func (s *kvService) release(st *kvStream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st.gen != 0 && s.owners[st.key] == st.gen {
		delete(s.owners, st.key)
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
	return kvRejectReason(err)
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
