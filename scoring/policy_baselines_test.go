package scoring

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/switchyard-llm/switchyard/index"
)

// busy books n requests on replica (no prompt overlap with anything).
func busy(t testing.TB, r *Router, replica string, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		mustPick(t, r, PickRequest{RequestID: fmt.Sprintf("%s-busy-%d", replica, i), Prompt: Prompt{Tokens: tokens(7, 0, 8)},
			Candidates: []string{replica}})
	}
}

func TestRoundRobinCycles(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{})
	var got []string
	for i := 0; i < 7; i++ {
		d := mustPick(t, r, PickRequest{RequestID: fmt.Sprint(i), Prompt: Prompt{Text: "x"}, Policy: PolicyRoundRobin})
		got = append(got, d.ReplicaID)
	}
	if fmt.Sprint(got) != "[r0 r1 r2 r0 r1 r2 r0]" {
		t.Fatalf("round robin order %v", got)
	}
}

// chiSquareUniform returns the chi-square statistic of counts against a uniform distribution.
func chiSquareUniform(counts map[string]int, k, n int) float64 {
	exp := float64(n) / float64(k)
	chi := 0.0
	for i := 0; i < k; i++ {
		d := float64(counts[fmt.Sprintf("r%d", i)]) - exp
		chi += d * d / exp
	}
	return chi
}

func TestRandomIsUniform(t *testing.T) {
	r, _ := newTestRouter(t, 4, Config{})
	busy(t, r, "r0", 5) // load must not matter
	counts := map[string]int{}
	const n = 8000
	for i := 0; i < n; i++ {
		counts[mustPick(t, r, PickRequest{Prompt: Prompt{Text: "x"}, Policy: PolicyRandom, DryRun: true}).ReplicaID]++
	}
	if chi := chiSquareUniform(counts, 4, n); chi > 16.3 { // 3 dof, p = 0.001
		t.Fatalf("chi2 %.1f for %v", chi, counts)
	}
}

func TestLeastRequestsBalancesAndBreaksTiesAtRandom(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{})
	busy(t, r, "r1", 2)
	d := mustPick(t, r, PickRequest{Prompt: Prompt{Text: "x"}, Policy: PolicyLeastRequests, DryRun: true})
	if d.ReplicaID == "r1" || d.Fallbacks[len(d.Fallbacks)-1] != "r1" {
		t.Fatalf("least requests chose %s, fallbacks %v", d.ReplicaID, d.Fallbacks)
	}
	seen := map[string]bool{}
	for i := 0; i < 200; i++ {
		seen[mustPick(t, r, PickRequest{Prompt: Prompt{Text: "x"}, Policy: PolicyLeastRequests, DryRun: true}).ReplicaID] = true
	}
	if !seen["r0"] || !seen["r2"] || seen["r1"] {
		t.Fatalf("ties between r0 and r2 not broken at random: %v", seen)
	}
}

func TestPowerOfTwoNeverPicksTheMostLoaded(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{})
	busy(t, r, "r1", 5)
	busy(t, r, "r2", 10)
	counts := map[string]int{}
	const n = 3000
	for i := 0; i < n; i++ {
		counts[mustPick(t, r, PickRequest{Prompt: Prompt{Text: "x"}, Policy: PolicyPowerOfTwo, DryRun: true}).ReplicaID]++
	}
	// Two of three sampled: r0 wins whenever sampled (2/3), r1 when paired with r2 (1/3).
	if counts["r2"] != 0 || math.Abs(float64(counts["r1"])/n-1.0/3) > 0.05 {
		t.Fatalf("power of two counts %v", counts)
	}
}

func TestConsistentHashSessionAffinity(t *testing.T) {
	r, _ := newTestRouter(t, 4, Config{DefaultPolicy: PolicyConsistentHash})
	ctx := context.Background()
	owner := map[string]string{}
	const sessions = 2000
	for s := 0; s < sessions; s++ {
		sid := fmt.Sprintf("session-%d", s)
		d := mustPick(t, r, PickRequest{SessionID: sid, Prompt: Prompt{Text: "x"}, DryRun: true})
		owner[sid] = d.ReplicaID
	}
	busy(t, r, owner["session-1"], 20) // load does not move a session
	for turn := 0; turn < 3; turn++ {
		d := mustPick(t, r, PickRequest{RequestID: fmt.Sprint("t", turn), SessionID: "session-1", Prompt: Prompt{Text: "x"}})
		if d.ReplicaID != owner["session-1"] {
			t.Fatalf("turn %d went to %s, owner %s", turn, d.ReplicaID, owner["session-1"])
		}
	}
	// Draining the owner moves its sessions to ring successors, and back when ready again.
	if err := r.SetState(ctx, owner["session-1"], StateDraining); err != nil {
		t.Fatal(err)
	}
	d := mustPick(t, r, PickRequest{SessionID: "session-1", Prompt: Prompt{Text: "x"}, DryRun: true})
	if d.ReplicaID == owner["session-1"] {
		t.Fatal("draining owner still chosen")
	}
	if err := r.SetState(ctx, owner["session-1"], StateReady); err != nil {
		t.Fatal(err)
	}
	// A fifth replica takes about 1/5 of the sessions; no other session moves.
	if _, err := r.Register(ctx, Replica{ID: "r4", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for sid, was := range owner {
		d := mustPick(t, r, PickRequest{SessionID: sid, Prompt: Prompt{Text: "x"}, DryRun: true})
		if d.ReplicaID != was {
			moved++
			if d.ReplicaID != "r4" {
				t.Fatalf("%s moved %s -> %s, not to the new replica", sid, was, d.ReplicaID)
			}
		}
	}
	if frac := float64(moved) / sessions; frac < 0.12 || frac > 0.28 {
		t.Fatalf("%.3f of sessions moved, want about 0.2", frac)
	}
	// Without a session id the request id is the key: deterministic too.
	a := mustPick(t, r, PickRequest{RequestID: "same", Prompt: Prompt{Text: "x"}, DryRun: true})
	b := mustPick(t, r, PickRequest{RequestID: "same", Prompt: Prompt{Text: "x"}, DryRun: true})
	if a.ReplicaID != b.ReplicaID {
		t.Fatal("request-id key not deterministic")
	}
}

func TestHashRingIsDeterministicAndBalanced(t *testing.T) {
	members := []string{"c", "a", "b", "d"}
	r1, r2 := NewHashRing(members, 100), NewHashRing([]string{"d", "b", "a", "c"}, 100)
	counts := map[string]int{}
	for i := 0; i < 4000; i++ {
		k := fmt.Sprint("k", i)
		if r1.Owner(k) != r2.Owner(k) {
			t.Fatalf("rings over the same members disagree on %s", k)
		}
		counts[r1.Owner(k)]++
	}
	for _, m := range members {
		if counts[m] < 600 || counts[m] > 1400 {
			t.Fatalf("unbalanced ring with 100 virtual nodes: %v", counts)
		}
	}
	if NewHashRing(nil, 100).Owner("x") != "" {
		t.Fatal("empty ring has an owner")
	}
}

// TestKVAffinityHerds: every request sharing a cached system prompt lands on the replica that
// cached it, however loaded — the herding the source article describes.
func TestKVAffinityHerds(t *testing.T) {
	r, _ := newTestRouter(t, 4, Config{DefaultPolicy: PolicyKVAffinity})
	system := tokens(0, 512, 512)
	storeOn(t, r, "r2", system, index.TierDevice)
	for i := 0; i < 30; i++ {
		p := append(append([]uint32(nil), system...), tokens(i+1, 0, 100)...)
		d := mustPick(t, r, PickRequest{RequestID: fmt.Sprint(i), Prompt: Prompt{Tokens: p}})
		if d.ReplicaID != "r2" {
			t.Fatalf("request %d went to %s", i, d.ReplicaID)
		}
	}
	if got := load(t, r, "r2").ActiveRequests; got != 30 {
		t.Fatalf("r2 has %d requests", got)
	}
	// With no overlap anywhere, ties are broken at random.
	seen := map[string]bool{}
	for i := 0; i < 100; i++ {
		seen[mustPick(t, r, PickRequest{Prompt: Prompt{Tokens: tokens(99, 0, 64)}, DryRun: true}).ReplicaID] = true
	}
	if len(seen) != 4 {
		t.Fatalf("ties not random: %v", seen)
	}
}

// TestPrefixAffinityFollowsTextPrefix: over the approximate (text) index fed by its own
// decisions, a prompt sharing enough of an earlier one's text follows it; a new prompt goes to
// a replica with the smallest tree; imbalance beyond the threshold falls back to power of two.
func TestPrefixAffinityFollowsTextPrefix(t *testing.T) {
	r, _ := newTestRouter(t, 3, Config{DefaultPolicy: PolicyPrefixAffinity})
	doc := func(seed, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + (seed*7+i*i)%26)
		}
		return string(b)
	}
	system := doc(1, 1280) // 20 chunks of 64 bytes
	first := mustPick(t, r, PickRequest{RequestID: "a", Prompt: Prompt{Text: system + doc(2, 200)}})
	follow := mustPick(t, r, PickRequest{RequestID: "b", Prompt: Prompt{Text: system + doc(3, 9000)}})
	if follow.ReplicaID != first.ReplicaID {
		t.Fatalf("12%% match went to %s, not %s", follow.ReplicaID, first.ReplicaID)
	}
	fresh := mustPick(t, r, PickRequest{RequestID: "c", Prompt: Prompt{Text: doc(4, 1000)}})
	if fresh.ReplicaID == first.ReplicaID {
		t.Fatalf("unmatched prompt went to the replica with the biggest tree")
	}
	below := mustPick(t, r, PickRequest{Prompt: Prompt{Text: system + doc(5, 20000)}, DryRun: true})
	if below.ReplicaID == first.ReplicaID {
		t.Fatalf("6%% match (< 0.1) followed the prefix")
	}
	busy(t, r, first.ReplicaID, 30)
	imb := map[string]float64{"imbalanced_threshold": 10}
	for i := 0; i < 50; i++ {
		d := mustPick(t, r, PickRequest{Prompt: Prompt{Text: system + doc(6, 200)}, DryRun: true, Params: imb})
		if d.ReplicaID == first.ReplicaID {
			t.Fatal("imbalanced fleet: power of two chose the most loaded replica")
		}
	}
	if d := mustPick(t, r, PickRequest{Prompt: Prompt{Text: system + doc(6, 200)}, DryRun: true}); d.ReplicaID != first.ReplicaID {
		t.Fatal("default (infinite) imbalance threshold must keep following the prefix")
	}
}

// TestCacheAwareSwitch: SGLang's switch goes to the shortest queue only past both balance
// thresholds; otherwise a good match wins; a poor match goes to the smallest tree.
func TestCacheAwareSwitch(t *testing.T) {
	prefix := tokens(0, 1024, 1024)
	tests := []struct {
		name      string
		load0     int // active requests on r0, which holds the prefix
		load1     int
		promptLen int
		want      string
	}{
		{"balanced: follow the match", 70, 50, 1024, "r0"},
		{"abs and rel exceeded: shortest queue", 100, 10, 1024, "r1"},
		{"abs exceeded, rel not: follow the match", 300, 230, 1024, "r0"},
		{"poor match: smallest tree", 0, 0, 8192, "r1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := newTestRouter(t, 2, Config{DefaultPolicy: PolicyCacheAware})
			// r0 was routed the prefix (its tree grows) and then reported caching it.
			mustPick(t, r, PickRequest{RequestID: "seed-tree", Prompt: Prompt{Tokens: prefix}, Candidates: []string{"r0"}})
			storeOn(t, r, "r0", prefix, index.TierDevice)
			busy(t, r, "r0", tc.load0)
			busy(t, r, "r1", tc.load1)
			p := append(append([]uint32(nil), prefix...), tokens(3, 0, tc.promptLen-1024)...)
			d := mustPick(t, r, PickRequest{Prompt: Prompt{Tokens: p}, DryRun: true})
			if d.ReplicaID != tc.want {
				t.Fatalf("chose %s, want %s", d.ReplicaID, tc.want)
			}
		})
	}
}

func TestPolicyParamsValidatedByNameAndRange(t *testing.T) {
	for _, name := range PolicyNames() {
		p, err := NewPolicy(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range p.Specs() {
			if _, err := p.WithParams(map[string]float64{s.Name: s.Default}); err != nil {
				t.Fatalf("%s.%s default rejected: %v", name, s.Name, err)
			}
			if s.Min > -math.MaxFloat64 {
				if _, err := p.WithParams(map[string]float64{s.Name: s.Min - 1}); err == nil {
					t.Fatalf("%s.%s below range accepted", name, s.Name)
				}
			}
			if !math.IsInf(s.Max, 1) {
				if _, err := p.WithParams(map[string]float64{s.Name: s.Max * 2}); err == nil {
					t.Fatalf("%s.%s above range accepted", name, s.Name)
				}
			}
			if _, err := p.WithParams(map[string]float64{s.Name: math.NaN()}); err == nil {
				t.Fatalf("%s.%s NaN accepted", name, s.Name)
			}
			if got := p.Params()[s.Name]; got != s.Default {
				t.Fatalf("%s.%s = %v, default %v", name, s.Name, got, s.Default)
			}
		}
		if _, err := p.WithParams(map[string]float64{"no_such_param": 1}); err == nil {
			t.Fatalf("%s accepted an unknown parameter", name)
		}
	}
	if _, err := NewPolicy("nope", nil); err == nil {
		t.Fatal("unknown policy accepted")
	}
	tl, _ := NewPolicy(PolicyTokenLoad, map[string]float64{"temperature": 2})
	if tl.Params()["temperature"] != 2 {
		t.Fatal("override not applied")
	}
	base, _ := NewPolicy(PolicyTokenLoad, nil)
	if base.Params()["temperature"] != 0 {
		t.Fatal("WithParams mutated the original")
	}
}
