package server

import (
	"context"
	"net/url"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// livenessReplicas is ReplicaService with liveness: registrations record health URLs (and
// count as a sign of life), Heartbeat feeds the checker, and every returned status carries
// the replica's health.
type livenessReplicas struct {
	*replicaService
	live *liveness
}

// maxHealthURLBytes bounds Replica.health_url.
const maxHealthURLBytes = 2048

// checkHealthURL validates Replica.health_url: empty, or an absolute http(s) URL.
func checkHealthURL(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > maxHealthURLBytes {
		return invalid("replica.health_url", "is %d bytes, at most %d", len(s), maxHealthURLBytes)
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("replica.health_url", "want an absolute http:// or https:// URL, got %q", s)
	}
	return nil
}

// RegisterReplica implements ReplicaService.RegisterReplica.
func (s livenessReplicas) RegisterReplica(ctx context.Context, req *v1.RegisterReplicaRequest) (*v1.RegisterReplicaResponse, error) {
	r := req.GetReplica()
	if r == nil {
		return s.replicaService.RegisterReplica(ctx, req)
	}
	if err := checkHealthURL(r.GetHealthUrl()); err != nil {
		return nil, err
	}
	if err := s.limits.id("replica.id", r.GetId(), true); err != nil {
		return nil, err
	}
	var resp *v1.RegisterReplicaResponse
	err := s.live.register(ctx, r.GetId(), r.GetHealthUrl(), func() error {
		var err error
		resp, err = s.replicaService.RegisterReplica(ctx, req)
		return err
	})
	if err != nil {
		return nil, err
	}
	s.decorate(resp.GetStatus())
	return resp, nil
}

// DeregisterReplica implements ReplicaService.DeregisterReplica.
func (s livenessReplicas) DeregisterReplica(ctx context.Context, req *v1.DeregisterReplicaRequest) (*v1.DeregisterReplicaResponse, error) {
	resp, err := s.replicaService.DeregisterReplica(ctx, req)
	if err != nil {
		return nil, err
	}
	s.live.forget(req.GetReplicaId())
	return resp, nil
}

// SetReplicaState implements ReplicaService.SetReplicaState. An unhealthy replica stays out
// of routing whatever state it is set to (scoring keeps the quarantine); the state applies
// once it is healthy again.
func (s livenessReplicas) SetReplicaState(ctx context.Context, req *v1.SetReplicaStateRequest) (*v1.SetReplicaStateResponse, error) {
	resp, err := s.replicaService.SetReplicaState(ctx, req)
	if err != nil {
		return nil, err
	}
	s.decorate(resp.GetStatus())
	return resp, nil
}

// ListReplicas implements ReplicaService.ListReplicas.
func (s livenessReplicas) ListReplicas(ctx context.Context, req *v1.ListReplicasRequest) (*v1.ListReplicasResponse, error) {
	resp, err := s.replicaService.ListReplicas(ctx, req)
	if err != nil {
		return nil, err
	}
	for _, st := range resp.GetReplicas() {
		s.decorate(st)
	}
	return resp, nil
}

// Heartbeat implements ReplicaService.Heartbeat.
func (s livenessReplicas) Heartbeat(ctx context.Context, req *v1.HeartbeatRequest) (*v1.HeartbeatResponse, error) {
	id := req.GetReplicaId()
	if err := s.limits.id("replica_id", id, true); err != nil {
		return nil, err
	}
	if _, err := s.router.Replica(id); err != nil {
		return nil, rpcError(err)
	}
	// The heartbeat may restore a quarantined replica: report its state after.
	s.live.heartbeat(ctx, id)
	st, err := s.router.Replica(id)
	if err != nil {
		return nil, rpcError(err)
	}
	out := replicaStatus(st)
	s.decorate(out)
	return &v1.HeartbeatResponse{Status: out}, nil
}

// decorate adds the replica's health and health URL to a status.
func (s livenessReplicas) decorate(st *v1.ReplicaStatus) {
	if st == nil || st.GetReplica() == nil {
		return
	}
	ls := s.live.status(st.GetReplica().GetId())
	st.Replica.HealthUrl = ls.HealthURL
	st.HealthDetail = ls.Detail
	switch ls.Health {
	case HealthHealthy:
		st.Health = v1.ReplicaHealth_REPLICA_HEALTH_HEALTHY
	case HealthUnhealthy:
		st.Health = v1.ReplicaHealth_REPLICA_HEALTH_UNHEALTHY
	default:
		st.Health = v1.ReplicaHealth_REPLICA_HEALTH_UNSPECIFIED
	}
}

// LivenessStats returns what the liveness checks did so far.
func (s *Server) LivenessStats() LivenessStats { return s.live.snapshot() }
