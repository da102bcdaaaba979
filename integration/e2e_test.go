package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/gen/go/switchyard/v1/switchyardv1connect"
)

// api is the part of the API the scenario drives, implemented over each
// transport.
type api struct {
	register   func(context.Context, *v1.RegisterReplicaRequest) (*v1.RegisterReplicaResponse, error)
	setState   func(context.Context, *v1.SetReplicaStateRequest) (*v1.SetReplicaStateResponse, error)
	deregister func(context.Context, *v1.DeregisterReplicaRequest) (*v1.DeregisterReplicaResponse, error)
	list       func(context.Context, *v1.ListReplicasRequest) (*v1.ListReplicasResponse, error)
	pick       func(context.Context, *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error)
	report     func(context.Context, *v1.ReportLifecycleRequest) (*v1.ReportLifecycleResponse, error)
	decision   func(context.Context, *v1.GetDecisionRequest) (*v1.GetDecisionResponse, error)
	// code extracts the RPC code of an error.
	code func(error) codes.Code
}

func grpcAPI(conn *grpc.ClientConn) api {
	rs, rt, au := v1.NewReplicaServiceClient(conn), v1.NewRouterServiceClient(conn), v1.NewAuditServiceClient(conn)
	return api{
		register: func(ctx context.Context, r *v1.RegisterReplicaRequest) (*v1.RegisterReplicaResponse, error) {
			return rs.RegisterReplica(ctx, r)
		},
		setState: func(ctx context.Context, r *v1.SetReplicaStateRequest) (*v1.SetReplicaStateResponse, error) {
			return rs.SetReplicaState(ctx, r)
		},
		deregister: func(ctx context.Context, r *v1.DeregisterReplicaRequest) (*v1.DeregisterReplicaResponse, error) {
			return rs.DeregisterReplica(ctx, r)
		},
		list: func(ctx context.Context, r *v1.ListReplicasRequest) (*v1.ListReplicasResponse, error) {
			return rs.ListReplicas(ctx, r)
		},
		pick: func(ctx context.Context, r *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error) {
			return rt.PickReplica(ctx, r)
		},
		report: func(ctx context.Context, r *v1.ReportLifecycleRequest) (*v1.ReportLifecycleResponse, error) {
			return rt.ReportLifecycle(ctx, r)
		},
		decision: func(ctx context.Context, r *v1.GetDecisionRequest) (*v1.GetDecisionResponse, error) {
			return au.GetDecision(ctx, r)
		},
		code: func(err error) codes.Code { return status.Code(err) },
	}
}

func connectAPI(hc *http.Client, base string, opts ...connect.ClientOption) api {
	rs := switchyardv1connect.NewReplicaServiceClient(hc, base, opts...)
	rt := switchyardv1connect.NewRouterServiceClient(hc, base, opts...)
	au := switchyardv1connect.NewAuditServiceClient(hc, base, opts...)
	return api{
		register: rs.RegisterReplica, setState: rs.SetReplicaState, deregister: rs.DeregisterReplica, list: rs.ListReplicas,
		pick: rt.PickReplica, report: rt.ReportLifecycle, decision: au.GetDecision,
		code: func(err error) codes.Code { return codes.Code(connect.CodeOf(err)) },
	}
}

func tokens(n, seed int) *v1.PickReplicaRequest_TokenIds {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = uint32(seed*7919 + i)
	}
	return &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}
}

// TestRegisterPickLifecyclePick drives the main flow through every client
// transport against the real server.
func TestRegisterPickLifecyclePick(t *testing.T) {
	transports := []struct {
		name string
		api  func(t *testing.T, addr string) api
	}{
		{"grpc", func(t *testing.T, addr string) api { return grpcAPI(grpcConn(t, addr)) }},
		{"connect-json-http1", func(t *testing.T, addr string) api {
			return connectAPI(http.DefaultClient, "http://"+addr, connect.WithProtoJSON())
		}},
		{"connect-proto-h2c", func(t *testing.T, addr string) api { return connectAPI(h2cClient(t), "http://"+addr) }},
		{"grpc-web", func(t *testing.T, addr string) api {
			return connectAPI(http.DefaultClient, "http://"+addr, connect.WithGRPCWeb())
		}},
		{"connect-grpc-h2c", func(t *testing.T, addr string) api {
			return connectAPI(h2cClient(t), "http://"+addr, connect.WithGRPC())
		}},
	}
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			runScenario(t, tr.api(t, startServer(t)))
		})
	}
}

func runScenario(t *testing.T, c api) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	must := func(err error, what string) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for _, id := range []string{"replica-a", "replica-b"} {
		_, err := c.register(ctx, &v1.RegisterReplicaRequest{Replica: &v1.Replica{
			Id: id, Model: "m", Address: id + ":8000", Capacity: &v1.ReplicaCapacity{KvBlocks: 1000},
		}})
		must(err, "register "+id)
	}
	list, err := c.list(ctx, &v1.ListReplicasRequest{Model: "m"})
	must(err, "list")
	if len(list.GetReplicas()) != 2 || list.GetReplicas()[0].GetReplica().GetState() != v1.ReplicaState_REPLICA_STATE_READY {
		t.Fatalf("list = %v, want two ready replicas", list.GetReplicas())
	}

	prompt := tokens(64, 1)
	first, err := c.pick(ctx, &v1.PickReplicaRequest{RequestId: "r1", Model: "m", Prompt: prompt})
	must(err, "pick r1")
	chosen := first.GetReplicaId()
	if chosen != "replica-a" && chosen != "replica-b" {
		t.Fatalf("pick r1 chose %q", chosen)
	}
	if len(first.GetCandidates()) != 2 || first.GetPromptTokens() != 64 || first.GetReplicaAddress() != chosen+":8000" {
		t.Fatalf("pick r1 response incomplete: %v", first)
	}
	again, err := c.pick(ctx, &v1.PickReplicaRequest{RequestId: "r1", Model: "m", Prompt: prompt})
	must(err, "retry r1")
	if again.GetDecisionId() != first.GetDecisionId() || again.GetReplicaId() != chosen {
		t.Fatalf("retry of r1 gave decision %s on %s, want %s on %s", again.GetDecisionId(), again.GetReplicaId(), first.GetDecisionId(), chosen)
	}
	if got := activeOn(t, ctx, c, chosen); got != 1 {
		t.Fatalf("active requests on %s after pick = %d, want 1", chosen, got)
	}

	ev := func(kind string) *v1.LifecycleEvent {
		e := &v1.LifecycleEvent{RequestId: "r1", ReplicaId: chosen}
		switch kind {
		case "admitted":
			e.Event = &v1.LifecycleEvent_Admitted{Admitted: &v1.RequestAdmitted{PromptTokens: 64}}
		case "first":
			e.Event = &v1.LifecycleEvent_FirstToken{FirstToken: &v1.FirstTokenEmitted{}}
		case "done":
			e.Event = &v1.LifecycleEvent_Done{Done: &v1.RequestDone{OutputTokens: 20}}
		}
		return e
	}
	rep, err := c.report(ctx, &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{ev("admitted"), ev("first"), ev("done")}})
	must(err, "report lifecycle")
	if rep.GetCounts().GetApplied() != 3 {
		t.Fatalf("lifecycle counts = %v, want 3 applied", rep.GetCounts())
	}
	if got := activeOn(t, ctx, c, chosen); got != 0 {
		t.Fatalf("active requests on %s after done = %d, want 0", chosen, got)
	}
	unknown, err := c.report(ctx, &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{
		{RequestId: "never-picked", ReplicaId: "nobody", Event: &v1.LifecycleEvent_FirstToken{FirstToken: &v1.FirstTokenEmitted{}}},
	}})
	must(err, "report unknown")
	if unknown.GetCounts().GetApplied() != 0 || unknown.GetCounts().GetUnknownRequest()+unknown.GetCounts().GetUnknownReplica() == 0 {
		t.Fatalf("unknown ids counts = %v, want counted and not applied", unknown.GetCounts())
	}

	// The same prompt again: the first decision's predicted blocks make the
	// chosen replica the cheaper one.
	second, err := c.pick(ctx, &v1.PickReplicaRequest{RequestId: "r2", Model: "m", Prompt: prompt})
	must(err, "pick r2")
	if second.GetReplicaId() != chosen || second.GetCachedTokens() != 64 {
		t.Fatalf("pick r2 = %s with %d cached tokens, want %s with 64", second.GetReplicaId(), second.GetCachedTokens(), chosen)
	}
	audit, err := c.decision(ctx, &v1.GetDecisionRequest{RequestId: "r2"})
	must(err, "get decision r2")
	if audit.GetDecision().GetDecisionId() != second.GetDecisionId() {
		t.Fatalf("audit decision = %s, want %s", audit.GetDecision().GetDecisionId(), second.GetDecisionId())
	}

	// Draining the chosen replica sends new requests to the other one.
	other := map[string]string{"replica-a": "replica-b", "replica-b": "replica-a"}[chosen]
	_, err = c.setState(ctx, &v1.SetReplicaStateRequest{ReplicaId: chosen, State: v1.ReplicaState_REPLICA_STATE_DRAINING})
	must(err, "drain")
	third, err := c.pick(ctx, &v1.PickReplicaRequest{RequestId: "r3", Model: "m", Prompt: prompt})
	must(err, "pick r3")
	if third.GetReplicaId() != other {
		t.Fatalf("pick r3 with %s draining chose %s", chosen, third.GetReplicaId())
	}
	_, err = c.deregister(ctx, &v1.DeregisterReplicaRequest{ReplicaId: other})
	must(err, "deregister")
	_, err = c.pick(ctx, &v1.PickReplicaRequest{RequestId: "r4", Model: "m", Prompt: prompt})
	if c.code(err) != codes.Unavailable {
		t.Fatalf("pick with no ready replica: err = %v, want Unavailable", err)
	}
	_, err = c.pick(ctx, &v1.PickReplicaRequest{Model: "m", Prompt: prompt})
	if c.code(err) != codes.InvalidArgument {
		t.Fatalf("pick without request_id: err = %v, want InvalidArgument", err)
	}
	_, err = c.deregister(ctx, &v1.DeregisterReplicaRequest{ReplicaId: "no-such-replica"})
	if c.code(err) != codes.NotFound {
		t.Fatalf("deregister unknown: err = %v, want NotFound", err)
	}
}

func activeOn(t *testing.T, ctx context.Context, c api, id string) int64 {
	t.Helper()
	list, err := c.list(ctx, &v1.ListReplicasRequest{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	for _, st := range list.GetReplicas() {
		if st.GetReplica().GetId() == id {
			return st.GetLoad().GetActiveRequests()
		}
	}
	t.Fatalf("replica %s not listed", id)
	return 0
}
