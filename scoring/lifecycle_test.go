package scoring

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestLifecycleLoadTerms(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{})
	ctx := context.Background()
	d := mustPick(t, r, PickRequest{RequestID: "a", Prompt: Prompt{Tokens: tokens(1, 0, 100)}, Candidates: []string{"r0"}})
	steps := []struct {
		name string
		ev   LifecycleEvent
		want Load
	}{
		// 100 tokens = 7 blocks of 16 (the partial one included).
		{"reserved", LifecycleEvent{}, Load{PrefillTokens: 100, DecodeBlocks: 7, ActiveRequests: 1}},
		{"admitted corrects cached", LifecycleEvent{RequestID: "a", Kind: EventAdmitted, CachedTokens: 32}, Load{PrefillTokens: 68, DecodeBlocks: 7, ActiveRequests: 1}},
		{"first token ends prefill", event("a", EventFirstToken), Load{DecodeBlocks: 7, ActiveRequests: 1}},
		{"progress grows output", LifecycleEvent{RequestID: "a", Kind: EventProgress, GeneratedTokens: 20}, Load{DecodeBlocks: 9, ActiveRequests: 1}},
		{"older progress is stale", LifecycleEvent{RequestID: "a", Kind: EventProgress, GeneratedTokens: 5}, Load{DecodeBlocks: 9, ActiveRequests: 1}},
		{"done frees", LifecycleEvent{RequestID: "a", Kind: EventDone, OutputTokens: 20, Status: "ok"}, Load{}},
	}
	for _, s := range steps {
		if s.ev.Kind != 0 {
			r.ApplyLifecycle(ctx, []LifecycleEvent{s.ev})
		}
		if got := load(t, r, d.ReplicaID); got != s.want {
			t.Fatalf("%s: load %+v, want %+v", s.name, got, s.want)
		}
	}
	c := r.Counters()
	if c.StaleLifecycle != 1 || c.Picks != 1 {
		t.Fatalf("counters %+v", c)
	}
}

func TestLifecycleSharedPromptCountedOnce(t *testing.T) {
	r, _ := newTestRouter(t, 1, Config{})
	prompt := tokens(0, 256, 256) // 16 blocks, identical for both requests
	mustPick(t, r, PickRequest{RequestID: "a", Prompt: Prompt{Tokens: prompt}})
	if got := load(t, r, "r0").DecodeBlocks; got != 16 {
		t.Fatalf("one request: %d blocks, want 16", got)
	}
	mustPick(t, r, PickRequest{RequestID: "b", Prompt: Prompt{Tokens: prompt}})
	if got := load(t, r, "r0").DecodeBlocks; got != 16 {
		t.Fatalf("two requests sharing the prompt: %d blocks, want 16", got)
	}
	longer := append(append([]uint32(nil), prompt...), tokens(9, 0, 128)...) // 8 more blocks
	mustPick(t, r, PickRequest{RequestID: "c", Prompt: Prompt{Tokens: longer}})
	if got := load(t, r, "r0").DecodeBlocks; got != 24 {
		t.Fatalf("extension of the shared prompt: %d blocks, want 24", got)
	}
	r.ApplyLifecycle(context.Background(), []LifecycleEvent{event("a", EventDone), event("c", EventDone)})
	if got := load(t, r, "r0").DecodeBlocks; got != 16 {
		t.Fatalf("after two done: %d blocks, want 16 still held by b", got)
	}
	r.ApplyLifecycle(context.Background(), []LifecycleEvent{event("b", EventDone)})
	if got := load(t, r, "r0"); got != (Load{}) {
		t.Fatalf("all done: %+v", got)
	}
}

func TestAdmittedCorrectsReplica(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{})
	mustPick(t, r, PickRequest{RequestID: "a", Prompt: Prompt{Tokens: tokens(1, 0, 64)}, Candidates: []string{"r0"}})
	res := r.ApplyLifecycle(context.Background(), []LifecycleEvent{
		{RequestID: "a", ReplicaID: "r1", Kind: EventAdmitted},
		{RequestID: "a", ReplicaID: "ghost", Kind: EventFirstToken},
	})
	if res.Applied != 1 || res.UnknownReplica != 1 {
		t.Fatalf("result %+v", res)
	}
	if l := load(t, r, "r0"); l != (Load{}) {
		t.Fatalf("old replica keeps %+v", l)
	}
	if l := load(t, r, "r1"); l != (Load{PrefillTokens: 64, DecodeBlocks: 4, ActiveRequests: 1}) {
		t.Fatalf("new replica has %+v", l)
	}
	if c := r.Counters(); c.Moved != 1 || c.UnknownReplica != 1 {
		t.Fatalf("counters %+v", c)
	}
}

func TestLifecycleUnknownAndInvalid(t *testing.T) {
	r, _ := newTestRouter(t, 1, Config{})
	res := r.ApplyLifecycle(context.Background(), []LifecycleEvent{
		event("never-picked", EventDone),
		{Kind: EventAdmitted},
		{RequestID: "x", Kind: 99},
		{RequestID: "x", Kind: EventProgress, GeneratedTokens: -1},
	})
	want := LifecycleResult{UnknownRequest: 1, Invalid: 3}
	if res != want {
		t.Fatalf("result %+v, want %+v", res, want)
	}
	if c := r.Counters(); c.UnknownLifecycle != 1 || c.InvalidLifecycle != 3 {
		t.Fatalf("counters %+v", c)
	}
}

// TestLifecycleEveryOrdering applies the four events in each of their 24 orders, each event
// possibly duplicated, and checks that the replica ends with zero load and never clamps.
func TestLifecycleEveryOrdering(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{})
	ctx := context.Background()
	kinds := []EventKind{EventAdmitted, EventFirstToken, EventProgress, EventDone}
	for pi, perm := range permutations(kinds) {
		for dup := 0; dup < 2; dup++ {
			id := fmt.Sprintf("q%d-%d", pi, dup)
			mustPick(t, r, PickRequest{RequestID: id, Prompt: Prompt{Tokens: tokens(pi, 32, 200)}})
			for _, k := range perm {
				ev := LifecycleEvent{RequestID: id, Kind: k, CachedTokens: 16, GeneratedTokens: 40, OutputTokens: 40}
				n := 1 + dup
				for i := 0; i < n; i++ {
					r.ApplyLifecycle(ctx, []LifecycleEvent{ev})
				}
			}
			if l := totalLoad(r); l != (Load{}) {
				t.Fatalf("order %v (dup %d) left load %+v", perm, dup, l)
			}
		}
	}
	if c := r.Counters(); c.Clamped != 0 {
		t.Fatalf("clamped %d times", c.Clamped)
	}
}

// TestLoadsNeverNegative is a property test: random interleavings of picks, lifecycle events
// (including duplicates, replica corrections, unknown ids) and expiry over several requests keep
// every load term non-negative, and freeing everything returns to zero.
func TestLoadsNeverNegative(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		r, clk := newTestRouter(t, 3, Config{RequestExpiry: time.Minute, Seed: seed})
		rnd := rand.New(rand.NewPCG(seed, 7))
		ctx := context.Background()
		live := map[string]bool{}
		for step := 0; step < 400; step++ {
			id := fmt.Sprintf("q%d", rnd.IntN(30))
			switch x := rnd.IntN(10); {
			case x < 3:
				_, _ = r.Pick(ctx, PickRequest{RequestID: id, Model: "m", Prompt: Prompt{Tokens: tokens(rnd.IntN(4), 64, 64+rnd.IntN(300))},
					ExpectedOutputTokens: rnd.IntN(2) * 100})
				live[id] = true
			case x < 9:
				ev := LifecycleEvent{RequestID: id, Kind: EventKind(1 + rnd.IntN(4)), CachedTokens: rnd.IntN(100),
					PromptTokens: rnd.IntN(2) * rnd.IntN(400), GeneratedTokens: rnd.IntN(200), OutputTokens: rnd.IntN(200)}
				if rnd.IntN(5) == 0 {
					ev.ReplicaID = fmt.Sprintf("r%d", rnd.IntN(4)) // r3 does not exist
				}
				r.ApplyLifecycle(ctx, []LifecycleEvent{ev})
			default:
				clk.Advance(time.Duration(rnd.IntN(30)) * time.Second)
			}
			for _, st := range r.Replicas("") {
				if st.Load.PrefillTokens < 0 || st.Load.DecodeBlocks < 0 || st.Load.ActiveRequests < 0 {
					t.Fatalf("seed %d step %d: negative load %+v", seed, step, st.Load)
				}
			}
		}
		for id := range live {
			r.ApplyLifecycle(ctx, []LifecycleEvent{event(id, EventDone)})
		}
		if l := totalLoad(r); l != (Load{}) {
			t.Fatalf("seed %d: all done, load %+v", seed, l)
		}
		if c := r.Counters(); c.Clamped != 0 {
			t.Fatalf("seed %d: clamped %d times", seed, c.Clamped)
		}
	}
}

func TestExpiryFreesIdleRequests(t *testing.T) {
	tests := []struct {
		name   string
		expiry time.Duration
	}{
		{"default 300s", 0},
		{"configured 10s", 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, clk := newTestRouter(t, 1, Config{RequestExpiry: tc.expiry})
			want := tc.expiry
			if want == 0 {
				want = DefaultRequestExpiry
			}
			ctx := context.Background()
			mustPick(t, r, PickRequest{RequestID: "idle", Prompt: Prompt{Tokens: tokens(1, 0, 64)}})
			mustPick(t, r, PickRequest{RequestID: "busy", Prompt: Prompt{Tokens: tokens(2, 0, 64)}})
			clk.Advance(want - time.Second)
			r.ApplyLifecycle(ctx, []LifecycleEvent{event("busy", EventFirstToken)}) // an event renews busy
			if got := load(t, r, "r0").ActiveRequests; got != 2 {
				t.Fatalf("before expiry: %d active", got)
			}
			clk.Advance(time.Second)
			if got := load(t, r, "r0").ActiveRequests; got != 1 {
				t.Fatalf("at expiry: %d active, want only busy", got)
			}
			if res := r.ApplyLifecycle(ctx, []LifecycleEvent{event("idle", EventDone)}); res.UnknownRequest != 1 {
				t.Fatalf("event for expired request: %+v", res)
			}
			clk.Advance(want)
			if n := r.Sweep(); n != 1 {
				t.Fatalf("Sweep freed %d, want 1", n)
			}
			if c := r.Counters(); c.Expired != 2 {
				t.Fatalf("expired counter %d", c.Expired)
			}
			if l := totalLoad(r); l != (Load{}) {
				t.Fatalf("after expiry: %+v", l)
			}
		})
	}
}

func permutations(xs []EventKind) [][]EventKind {
	if len(xs) <= 1 {
		return [][]EventKind{append([]EventKind(nil), xs...)}
	}
	var out [][]EventKind
	for i := range xs {
		rest := append(append([]EventKind(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]EventKind{xs[i]}, p...))
		}
	}
	return out
}
