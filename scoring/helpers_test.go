package scoring

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock shared by the router and its indexes.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// newTestRouter returns a router with a fake clock, a fixed seed and n ready replicas
// "r0".."r{n-1}" of model "m".
func newTestRouter(t testing.TB, n int, cfg Config) (*Router, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	if cfg.Now == nil {
		cfg.Now = clk.Now
	}
	if cfg.Seed == 0 {
		cfg.Seed = 42
	}
	r, err := NewRouter(cfg)
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	t.Cleanup(r.Close)
	for i := 0; i < n; i++ {
		if _, err := r.Register(context.Background(), Replica{ID: fmt.Sprintf("r%d", i), Model: "m"}); err != nil {
			t.Fatalf("Register: %v", err)
		}
	}
	return r, clk
}

// tokens returns n deterministic token ids: a shared prefix of `shared` tokens (same for every
// seed) followed by tokens specific to seed.
func tokens(seed, shared, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		if i < shared {
			out[i] = uint32(1000 + i)
		} else {
			out[i] = uint32(seed*100_003 + i*7 + 1)
		}
	}
	return out
}

func mustPick(t testing.TB, r *Router, req PickRequest) *Decision {
	t.Helper()
	if req.Model == "" {
		req.Model = "m"
	}
	d, err := r.Pick(context.Background(), req)
	if err != nil {
		t.Fatalf("Pick(%s): %v", req.RequestID, err)
	}
	return d
}

func load(t testing.TB, r *Router, id string) Load {
	t.Helper()
	st, err := r.Replica(id)
	if err != nil {
		t.Fatalf("Replica(%s): %v", id, err)
	}
	return st.Load
}

// totalLoad sums every replica's load.
func totalLoad(r *Router) Load {
	var l Load
	for _, st := range r.Replicas("") {
		l.PrefillTokens += st.Load.PrefillTokens
		l.DecodeBlocks += st.Load.DecodeBlocks
		l.ActiveRequests += st.Load.ActiveRequests
	}
	return l
}

func event(id string, k EventKind) LifecycleEvent { return LifecycleEvent{RequestID: id, Kind: k} }
