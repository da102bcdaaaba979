package index

import (
	"testing"
	"time"
)

func TestPredictions(t *testing.T) {
	h := HashTokens(nil, tABCD, 4, "")
	type step struct {
		do      func(ix *Index, clk *fakeClock)
		want    Overlap // Match of h for "r"
		wantLen int     // Stats.Predicted
	}
	predicted := func(n int) Overlap {
		o := dev(n)
		o.Predicted = n
		return o
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"predicted entries count as device until their TTL", []step{
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h[:3], 0) }, predicted(3), 3},
			{func(_ *Index, c *fakeClock) { c.Advance(2*time.Second - time.Millisecond) }, predicted(3), 3},
			{func(_ *Index, c *fakeClock) { c.Advance(time.Millisecond) }, Overlap{}, 0},
		}},
		{"an explicit TTL overrides the default", []step{
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h, 120*time.Second) }, predicted(4), 4},
			{func(_ *Index, c *fakeClock) { c.Advance(119 * time.Second) }, predicted(4), 4},
			{func(_ *Index, c *fakeClock) { c.Advance(time.Second) }, Overlap{}, 0},
		}},
		{"a prediction is extended, never shortened", []step{
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h[:2], 10*time.Second) }, predicted(2), 2},
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h[:2], time.Second) }, predicted(2), 2},
			{func(_ *Index, c *fakeClock) { c.Advance(5 * time.Second) }, predicted(2), 2},
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h[:1], 30*time.Second) }, predicted(2), 2},
			{func(_ *Index, c *fakeClock) { c.Advance(5 * time.Second) }, predicted(1), 1},
		}},
		{"a confirmed device block is never predicted", []step{
			{func(ix *Index, _ *fakeClock) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				ix.Predict("r", h, 0)
			}, Overlap{Device: 4, Prefix: 4, Tiers: [NumTiers]int{4, 0, 0}, Predicted: 2}, 2},
			{func(_ *Index, c *fakeClock) { c.Advance(3 * time.Second) }, dev(2), 0},
		}},
		{"confirmation replaces a prediction", []step{
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h[:2], 0) }, predicted(2), 2},
			{func(ix *Index, _ *fakeClock) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
			}, Overlap{Device: 2, Prefix: 2, Tiers: [NumTiers]int{2, 0, 0}, Predicted: 1}, 1},
			{func(_ *Index, c *fakeClock) { c.Advance(time.Hour) }, dev(1), 0},
		}},
		{"a host copy plus a prediction is device but not only-predicted", []step{
			{func(ix *Index, _ *fakeClock) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA, Tier: TierHost}))
				ix.Predict("r", h[:1], 0)
			}, dev(1), 1},
			{func(ix *Index, _ *fakeClock) {
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{1}, Tier: TierDevice}))
			}, Overlap{Prefix: 1, Tiers: [NumTiers]int{0, 1, 0}}, 0},
		}},
		{"predictions of another replica do not leak", []step{
			{func(ix *Index, _ *fakeClock) { ix.Predict("s", h, 0) }, Overlap{}, 4},
		}},
		{"clear and remove replica drop predictions", []step{
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h, 0); ix.Clear("r", 0) }, Overlap{}, 0},
			{func(ix *Index, _ *fakeClock) { ix.Predict("r", h, 0); ix.RemoveReplica("r") }, Overlap{}, 0},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := newFakeClock()
			ix := New(Config{BlockSize: 4, Now: clk.Now})
			for i, s := range tc.steps {
				s.do(ix, clk)
				if got := ix.Match(h, []string{"r"}, nil)[0]; got != s.want {
					t.Errorf("step %d: match %+v, want %+v", i, got, s.want)
				}
				if got := ix.Stats().Predicted; got != s.wantLen {
					t.Errorf("step %d: %d predicted, want %d", i, got, s.wantLen)
				}
			}
		})
	}
}

// TestExpiryIsLazyAndBounded checks that Match ignores expired predictions at
// once while the sweep removes at most sweepBudget(n) of them per write of n
// blocks.
func TestExpiryIsLazyAndBounded(t *testing.T) {
	clk := newFakeClock()
	ix := New(Config{Now: clk.Now, PredictedTTL: time.Second})
	hs := make([]uint64, 500)
	for i := range hs {
		hs[i] = uint64(i + 1)
	}
	ix.Predict("r", hs, 0)
	clk.Advance(time.Second)
	if got := ix.Match(hs, []string{"r"}, nil)[0]; got != (Overlap{}) {
		t.Fatalf("expired predictions matched: %+v", got)
	}
	ix.Predict("s", []uint64{9999}, 0) // one write
	ix.mu.Lock()
	left, preds := ix.expiry.keys, ix.counts.preds
	ix.mu.Unlock()
	if want := 500 + 1 - sweepBudget(1); left != want || preds != want {
		t.Fatalf("after one write: %d queued, %d counted; want %d", left, preds, want)
	}
	st := ix.Stats()
	if st.Predicted != 1 || st.Expired != 500 || st.Blocks != 1 {
		t.Fatalf("stats after full sweep: %+v", st)
	}
}
