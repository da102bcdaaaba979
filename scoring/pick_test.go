package scoring

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestPickValidation(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{})
	ok := Prompt{Tokens: tokens(1, 0, 32)}
	tests := []struct {
		name string
		req  PickRequest
		want error
	}{
		{"no model", PickRequest{RequestID: "a", Prompt: ok}, ErrInvalid},
		{"no request id", PickRequest{Model: "m", Prompt: ok}, ErrInvalid},
		{"no prompt", PickRequest{RequestID: "a", Model: "m"}, ErrInvalid},
		{"two prompts", PickRequest{RequestID: "a", Model: "m", Prompt: Prompt{Tokens: []uint32{1}, Text: "x"}}, ErrInvalid},
		{"negative prompt tokens", PickRequest{RequestID: "a", Model: "m", Prompt: Prompt{Text: "x"}, PromptTokens: -1}, ErrInvalid},
		{"prompt tokens disagree", PickRequest{RequestID: "a", Model: "m", Prompt: ok, PromptTokens: 5}, ErrInvalid},
		{"negative output hint", PickRequest{RequestID: "a", Model: "m", Prompt: ok, ExpectedOutputTokens: -1}, ErrInvalid},
		{"empty candidate", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Candidates: []string{""}}, ErrInvalid},
		{"repeated candidate", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Candidates: []string{"r0", "r0"}}, ErrInvalid},
		{"unknown policy", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Policy: "nope"}, ErrUnknownPolicy},
		{"unknown param", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Params: map[string]float64{"nope": 1}}, ErrInvalid},
		{"param out of range", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Params: map[string]float64{"temperature": -1}}, ErrInvalid},
		{"param on paramless policy", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Policy: "random", Params: map[string]float64{"x": 1}}, ErrInvalid},
		{"unknown model", PickRequest{RequestID: "a", Model: "zz", Prompt: ok}, ErrUnknownModel},
		{"no eligible", PickRequest{RequestID: "a", Model: "m", Prompt: ok, Candidates: []string{"ghost"}}, ErrNoReplica},
		{"dry run without id", PickRequest{Model: "m", Prompt: ok, DryRun: true}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Pick(context.Background(), tc.req)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if l := totalLoad(r); l != (Load{}) {
		t.Fatalf("failed picks left load %+v", l)
	}
}

func TestPickDecisionListsEveryCandidate(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{})
	ctx := context.Background()
	if _, err := r.Register(ctx, Replica{ID: "other", Model: "n"}); err != nil {
		t.Fatal(err)
	}
	if err := r.SetState(ctx, "r1", StateDraining); err != nil {
		t.Fatal(err)
	}
	d := mustPick(t, r, PickRequest{RequestID: "a", Prompt: Prompt{Tokens: tokens(1, 0, 64)},
		Candidates: []string{"ghost", "r1", "other", "r2", "r0"}, Policy: PolicyLeastRequests})
	want := map[string]string{"ghost": IneligibleNotRegistered, "r1": IneligibleDraining, "other": IneligibleWrongModel, "r2": "", "r0": ""}
	if len(d.Candidates) != len(want) {
		t.Fatalf("%d candidates, want %d", len(d.Candidates), len(want))
	}
	ranks := 0
	for i, c := range d.Candidates {
		if c.ReplicaID != []string{"ghost", "r1", "other", "r2", "r0"}[i] {
			t.Fatalf("candidate %d is %s: order not kept", i, c.ReplicaID)
		}
		if c.Ineligible != want[c.ReplicaID] {
			t.Fatalf("%s ineligible %q, want %q", c.ReplicaID, c.Ineligible, want[c.ReplicaID])
		}
		if (c.Rank == 0) != (c.Ineligible != "") {
			t.Fatalf("%s rank %d with ineligible %q", c.ReplicaID, c.Rank, c.Ineligible)
		}
		ranks += c.Rank
	}
	if ranks != 1+2 || len(d.Fallbacks) != 1 || d.Fallbacks[0] == d.ReplicaID {
		t.Fatalf("ranks sum %d, fallbacks %v, chosen %s", ranks, d.Fallbacks, d.ReplicaID)
	}
	if d.Policy != PolicyLeastRequests || d.PromptTokens != 64 || d.DecisionID == "" || d.Time.IsZero() {
		t.Fatalf("decision header %+v", d)
	}
}

func TestPickIdempotentWhileLive(t *testing.T) {
	r, _ := newTestRouter(t, 4, Config{})
	req := PickRequest{RequestID: "a", Prompt: Prompt{Tokens: tokens(1, 0, 64)}, Policy: PolicyRandom}
	d1 := mustPick(t, r, req)
	for i := 0; i < 10; i++ {
		if d := mustPick(t, r, req); d != d1 {
			t.Fatalf("retry %d returned a new decision (%s vs %s)", i, d.ReplicaID, d1.ReplicaID)
		}
	}
	if got := totalLoad(r).ActiveRequests; got != 1 {
		t.Fatalf("retries booked %d requests", got)
	}
	req.Model = "other"
	if _, err := r.Register(context.Background(), Replica{ID: "o", Model: "other"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Pick(context.Background(), req); !errors.Is(err, ErrConflict) {
		t.Fatalf("live id reused for another model: %v", err)
	}
	r.ApplyLifecycle(context.Background(), []LifecycleEvent{event("a", EventDone)})
	req.Model = "m"
	if d := mustPick(t, r, req); d == d1 || d.DecisionID == d1.DecisionID {
		t.Fatal("a finished request id must get a new decision")
	}
	if c := r.Counters(); c.Replays != 10 || c.Picks != 2 {
		t.Fatalf("counters %+v", c)
	}
}

func TestDryRunReservesNothing(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{})
	p := Prompt{Tokens: tokens(1, 0, 256)}
	d := mustPick(t, r, PickRequest{RequestID: "a", Prompt: p, DryRun: true})
	if !d.DryRun || d.ReplicaID == "" {
		t.Fatalf("dry run decision %+v", d)
	}
	if l := totalLoad(r); l != (Load{}) {
		t.Fatalf("dry run booked %+v", l)
	}
	d2 := mustPick(t, r, PickRequest{RequestID: "a", Prompt: p, DryRun: true})
	if d2 == d {
		t.Fatal("dry runs are not idempotent records")
	}
	for _, c := range d2.Candidates {
		if c.Overlap.Prefix != 0 {
			t.Fatalf("dry run left predicted entries: %+v", c.Overlap)
		}
	}
	if c := r.Counters(); c.DryRuns != 2 || c.Picks != 0 {
		t.Fatalf("counters %+v", c)
	}
}

func TestPredictOnRoute(t *testing.T) {
	r, clk := newTestRouter(t, 4, Config{})
	p := Prompt{Tokens: tokens(1, 0, 256)}
	d := mustPick(t, r, PickRequest{RequestID: "a", Prompt: p})
	sib := mustPick(t, r, PickRequest{RequestID: "b", Prompt: p, DryRun: true})
	for _, c := range sib.Candidates {
		want := 0
		if c.ReplicaID == d.ReplicaID {
			want = 16
		}
		if c.Overlap.Prefix != want || (want > 0 && c.CachedTokens != 256) {
			t.Fatalf("sibling sees %s overlap %+v cached %d, want %d blocks", c.ReplicaID, c.Overlap, c.CachedTokens, want)
		}
	}
	clk.Advance(3 * time.Second) // token predictions live 2 s
	late := mustPick(t, r, PickRequest{RequestID: "c", Prompt: p, DryRun: true})
	for _, c := range late.Candidates {
		if c.Overlap.Prefix != 0 {
			t.Fatalf("prediction outlived its TTL: %+v", c)
		}
	}
	text := Prompt{Text: string(make([]byte, 640))}
	dt := mustPick(t, r, PickRequest{RequestID: "t", Prompt: text})
	clk.Advance(100 * time.Second) // text predictions live 120 s
	st := mustPick(t, r, PickRequest{RequestID: "t2", Prompt: text, DryRun: true})
	for _, c := range st.Candidates {
		if c.ReplicaID == dt.ReplicaID && c.Overlap.Prefix != 10 {
			t.Fatalf("text prediction: %+v", c)
		}
	}
}

func TestPolicySelection(t *testing.T) {
	cfg := Config{
		DefaultPolicy: PolicyLeastRequests,
		ModelPolicies: map[string]string{"m": PolicyRoundRobin},
		PolicyParams:  map[string]map[string]float64{PolicyTokenLoad: {"temperature": 0.5}},
	}
	r, _ := newTestRouter(t, 2, cfg)
	if _, err := r.Register(context.Background(), Replica{ID: "n0", Model: "n"}); err != nil {
		t.Fatal(err)
	}
	p := Prompt{Text: "hi"}
	tests := []struct {
		req  PickRequest
		want string
	}{
		{PickRequest{Model: "m", Prompt: p, DryRun: true}, PolicyRoundRobin},
		{PickRequest{Model: "n", Prompt: p, DryRun: true}, PolicyLeastRequests},
		{PickRequest{Model: "m", Prompt: p, DryRun: true, Policy: PolicyKVAffinity}, PolicyKVAffinity},
	}
	for _, tc := range tests {
		if d := mustPick(t, r, tc.req); d.Policy != tc.want {
			t.Fatalf("model %s policy %q: used %s, want %s", tc.req.Model, tc.req.Policy, d.Policy, tc.want)
		}
	}
	pol, err := r.Policy(PolicyTokenLoad)
	if err != nil || pol.Params()["temperature"] != 0.5 || pol.Params()["prefill_load_scale"] != 1 {
		t.Fatalf("server-level params not applied: %v %v", err, pol.Params())
	}
	bad := []Config{
		{DefaultPolicy: "nope"},
		{ModelPolicies: map[string]string{"m": "nope"}},
		{PolicyParams: map[string]map[string]float64{"nope": {}}},
		{PolicyParams: map[string]map[string]float64{PolicyTokenLoad: {"temperature": 1e9}}},
		{BlockSize: -1},
	}
	for i, c := range bad {
		if _, err := NewRouter(c); err == nil {
			t.Fatalf("bad config %d accepted", i)
		}
	}
}
