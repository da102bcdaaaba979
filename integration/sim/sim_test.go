package sim

import (
	"context"
	"encoding/json"
	"math"
	"testing"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// tinyEngine makes step arithmetic easy to follow by hand.
var tinyEngine = EngineConfig{BlockSize: 16, NumBlocks: 64, MaxBatchedTokens: 32, MaxSeqs: 4}

func mustWorkload(t *testing.T, reqs ...workload.Request) *workload.Workload {
	t.Helper()
	w := &workload.Workload{Name: "test", Requests: reqs}
	if err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	return w
}

func run(t *testing.T, w *workload.Workload, cfg Config, spec string) *Result {
	t.Helper()
	v, err := ParseVariant(spec)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), w, cfg, v)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func poly(n float64) float64 { return 4.209989e-7*n*n + 1.518344e-2*n + 16.50142 }

func decode(ctx float64) float64 {
	u := ctx / 1024
	return -25.74*u*u + 54.01*u + 5.74
}

// One 40-token prompt generating 3 tokens on a 32-token budget: prefill chunks of 32 and 8,
// first token at the end of the second step, then two decode steps at 41 and 42 tokens of
// context in a 1,024-token cache.
func TestStepTimesByHand(t *testing.T) {
	w := mustWorkload(t, workload.Request{InputLength: 40, OutputLength: 3, HashIDs: []uint64{1}})
	res := run(t, w, Config{Replicas: 1, Engine: tinyEngine}, "round_robin")
	ttft := (poly(32) + poly(8)) / 1e3
	e2e := ttft + (decode(41)+decode(42))/1e3
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"ttft", res.TTFT.P50, ttft},
		{"e2e", res.E2E.P50, e2e},
		{"tpot", res.TPOT.P50, (e2e - ttft) / 2},
		{"tokens/s", res.OutputTokensPerSecond, 3 / e2e},
	} {
		if math.Abs(c.got-c.want) > 1e-7*c.want { // steps are rounded to the nanosecond
			t.Errorf("%s = %.9f, want %.9f", c.name, c.got, c.want)
		}
	}
	if res.Replicas[0].Steps != 4 || res.Completed != 1 || res.PrefixHitRate != 0 {
		t.Errorf("steps %d completed %d hit %v; want 4, 1, 0", res.Replicas[0].Steps, res.Completed, res.PrefixHitRate)
	}
}

// Cache hits by hand, with 16-token blocks and turns run one after another.
func TestCacheHitsByHand(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reqs   []workload.Request
		cached int // engine-reported cached tokens of the second request
	}{
		// The same 40-token prompt again: 2 full blocks (32 tokens) hit; the partial third never caches.
		{"repeat", []workload.Request{
			{InputLength: 40, OutputLength: 24, HashIDs: []uint64{1}, SessionID: "s"},
			{InputLength: 40, OutputLength: 2, HashIDs: []uint64{1}, SessionID: "s"}}, 32},
		// The next turn extends the first (40 prompt + 24 output + 20 new): the first turn computed
		// 63 tokens, so blocks 0–2 (48 tokens, 8 of them generated) are cached and hit.
		{"output reuse", []workload.Request{
			{InputLength: 40, OutputLength: 24, HashIDs: []uint64{1}, SessionID: "s"},
			{InputLength: 84, OutputLength: 2, HashIDs: []uint64{1}, SessionID: "s"}}, 48},
		// A different prompt: nothing.
		{"unrelated", []workload.Request{
			{InputLength: 40, OutputLength: 24, HashIDs: []uint64{1}, SessionID: "s"},
			{InputLength: 84, OutputLength: 2, HashIDs: []uint64{2}, SessionID: "s"}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := mustWorkload(t, tc.reqs...)
			cfg := Config{Replicas: 1, Engine: tinyEngine, Replay: workload.ReplayConfig{Concurrency: 1}}
			res := run(t, w, cfg, "round_robin")
			prompt := tc.reqs[0].InputLength + tc.reqs[1].InputLength
			if want := float64(tc.cached) / float64(prompt); res.PrefixHitRate != want || res.Replicas[0].CachedPromptTokens != int64(tc.cached) {
				t.Errorf("hit rate %v (%d cached tokens), want %v (%d)", res.PrefixHitRate, res.Replicas[0].CachedPromptTokens, want, tc.cached)
			}
		})
	}
}

// Engine blocks of 32 tokens reach a router of 16-token blocks as Stored events with the
// engine's own hashes; kv_affinity can only follow a prefix whose events the index mapped.
func TestRouterFollowsEngineEvents(t *testing.T) {
	reqs := []workload.Request{{InputLength: 600, OutputLength: 4, HashIDs: []uint64{1, 2}}}
	for k := range 5 { // later requests share block 1, long after predictions expired
		reqs = append(reqs, workload.Request{Timestamp: secs(10 * (k + 1)), InputLength: 600, OutputLength: 4, HashIDs: []uint64{1, uint64(10 + k)}})
	}
	w := mustWorkload(t, reqs...)
	eng := EngineConfig{BlockSize: 32, NumBlocks: 256, MaxBatchedTokens: 1024, MaxSeqs: 8}
	res := run(t, w, Config{Replicas: 4, Engine: eng, RouterBlockSize: 16}, "kv_affinity")
	served := 0
	for _, r := range res.Replicas {
		if r.Requests > 0 {
			served++
			if r.CachedPromptTokens != 5*512 {
				t.Errorf("%s: %d cached tokens, want 5 × 512", r.ID, r.CachedPromptTokens)
			}
		}
	}
	if served != 1 || len(res.Router.KVRejected) != 0 || res.Router.StoredEvents == 0 || res.Router.IndexBlocks == 0 {
		t.Errorf("served by %d replicas, rejected %v, stored %d, index blocks %d; want one replica, no rejections",
			served, res.Router.KVRejected, res.Router.StoredEvents, res.Router.IndexBlocks)
	}
}

func TestDeterminism(t *testing.T) {
	c := workload.DefaultMultiTurnConfig()
	c.Sessions, c.Concurrency, c.MaxTurns, c.OutputMean = 12, 4, 6, 60
	w, err := workload.MultiTurnSessions(c)
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Replicas: 3, Engine: EngineConfig{BlockSize: 32, NumBlocks: 2048, MaxBatchedTokens: 2048, MaxSeqs: 16}, RouterBlockSize: 16}
	vs, err := ParseVariants("token_load,random,cache_aware,oracle")
	if err != nil {
		t.Fatal(err)
	}
	var out [2][]byte
	for i, workers := range []int{1, 2} {
		rep, err := RunAll(context.Background(), w, cfg, vs, workers)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = json.Marshal(rep); err != nil {
			t.Fatal(err)
		}
		if rep.Results[0].Completed != len(w.Requests) {
			t.Fatalf("completed %d of %d", rep.Results[0].Completed, len(w.Requests))
		}
	}
	if string(out[0]) != string(out[1]) {
		t.Error("the same seed gave different reports")
	}
	cfg.Seed = 2
	rep, err := RunAll(context.Background(), w, cfg, vs[1:2], 1)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(rep.Results[0]); string(b) == string(mustJSON(t, out[0], 1)) {
		t.Error("another seed gave the same random routing")
	}
}

// mustJSON extracts results[i] of a marshalled report.
func mustJSON(t *testing.T, report []byte, i int) []byte {
	var r struct{ Results []json.RawMessage }
	if err := json.Unmarshal(report, &r); err != nil {
		t.Fatal(err)
	}
	return r.Results[i]
}
