package scoring

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// finish picks and completes a request of session with the given output length and status.
func finish(t testing.TB, r *Router, id, session string, output int, status string) {
	t.Helper()
	mustPick(t, r, PickRequest{RequestID: id, SessionID: session, Prompt: Prompt{Text: "x"}})
	r.ApplyLifecycle(context.Background(), []LifecycleEvent{{RequestID: id, Kind: EventDone, OutputTokens: output, Status: status}})
}

func TestOutputEstimateLearnsPerSessionAndModel(t *testing.T) {
	off := false
	tests := []struct {
		name       string
		cfg        Config
		session    string
		hint       int
		wantSource string
		wantTokens int
	}{
		{"session history", Config{}, "s1", 0, "session", 1000},
		{"model history for a new session", Config{}, "new", 0, "model", 200 + 8*100},
		{"hint wins", Config{}, "s1", 77, "hint", 77},
		{"learning off", Config{OutputEstimate: &off}, "s1", 0, "", 0},
		{"learning off keeps hints", Config{OutputEstimate: &off}, "s1", 5, "hint", 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRouter(t, 2, tc.cfg)
			finish(t, r, "s1-a", "s1", 1000, "ok")
			finish(t, r, "s1-err", "s1", 5, "error") // failures are not learned
			for i := 0; i < 8; i++ {
				finish(t, r, fmt.Sprint("m", i), "", 200+i*200, "ok")
			}
			d := mustPick(t, r, PickRequest{RequestID: "q", SessionID: tc.session, Prompt: Prompt{Text: "x"}, ExpectedOutputTokens: tc.hint})
			if d.OutputSource != tc.wantSource {
				t.Fatalf("source %q, want %q", d.OutputSource, tc.wantSource)
			}
			if tc.wantSource == "model" {
				st, ok := r.OutputEstimate("m", "")
				if !ok || d.ExpectedOutputTokens != int(st.Mean+0.5) || st.Samples != 9 {
					t.Fatalf("model estimate %+v used %d", st, d.ExpectedOutputTokens)
				}
				return
			}
			if d.ExpectedOutputTokens != tc.wantTokens {
				t.Fatalf("expected output %d, want %d", d.ExpectedOutputTokens, tc.wantTokens)
			}
		})
	}
}

// TestOutputStatsConverge: the EWMA tracks the mean and the streaming quantile settles near
// the 90th percentile of a skewed (exponential) length distribution.
func TestOutputStatsConverge(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	var s OutputStats
	const mean = 500.0
	for i := 0; i < 20000; i++ {
		s.observe(math.Round(rnd.ExpFloat64() * mean))
	}
	p90 := -math.Log(0.1) * mean // 1151
	if math.Abs(s.Mean-mean)/mean > 0.35 || math.Abs(s.P90-p90)/p90 > 0.25 {
		t.Fatalf("mean %.0f (want ~%.0f), p90 %.0f (want ~%.0f)", s.Mean, mean, s.P90, p90)
	}
}

func TestSessionEstimatesAreBounded(t *testing.T) {
	r, _ := newTestRouter(t, 1, Config{MaxSessions: 3})
	for i := 0; i < 5; i++ {
		finish(t, r, fmt.Sprint(i), fmt.Sprint("s", i), 100, "ok")
	}
	if _, ok := r.OutputEstimate("m", "s0"); ok {
		t.Fatal("oldest session kept beyond the bound")
	}
	if _, ok := r.OutputEstimate("m", "s4"); !ok {
		t.Fatal("newest session dropped")
	}
	if c := r.Counters(); c.SessionsDropped != 2 {
		t.Fatalf("dropped %d, want 2", c.SessionsDropped)
	}
}
