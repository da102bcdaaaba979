package server

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// fixture is a router with two ready replicas of model "m" and the services
// over it, called in-process.
type fixture struct {
	router   *scoring.Router
	rs       *routerService
	replicas *replicaService
	audit    *auditService
	kv       *kvService
}

func newFixture(t *testing.T, cfg Config) *fixture {
	t.Helper()
	r, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	lim := limits{cfg.withDefaults()}
	log := NewAuditLog(16)
	f := &fixture{
		router:   r,
		rs:       &routerService{router: r, audit: log, limits: lim},
		replicas: &replicaService{router: r, limits: lim},
		audit:    &auditService{audit: log, limits: lim},
		kv:       &kvService{router: r, limits: lim, counters: &KVCounters{}},
	}
	for _, id := range []string{"a", "b"} {
		if _, err := f.replicas.RegisterReplica(context.Background(), &v1.RegisterReplicaRequest{Replica: &v1.Replica{Id: id, Model: "m"}}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// wantInvalid fails unless err is InvalidArgument naming field.
func wantInvalid(t *testing.T, err error, field string) {
	t.Helper()
	var ce *connect.Error
	if !errors.As(err, &ce) || ce.Code() != connect.CodeInvalidArgument {
		t.Fatalf("err = %v, want InvalidArgument", err)
	}
	if !strings.Contains(ce.Message(), field) {
		t.Fatalf("message %q does not name %q", ce.Message(), field)
	}
}

func okPick() *v1.PickReplicaRequest {
	return &v1.PickReplicaRequest{RequestId: "r", Model: "m", Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: make([]uint32, 40)}}}
}

func TestPickReplicaValidation(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*v1.PickReplicaRequest)
		field  string
	}{
		{"empty request id", func(r *v1.PickReplicaRequest) { r.RequestId = "" }, "request_id"},
		{"oversize request id", func(r *v1.PickReplicaRequest) { r.RequestId = strings.Repeat("x", 300) }, "request_id"},
		{"invalid utf8 session", func(r *v1.PickReplicaRequest) { r.SessionId = "\xff" }, "session_id"},
		{"empty model", func(r *v1.PickReplicaRequest) { r.Model = "" }, "model"},
		{"no prompt", func(r *v1.PickReplicaRequest) { r.Prompt = nil }, "prompt"},
		{"oversize token prompt", func(r *v1.PickReplicaRequest) {
			r.Prompt = &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: make([]uint32, 101)}}
		}, "token_ids"},
		{"oversize hash prompt", func(r *v1.PickReplicaRequest) {
			r.Prompt = &v1.PickReplicaRequest_BlockHashes{BlockHashes: &v1.BlockHashes{Hashes: make([]uint64, 101)}}
		}, "block_hashes"},
		{"oversize text", func(r *v1.PickReplicaRequest) {
			r.Prompt = &v1.PickReplicaRequest_Text{Text: strings.Repeat("a", 1001)}
		}, "text"},
		{"negative prompt tokens", func(r *v1.PickReplicaRequest) { r.PromptTokens = -1 }, "prompt_tokens"},
		{"oversize prompt tokens", func(r *v1.PickReplicaRequest) { r.PromptTokens = 101 }, "prompt_tokens"},
		{"duplicate candidates", func(r *v1.PickReplicaRequest) { r.Candidates = []string{"a", "b", "a"} }, "candidates"},
		{"empty candidate", func(r *v1.PickReplicaRequest) { r.Candidates = []string{""} }, "candidates"},
		{"too many candidates", func(r *v1.PickReplicaRequest) { r.Candidates = []string{"a", "b", "c", "d"} }, "candidates"},
		{"negative expected output", func(r *v1.PickReplicaRequest) {
			r.Hints = &v1.RequestHints{ExpectedOutputTokens: -5}
		}, "hints.expected_output_tokens"},
		{"unknown policy", func(r *v1.PickReplicaRequest) { r.Policy = "fastest_please" }, "fastest_please"},
		{"non-finite param", func(r *v1.PickReplicaRequest) {
			r.Policy = "token_load"
			r.PolicyParams = map[string]float64{"temperature": math.Inf(1)}
		}, "policy_params[temperature]"},
	}
	f := newFixture(t, Config{MaxPromptTokens: 100, MaxPromptTextBytes: 1000, MaxCandidates: 3})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := okPick()
			tc.mutate(req)
			_, err := f.rs.PickReplica(context.Background(), req)
			wantInvalid(t, err, tc.field)
			// Nothing was reserved or recorded.
			for _, st := range f.router.Replicas("m") {
				if st.Load.ActiveRequests != 0 {
					t.Fatalf("rejected pick left %d active requests on %s", st.Load.ActiveRequests, st.ID)
				}
			}
			if _, ok := f.rs.audit.Get(req.GetRequestId()); ok {
				t.Fatalf("rejected pick was recorded in the audit log")
			}
		})
	}
	if _, err := f.rs.PickReplica(context.Background(), okPick()); err != nil {
		t.Fatalf("valid pick after the rejected ones: %v", err)
	}
}

func TestLifecycleValidationRejectsWholeBatch(t *testing.T) {
	f := newFixture(t, Config{MaxBatchEvents: 3})
	if _, err := f.rs.PickReplica(context.Background(), okPick()); err != nil {
		t.Fatal(err)
	}
	done := &v1.LifecycleEvent{RequestId: "r", Event: &v1.LifecycleEvent_Done{Done: &v1.RequestDone{}}}
	cases := []struct {
		name  string
		bad   *v1.LifecycleEvent
		field string
	}{
		{"empty request id", &v1.LifecycleEvent{Event: done.Event}, "events[1].request_id"},
		{"unset event", &v1.LifecycleEvent{RequestId: "r"}, "events[1].event"},
		{"negative output", &v1.LifecycleEvent{RequestId: "r", Event: &v1.LifecycleEvent_Done{Done: &v1.RequestDone{OutputTokens: -1}}}, "events[1].done.output_tokens"},
		{"negative cached", &v1.LifecycleEvent{RequestId: "r", Event: &v1.LifecycleEvent_Admitted{Admitted: &v1.RequestAdmitted{CachedTokens: -3}}}, "events[1].admitted.cached_tokens"},
		{"negative progress", &v1.LifecycleEvent{RequestId: "r", Event: &v1.LifecycleEvent_Progress{Progress: &v1.RequestProgress{GeneratedTokens: -2}}}, "events[1].progress.generated_tokens"},
		{"unknown status", &v1.LifecycleEvent{RequestId: "r", Event: &v1.LifecycleEvent_Done{Done: &v1.RequestDone{Status: 42}}}, "events[1].done.status"},
		{"bad time", &v1.LifecycleEvent{RequestId: "r", Time: &timestamppb.Timestamp{Nanos: -1}, Event: done.Event}, "events[1].time"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.rs.ReportLifecycle(context.Background(), &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{done, tc.bad}})
			wantInvalid(t, err, tc.field)
			if active := totalActive(f.router); active != 1 {
				t.Fatalf("the valid done before the bad event was applied: %d active, want 1", active)
			}
		})
	}
	_, err := f.rs.ReportLifecycle(context.Background(), &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{done, done, done, done}})
	wantInvalid(t, err, "events")
	resp, err := f.rs.ReportLifecycle(context.Background(), &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{
		done, {RequestId: "ghost", ReplicaId: "nowhere", Event: done.Event},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c := resp.GetCounts(); c.GetApplied() != 1 || c.GetUnknownRequest()+c.GetUnknownReplica() < 1 {
		t.Fatalf("counts = %v, want 1 applied and the ghost counted", c)
	}
	if active := totalActive(f.router); active != 0 {
		t.Fatalf("%d active after done, want 0", active)
	}
}

func TestReplicaValidation(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	cases := []struct {
		name  string
		r     *v1.Replica
		field string
	}{
		{"missing replica", nil, "replica"},
		{"empty id", &v1.Replica{Model: "m"}, "replica.id"},
		{"empty model", &v1.Replica{Id: "x"}, "replica.model"},
		{"negative kv blocks", &v1.Replica{Id: "x", Model: "m", Capacity: &v1.ReplicaCapacity{KvBlocks: -1}}, "replica.capacity.kv_blocks"},
		{"negative batched tokens", &v1.Replica{Id: "x", Model: "m", Capacity: &v1.ReplicaCapacity{MaxBatchedTokens: -1}}, "replica.capacity.max_batched_tokens"},
		{"unknown state", &v1.Replica{Id: "x", Model: "m", State: 9}, "replica.state"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := f.replicas.RegisterReplica(ctx, &v1.RegisterReplicaRequest{Replica: tc.r})
			wantInvalid(t, err, tc.field)
			if _, err := f.router.Replica("x"); err == nil {
				t.Fatal("rejected registration stored replica x")
			}
		})
	}
	_, err := f.replicas.SetReplicaState(ctx, &v1.SetReplicaStateRequest{ReplicaId: "a"})
	wantInvalid(t, err, "state")
	for name, err := range map[string]error{
		"deregister": func() error {
			_, err := f.replicas.DeregisterReplica(ctx, &v1.DeregisterReplicaRequest{ReplicaId: "zz"})
			return err
		}(),
		"set state": func() error {
			_, err := f.replicas.SetReplicaState(ctx, &v1.SetReplicaStateRequest{ReplicaId: "zz", State: v1.ReplicaState_REPLICA_STATE_READY})
			return err
		}(),
		"get decision": func() error { _, err := f.audit.GetDecision(ctx, &v1.GetDecisionRequest{RequestId: "zz"}); return err }(),
	} {
		if connect.CodeOf(err) != connect.CodeNotFound {
			t.Errorf("%s of an unknown id: err = %v, want NotFound", name, err)
		}
	}
	_, err = f.audit.ListDecisions(ctx, &v1.ListDecisionsRequest{Limit: -1})
	wantInvalid(t, err, "limit")
}

func totalActive(r *scoring.Router) int {
	n := 0
	for _, st := range r.Replicas("") {
		n += st.Load.ActiveRequests
	}
	return n
}
