package server

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	"github.com/switchyard-llm/switchyard/clients/vllm"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// replicaService implements ReplicaService.
type replicaService struct {
	v1.UnimplementedReplicaServiceServer
	router  *scoring.Router
	limits  limits
	kv      *kvService // forgets a deregistered replica's publishers
	sources *kvSources // ZMQ subscriptions named by Replica.kv_events; nil = unavailable
}

// RegisterReplica implements ReplicaService.RegisterReplica.
func (s *replicaService) RegisterReplica(ctx context.Context, req *v1.RegisterReplicaRequest) (*v1.RegisterReplicaResponse, error) {
	r := req.GetReplica()
	if r == nil {
		return nil, invalid("replica", "is required")
	}
	for _, f := range []struct {
		name, v  string
		required bool
	}{{"replica.id", r.GetId(), true}, {"replica.model", r.GetModel(), true}, {"replica.address", r.GetAddress(), false}} {
		if err := s.limits.id(f.name, f.v, f.required); err != nil {
			return nil, err
		}
	}
	c := r.GetCapacity()
	if c.GetKvBlocks() < 0 {
		return nil, invalid("replica.capacity.kv_blocks", "must not be negative, got %d", c.GetKvBlocks())
	}
	if c.GetMaxBatchedTokens() < 0 {
		return nil, invalid("replica.capacity.max_batched_tokens", "must not be negative, got %d", c.GetMaxBatchedTokens())
	}
	const maxCapacity = 1 << 40
	if c.GetKvBlocks() > maxCapacity || c.GetMaxBatchedTokens() > maxCapacity {
		return nil, invalid("replica.capacity", "values must be at most %d", int64(maxCapacity))
	}
	state, err := stateFromProto("replica.state", r.GetState(), true)
	if err != nil {
		return nil, err
	}
	source, err := kvEventSource(r)
	if err != nil {
		return nil, err
	}
	if source != nil && s.sources == nil {
		return nil, connect.NewError(connect.CodeFailedPrecondition, errors.New("replica.kv_events: this server cannot subscribe to ZMQ event streams"))
	}
	st, err := s.router.Register(ctx, scoring.Replica{
		ID:               r.GetId(),
		Model:            r.GetModel(),
		Address:          r.GetAddress(),
		KVBlocks:         int(c.GetKvBlocks()),
		MaxBatchedTokens: int(c.GetMaxBatchedTokens()),
		Labels:           r.GetLabels(),
		State:            state,
	})
	if err != nil {
		return nil, rpcError(err)
	}
	if s.sources != nil {
		if err := s.sources.syncRegistered(ctx, st.ID, source); err != nil {
			return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("replica registered, but subscribing to its KV events failed: %w", err))
		}
	}
	return &v1.RegisterReplicaResponse{Status: s.status(st)}, nil
}

// DeregisterReplica implements ReplicaService.DeregisterReplica.
func (s *replicaService) DeregisterReplica(ctx context.Context, req *v1.DeregisterReplicaRequest) (*v1.DeregisterReplicaResponse, error) {
	if err := s.limits.id("replica_id", req.GetReplicaId(), true); err != nil {
		return nil, err
	}
	if err := s.router.Deregister(ctx, req.GetReplicaId()); err != nil {
		return nil, rpcError(err)
	}
	if s.sources != nil {
		s.sources.forget(ctx, req.GetReplicaId())
	}
	if s.kv != nil {
		s.kv.forget(req.GetReplicaId())
	}
	return &v1.DeregisterReplicaResponse{}, nil
}

// SetReplicaState implements ReplicaService.SetReplicaState.
func (s *replicaService) SetReplicaState(ctx context.Context, req *v1.SetReplicaStateRequest) (*v1.SetReplicaStateResponse, error) {
	if err := s.limits.id("replica_id", req.GetReplicaId(), true); err != nil {
		return nil, err
	}
	state, err := stateFromProto("state", req.GetState(), false)
	if err != nil {
		return nil, err
	}
	if err := s.router.SetState(ctx, req.GetReplicaId(), state); err != nil {
		return nil, rpcError(err)
	}
	st, err := s.router.Replica(req.GetReplicaId())
	if err != nil {
		return nil, rpcError(err)
	}
	return &v1.SetReplicaStateResponse{Status: s.status(st)}, nil
}

// ListReplicas implements ReplicaService.ListReplicas.
func (s *replicaService) ListReplicas(_ context.Context, req *v1.ListReplicasRequest) (*v1.ListReplicasResponse, error) {
	if err := s.limits.id("model", req.GetModel(), false); err != nil {
		return nil, err
	}
	list := s.router.Replicas(req.GetModel())
	out := &v1.ListReplicasResponse{Replicas: make([]*v1.ReplicaStatus, len(list))}
	for i, st := range list {
		out.Replicas[i] = s.status(st)
	}
	return out, nil
}

// stateFromProto maps a wire state; unspecified means ready only where
// allowUnset (registration).
func stateFromProto(field string, s v1.ReplicaState, allowUnset bool) (scoring.ReplicaState, error) {
	switch s {
	case v1.ReplicaState_REPLICA_STATE_READY:
		return scoring.StateReady, nil
	case v1.ReplicaState_REPLICA_STATE_DRAINING:
		return scoring.StateDraining, nil
	case v1.ReplicaState_REPLICA_STATE_UNSPECIFIED:
		if allowUnset {
			return scoring.StateReady, nil
		}
		return 0, invalid(field, "is required (READY or DRAINING)")
	}
	return 0, invalid(field, "unknown state %d", s)
}

// status maps a replica's status, with its KV-event subscription.
func (s *replicaService) status(st scoring.ReplicaStatus) *v1.ReplicaStatus {
	out := replicaStatus(st)
	if s.sources == nil {
		return out
	}
	if ep, ok := s.sources.endpoint(st.ID); ok {
		out.Replica.KvEvents = &v1.KVEventSource{
			Endpoint:         ep.Live,
			ReplayEndpoint:   ep.Replay,
			Topic:            ep.Topic,
			Bind:             ep.Bind,
			DataParallelSize: int32(ep.Ranks),
		}
	}
	return out
}

// kvEventSource validates a registration's kv_events; nil when unset.
func kvEventSource(r *v1.Replica) (*vllm.Endpoint, error) {
	src := r.GetKvEvents()
	if src == nil {
		return nil, nil
	}
	if src.GetDataParallelSize() < 0 {
		return nil, invalid("replica.kv_events.data_parallel_size", "must not be negative, got %d", src.GetDataParallelSize())
	}
	ep := vllm.Endpoint{
		Replica: r.GetId(),
		Live:    src.GetEndpoint(),
		Replay:  src.GetReplayEndpoint(),
		Topic:   src.GetTopic(),
		Bind:    src.GetBind(),
		Ranks:   int(src.GetDataParallelSize()),
	}
	if ep.Live == "" {
		return nil, invalid("replica.kv_events.endpoint", "is required")
	}
	if err := ep.Validate(); err != nil {
		return nil, invalid("replica.kv_events", "%v", err)
	}
	return &ep, nil
}
