package sim

import (
	"fmt"
	"io"
	"strings"
)

// WriteTable prints the report's side-by-side comparison: one row per policy.
func WriteTable(w io.Writer, rep *Report) error {
	var b strings.Builder
	f := rep.Fleet
	fmt.Fprintf(&b, "workload: %s — %d requests, %d sessions, input mean %.0f, output mean %.0f tokens\n",
		rep.Workload.Name, rep.Workload.Requests, rep.Workload.Sessions, rep.Workload.InputTokensMean, rep.Workload.OutputTokensMean)
	fmt.Fprintf(&b, "tokens: %s\n", rep.Workload.Tokenization)
	fmt.Fprintf(&b, "fleet: %d replicas × %d blocks of %d tokens (%d tokens), %d batched tokens, %d seqs, step model %s, router blocks %d\n",
		f.Replicas, f.NumBlocks, f.BlockSize, f.CapacityTokens, f.MaxBatchedTokens, f.MaxSeqs, f.StepModel, f.RouterBlockSize)
	r := rep.Replay
	if r.Mode == "closed" {
		fmt.Fprintf(&b, "replay: closed loop, %d concurrent sessions, think time %gs\n", r.Concurrency, r.ThinkSeconds)
	} else {
		fmt.Fprintf(&b, "replay: open loop, speed-up %g, jitter %gs\n", r.Speedup, r.JitterSeconds)
	}
	fmt.Fprintf(&b, "pooled-cache prefix hit rate (one LRU cache of %d tokens): %.3f\n\n", rep.Reference.PooledCapacity, rep.Reference.PooledPrefixHitRate)
	width := len("policy")
	for _, res := range rep.Results {
		width = max(width, len(res.Label))
	}
	fmt.Fprintf(&b, "%-*s | %27s | %24s | %8s | %8s | %9s | %5s | %5s | %8s\n", width, "policy",
		"TTFT p50/p90/p99 (s)", "TPOT p50/p90/p99 (ms)", "e2e p99", "sess p99", "out tok/s", "hit", "CV", "max/mean")
	fmt.Fprintf(&b, "%s\n", strings.Repeat("-", width+125))
	for _, res := range rep.Results {
		fmt.Fprintf(&b, "%-*s | %8.3f %8.3f %9.3f | %7.1f %7.1f %8.1f | %8.2f | %8.2f | %9.0f | %5.3f | %5.2f | %8.2f\n", width, res.Label,
			res.TTFT.P50, res.TTFT.P90, res.TTFT.P99,
			res.TPOT.P50*1e3, res.TPOT.P90*1e3, res.TPOT.P99*1e3,
			res.E2E.P99, res.SessionE2E.P99, res.OutputTokensPerSecond,
			res.PrefixHitRate, res.DecodeBlockCV, res.MaxMeanRequests)
	}
	for _, res := range rep.Results {
		if n := len(res.Dropped); n > 0 || res.Router.Expired > 0 || len(res.Router.KVRejected) > 0 {
			fmt.Fprintf(&b, "%s: dropped %v, router expired %d, KV events rejected %v, preemptions %d\n",
				res.Label, res.Dropped, res.Router.Expired, res.Router.KVRejected, res.Preemptions)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
