package scoring

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/switchyard-llm/switchyard/index"
)

// storeOn reports toks (a multiple of the block size) as cached on replica through the KV
// event path, with made-up engine hashes.
func storeOn(t testing.TB, r *Router, replica string, toks []uint32, tier index.Tier) {
	t.Helper()
	n := len(toks) / index.DefaultBlockSize
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = uint64(len(replica))<<56 | uint64(toks[0])<<20 | uint64(i+1)
	}
	if err := r.ApplyStored(replica, 0, index.Stored{BlockHashes: hs, TokenIDs: toks[:n*index.DefaultBlockSize], Tier: tier}); err != nil {
		t.Fatalf("ApplyStored(%s): %v", replica, err)
	}
}

// decodeOn books a request of promptLen tokens on replica, past its first token, with
// generated output tokens, so that it holds decode blocks and no prefill.
func decodeOn(t testing.TB, r *Router, id, replica string, promptLen, generated, hint int) {
	t.Helper()
	mustPick(t, r, PickRequest{RequestID: id, Prompt: Prompt{Tokens: tokens(len(id)*31+promptLen, 0, promptLen)},
		Candidates: []string{replica}, ExpectedOutputTokens: hint})
	r.ApplyLifecycle(context.Background(), []LifecycleEvent{
		event(id, EventFirstToken),
		{RequestID: id, Kind: EventProgress, GeneratedTokens: generated},
	})
}

func candidate(t testing.TB, d *Decision, id string) CandidateScore {
	t.Helper()
	for _, c := range d.Candidates {
		if c.ReplicaID == id {
			return c
		}
	}
	t.Fatalf("no candidate %s in decision", id)
	return CandidateScore{}
}

// TestTokenLoadTradesPrefixAgainstDecode: the replica holding the prefix wins while its decode
// load is light, and loses once an active long decode outweighs the prefill it would save.
func TestTokenLoadTradesPrefixAgainstDecode(t *testing.T) {
	prefix := tokens(0, 2048, 2048) // 128 blocks, cached on r0
	tests := []struct {
		name      string
		generated int // output tokens of r0's active request
		want      string
	}{
		{"light decode: stay on prefix", 100, "r0"},
		{"long decode: move away", 8192, "r1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRouter(t, 2, Config{})
			storeOn(t, r, "r0", prefix, index.TierDevice)
			decodeOn(t, r, "busy", "r0", 512, tc.generated, 0)
			d := mustPick(t, r, PickRequest{RequestID: "new", Prompt: Prompt{Tokens: prefix}, DryRun: true})
			if d.ReplicaID != tc.want {
				t.Fatalf("chose %s, want %s; candidates %+v", d.ReplicaID, tc.want, d.Candidates)
			}
			c0 := candidate(t, d, "r0")
			if c0.Overlap.Device != 128 || c0.CachedTokens != 2048 {
				t.Fatalf("r0 overlap %+v cached %d", c0.Overlap, c0.CachedTokens)
			}
			// The reported cost is the documented formula over the reported terms.
			for _, c := range d.Candidates {
				credit := float64(c.Overlap.Tiers[index.TierDevice]) + 0.75*float64(c.Overlap.Tiers[index.TierHost]) + 0.25*float64(c.Overlap.Tiers[index.TierDisk])
				want := math.Max(0, float64(c.PrefillTokens+2048)/16-credit) + c.DecodeBlocks + c.NewBlocks
				if math.Abs(c.Cost-want) > 1e-9 {
					t.Fatalf("%s cost %v, formula gives %v", c.ReplicaID, c.Cost, want)
				}
			}
		})
	}
}

// TestTokenLoadTierCredits: a prefix on host memory earns less credit than on device, so with
// equal loads the device copy wins, and host beats disk.
func TestTokenLoadTierCredits(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{})
	prefix := tokens(0, 1024, 1024)
	storeOn(t, r, "r0", prefix, index.TierDisk)
	storeOn(t, r, "r1", prefix, index.TierHost)
	storeOn(t, r, "r2", prefix, index.TierDevice)
	d := mustPick(t, r, PickRequest{RequestID: "a", Prompt: Prompt{Tokens: prefix}, DryRun: true})
	order := []string{d.ReplicaID}
	order = append(order, d.Fallbacks...)
	if fmt.Sprint(order) != "[r2 r1 r0]" {
		t.Fatalf("rank %v, want device > host > disk", order)
	}
	// Per-request credits: make disk hits worth as much as device ones.
	d = mustPick(t, r, PickRequest{RequestID: "b", Prompt: Prompt{Tokens: prefix}, DryRun: true,
		Params: map[string]float64{"disk_hit_weight": 1, "host_hit_weight": 0}})
	if c0, c2 := candidate(t, d, "r0"), candidate(t, d, "r2"); c0.Cost != c2.Cost || candidate(t, d, "r1").Cost <= c0.Cost {
		t.Fatalf("overridden credits: %+v", d.Candidates)
	}
}

// TestTokenLoadTemperature checks softmax sampling against its distribution with a chi-square
// test (fixed seed, so the outcome is reproducible), and that temperature 0 is the argmin.
func TestTokenLoadTemperature(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{Seed: 3})
	decodeOn(t, r, "a", "r1", 16, 160, 0) // r1 holds 11 blocks
	decodeOn(t, r, "b", "r2", 16, 320, 0) // r2 holds 21 blocks
	p := Prompt{Tokens: tokens(5, 0, 16)}
	const temp = 0.5
	first := mustPick(t, r, PickRequest{Prompt: p, DryRun: true, Params: map[string]float64{"temperature": temp}})
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range first.Candidates {
		lo, hi = math.Min(lo, c.Cost), math.Max(hi, c.Cost)
	}
	want := map[string]float64{}
	var z float64
	for _, c := range first.Candidates {
		w := math.Exp(-((c.Cost - lo) / (hi - lo)) / temp)
		want[c.ReplicaID] = w
		z += w
	}
	const n = 20000
	got := map[string]int{}
	for i := 0; i < n; i++ {
		d := mustPick(t, r, PickRequest{Prompt: p, DryRun: true, Params: map[string]float64{"temperature": temp}})
		got[d.ReplicaID]++
	}
	chi2 := 0.0
	for id, w := range want {
		exp := n * w / z
		chi2 += (float64(got[id]) - exp) * (float64(got[id]) - exp) / exp
	}
	if chi2 > 13.8 { // 2 degrees of freedom, p = 0.001
		t.Fatalf("chi2 %.1f: got %v, want proportions %v / %v", chi2, got, want, z)
	}
	for i := 0; i < 200; i++ {
		if d := mustPick(t, r, PickRequest{Prompt: p, DryRun: true}); d.ReplicaID != "r0" {
			t.Fatalf("temperature 0 chose %s, not the argmin r0", d.ReplicaID)
		}
	}
}

// TestTokenLoadOutputAwareness: a replica whose active request is expected to decode long is
// avoided when output_weight > 0, although it holds fewer blocks now; output_weight 0 counts
// only what is held. The projection decays as the request generates.
func TestTokenLoadOutputAwareness(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{})
	decodeOn(t, r, "straggler", "r0", 16, 16, 8016) // holds 2 blocks, expects 8000 more tokens
	decodeOn(t, r, "steady", "r1", 16, 1600, 0)     // holds 101 blocks, nothing expected
	p := Prompt{Tokens: tokens(9, 0, 16)}
	aware := mustPick(t, r, PickRequest{Prompt: p, DryRun: true})
	blind := mustPick(t, r, PickRequest{Prompt: p, DryRun: true, Params: map[string]float64{"output_weight": 0}})
	if aware.ReplicaID != "r1" || blind.ReplicaID != "r0" {
		t.Fatalf("aware chose %s (want r1), blind chose %s (want r0)", aware.ReplicaID, blind.ReplicaID)
	}
	if c := candidate(t, aware, "r0"); c.HeldBlocks != 2 || c.DecodeBlocks != 2+8000.0/16 {
		t.Fatalf("projection %+v", c)
	}
	r.ApplyLifecycle(context.Background(), []LifecycleEvent{{RequestID: "straggler", Kind: EventProgress, GeneratedTokens: 6016}})
	later := mustPick(t, r, PickRequest{Prompt: p, DryRun: true})
	if c := candidate(t, later, "r0"); c.HeldBlocks != 377 || c.DecodeBlocks != 377+2000.0/16 {
		t.Fatalf("decayed projection %+v", c)
	}
}
