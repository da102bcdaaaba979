package switchyard

import (
	"context"

	"google.golang.org/grpc"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// unary runs one unary RPC with the client's default deadline and wraps its
// error as an *Error naming op.
func unary[Req, Resp any](c *Client, ctx context.Context, op string,
	rpc func(context.Context, Req, ...grpc.CallOption) (Resp, error), req Req) (Resp, error) {
	ctx, cancel := c.withTimeout(ctx)
	defer cancel()
	resp, err := rpc(ctx, req)
	return resp, rpcErr(op, err)
}

// Pick asks the router which replica gets the request and reserves its load
// there (unless req.DryRun). Retrying with the same request id returns the
// same decision. It fails with ErrUnavailable when no replica is ready.
func (c *Client) Pick(ctx context.Context, req *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error) {
	return unary(c, ctx, "PickReplica", c.router.PickReplica, req)
}

// ReportLifecycle sends one batch of lifecycle events and waits for the
// router's counts. For a steady flow of events use a Reporter instead.
func (c *Client) ReportLifecycle(ctx context.Context, events ...*v1.LifecycleEvent) (*v1.LifecycleCounts, error) {
	resp, err := unary(c, ctx, "ReportLifecycle", c.router.ReportLifecycle, &v1.ReportLifecycleRequest{Events: events})
	return resp.GetCounts(), err
}

// RegisterReplica adds a replica or updates an existing one and returns it
// with its live state.
func (c *Client) RegisterReplica(ctx context.Context, r *v1.Replica) (*v1.ReplicaStatus, error) {
	resp, err := unary(c, ctx, "RegisterReplica", c.replicas.RegisterReplica, &v1.RegisterReplicaRequest{Replica: r})
	return resp.GetStatus(), err
}

// DeregisterReplica removes a replica with its cache entries and
// reservations; ErrNotFound for an unknown id.
func (c *Client) DeregisterReplica(ctx context.Context, replicaID string) error {
	_, err := unary(c, ctx, "DeregisterReplica", c.replicas.DeregisterReplica, &v1.DeregisterReplicaRequest{ReplicaId: replicaID})
	return err
}

// SetReplicaState marks a replica ready or draining (draining replicas take
// no new requests) and returns it after the change.
func (c *Client) SetReplicaState(ctx context.Context, replicaID string, state v1.ReplicaState) (*v1.ReplicaStatus, error) {
	resp, err := unary(c, ctx, "SetReplicaState", c.replicas.SetReplicaState,
		&v1.SetReplicaStateRequest{ReplicaId: replicaID, State: state})
	return resp.GetStatus(), err
}

// ListReplicas returns the replicas of model (all when empty), sorted by id,
// with their live load and cache statistics.
func (c *Client) ListReplicas(ctx context.Context, model string) ([]*v1.ReplicaStatus, error) {
	resp, err := unary(c, ctx, "ListReplicas", c.replicas.ListReplicas, &v1.ListReplicasRequest{Model: model})
	return resp.GetReplicas(), err
}
