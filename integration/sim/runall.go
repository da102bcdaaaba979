package sim

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// RunAll simulates w once per variant, up to workers at a time (each run is independent and
// deterministic, so the result does not depend on workers), computes the pooled-cache
// reference alongside, and returns the report with results in variant order. cfg.Progress, if
// set, receives the completed requests summed over all runs and the grand total, and must be
// safe for concurrent use.
func RunAll(ctx context.Context, w *workload.Workload, cfg Config, variants []Variant, workers int) (*Report, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rep := newReport(w, c)
	rep.Results = make([]*Result, len(variants))
	errs := make([]error, len(variants))
	total := len(w.Requests) * len(variants)
	var done atomic.Int64
	sem := make(chan struct{}, max(1, workers))
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wg.Add(1)
	go func() { // the reference: cheap next to a run
		defer wg.Done()
		sem <- struct{}{}
		defer func() { <-sem }()
		rep.Reference.PooledPrefixHitRate = PooledHitRate(w, c.Engine.BlockSize, c.Engine.NumBlocks*c.Replicas)
	}()
	for k, v := range variants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			rc := c
			if cfg.Progress != nil {
				last := 0
				rc.Progress = func(n, _ int) {
					cfg.Progress(int(done.Add(int64(n-last))), total)
					last = n
				}
			}
			rep.Results[k], errs[k] = Run(ctx, w, rc, v)
			if errs[k] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// newReport fills the run's description.
func newReport(w *workload.Workload, c Config) *Report {
	s := w.Summarize()
	mode := "open"
	if c.Replay.Concurrency > 0 {
		mode = "closed"
	}
	dropped := map[string]int{}
	for k, v := range w.Dropped {
		dropped[k] = v
	}
	speed := c.Replay.Speedup
	if speed == 0 {
		speed = 1
	}
	return &Report{
		Schema: Schema,
		Workload: WorkloadInfo{
			Name: w.Name, Tokenization: w.Tokenization, Requests: s.Requests, Sessions: s.Sessions,
			InputTokensMean: s.InputTokensMean, OutputTokensMean: s.OutputTokensMean,
			SpanSeconds: s.SpanSeconds, Dropped: dropped,
		},
		Fleet: FleetInfo{
			Replicas: c.Replicas, BlockSize: c.Engine.BlockSize, NumBlocks: c.Engine.NumBlocks,
			CapacityTokens: c.Engine.CapacityTokens(), MaxBatchedTokens: c.Engine.MaxBatchedTokens,
			MaxSeqs: c.Engine.MaxSeqs, MaxModelLen: c.Engine.maxLen(), StepModel: c.Step.Name(),
			RouterBlockSize: c.RouterBlockSize, ProgressEvery: c.ProgressEvery,
			BinSeconds: c.Bin.Seconds(), Seed: c.Seed,
		},
		Replay: ReplayInfo{
			Mode: mode, Speedup: speed, JitterSeconds: c.Replay.Jitter.Seconds(),
			Concurrency: c.Replay.Concurrency, ThinkSeconds: c.Replay.ThinkTime.Seconds(),
		},
		Reference: Reference{PooledCapacity: c.Engine.CapacityTokens() * int64(c.Replicas)},
	}
}
