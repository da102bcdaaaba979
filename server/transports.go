package server

import (
	"context"
	"io"

	"connectrpc.com/connect"
	"google.golang.org/grpc"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// The services are implemented once; these adapters only bridge the two
// transports' streaming shapes (their unary shapes are identical).

type grpcRouter struct {
	v1.UnimplementedRouterServiceServer
	svc *routerService
}

func (g grpcRouter) PickReplica(ctx context.Context, r *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error) {
	return g.svc.PickReplica(ctx, r)
}

func (g grpcRouter) ReportLifecycle(ctx context.Context, r *v1.ReportLifecycleRequest) (*v1.ReportLifecycleResponse, error) {
	return g.svc.ReportLifecycle(ctx, r)
}

func (g grpcRouter) StreamLifecycle(st grpc.ClientStreamingServer[v1.StreamLifecycleRequest, v1.StreamLifecycleResponse]) error {
	resp, err := g.svc.streamLifecycle(st.Context(), st.Recv)
	if err != nil {
		return err
	}
	return st.SendAndClose(resp)
}

type connectRouter struct{ *routerService }

func (c connectRouter) StreamLifecycle(ctx context.Context, st *connect.ClientStream[v1.StreamLifecycleRequest]) (*v1.StreamLifecycleResponse, error) {
	return c.streamLifecycle(ctx, connectRecv(st))
}

type grpcKV struct {
	v1.UnimplementedKVEventServiceServer
	svc *kvService
}

func (g grpcKV) PublishKVEvents(st grpc.ClientStreamingServer[v1.PublishKVEventsRequest, v1.PublishKVEventsResponse]) error {
	resp, err := g.svc.publish(st.Context(), st.Recv)
	if err != nil {
		return err
	}
	return st.SendAndClose(resp)
}

type connectKV struct{ svc *kvService }

func (c connectKV) PublishKVEvents(ctx context.Context, st *connect.ClientStream[v1.PublishKVEventsRequest]) (*v1.PublishKVEventsResponse, error) {
	return c.svc.publish(ctx, connectRecv(st))
}

type grpcAudit struct {
	v1.UnimplementedAuditServiceServer
	svc *auditService
}

func (g grpcAudit) GetDecision(ctx context.Context, r *v1.GetDecisionRequest) (*v1.GetDecisionResponse, error) {
	return g.svc.GetDecision(ctx, r)
}

func (g grpcAudit) ListDecisions(ctx context.Context, r *v1.ListDecisionsRequest) (*v1.ListDecisionsResponse, error) {
	return g.svc.ListDecisions(ctx, r)
}

func (g grpcAudit) WatchDecisions(r *v1.WatchDecisionsRequest, st grpc.ServerStreamingServer[v1.WatchDecisionsResponse]) error {
	return g.svc.watchDecisions(st.Context(), r, st.Send)
}

type connectAudit struct{ *auditService }

func (c connectAudit) WatchDecisions(ctx context.Context, r *v1.WatchDecisionsRequest, st *connect.ServerStream[v1.WatchDecisionsResponse]) error {
	return c.watchDecisions(ctx, r, st.Send)
}

// connectRecv adapts a Connect client stream to the recv shape the services
// use (io.EOF at the end, like grpc-go).
func connectRecv[T any](st *connect.ClientStream[T]) func() (*T, error) {
	return func() (*T, error) {
		if st.Receive() {
			return st.Msg(), nil
		}
		if err := st.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
}
