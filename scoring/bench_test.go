package scoring

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard-llm/switchyard/index"
)

const (
	benchReplicas     = 16
	benchPromptTokens = 8192
	benchSeqBlocks    = 512     // blocks per stored sequence (8,192 tokens)
	benchIndexBlocks  = 1 << 20 // distinct blocks indexed
	benchSharedTokens = 4096    // prompt prefix cached on benchHot replicas
	benchHot          = 4       // replicas holding the prompt's prefix
)

// benchFleet is a router with 16 replicas of model "m" and about 1M indexed blocks: each
// replica holds distinct 8,192-token sequences, and the first benchHot replicas also hold the
// benchmark prompt's first 4,096 tokens, so Match walks a long shared prefix.
type benchFleet struct {
	r      *Router
	prompt []uint32
	build  time.Duration
}

// newBenchFleet builds a fresh fleet (each benchmark run gets its own, so predictions made by
// one run never slow down another's Match).
func newBenchFleet(b *testing.B) *benchFleet { return newBenchFleetN(b, benchReplicas) }

// newBenchFleetN builds the fleet with n replicas (the first benchHot of them hold the prompt's
// shared prefix; the filler sequences are spread over all n).
func newBenchFleetN(b *testing.B, n int) *benchFleet {
	b.Helper()
	var f *benchFleet
	func() {
		start := time.Now()
		r, err := NewRouter(Config{Seed: 1, Index: index.Config{MaxEntries: 2 * benchIndexBlocks}})
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		for i := 0; i < n; i++ {
			if _, err := r.Register(ctx, Replica{ID: fmt.Sprintf("r%02d", i), Model: "m"}); err != nil {
				b.Fatal(err)
			}
		}
		prompt := make([]uint32, benchPromptTokens)
		for i := range prompt {
			prompt[i] = uint32(i*7 + 3)
		}
		seq := make([]uint32, benchSeqBlocks*index.DefaultBlockSize)
		engine := make([]uint64, benchSeqBlocks)
		var eh uint64
		store := func(rep string) {
			for i := range engine {
				eh++
				engine[i] = eh
			}
			if err := r.ApplyStored(rep, 0, index.Stored{BlockHashes: engine, TokenIDs: seq}); err != nil {
				b.Fatal(err)
			}
		}
		for i := 0; i < benchHot; i++ {
			copy(seq, prompt[:benchSharedTokens])
			for j := benchSharedTokens; j < len(seq); j++ {
				seq[j] = uint32(1<<30 + i*len(seq) + j)
			}
			store(fmt.Sprintf("r%02d", i))
		}
		for s := 0; s < benchIndexBlocks/benchSeqBlocks; s++ {
			for j := range seq {
				seq[j] = uint32(1<<31 + s*len(seq) + j)
			}
			store(fmt.Sprintf("r%02d", s%n))
		}
		f = &benchFleet{r: r, prompt: prompt, build: time.Since(start)}
	}()
	return f
}

// lifecycleDriver completes picked requests in the background (first token, progress, done),
// as engines would, so loads stay bounded and picks contend with lifecycle events.
type lifecycleDriver struct {
	ch   chan string
	wg   sync.WaitGroup
	done atomic.Uint64
}

func startLifecycle(r *Router) *lifecycleDriver {
	d := &lifecycleDriver{ch: make(chan string, 4096)}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		ctx := context.Background()
		evs := make([]LifecycleEvent, 0, 3)
		for id := range d.ch {
			evs = append(evs[:0],
				LifecycleEvent{RequestID: id, Kind: EventFirstToken},
				LifecycleEvent{RequestID: id, Kind: EventProgress, GeneratedTokens: 64},
				LifecycleEvent{RequestID: id, Kind: EventDone, OutputTokens: 128, Status: "ok"})
			r.ApplyLifecycle(ctx, evs)
			d.done.Add(1)
		}
	}()
	return d
}

func (d *lifecycleDriver) stop() { close(d.ch); d.wg.Wait() }

func requestIDs(prefix string, n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return ids
}

func percentile(ds []time.Duration, p float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*p))]
}

// benchPrompts returns n 8,192-token prompts sharing the fleet's cached 4,096-token prefix,
// each with its own 4,096-token suffix (a shared system prompt and document, then a question).
func benchPrompts(f *benchFleet, n int) [][]uint32 {
	ps := make([][]uint32, n)
	for i := range ps {
		p := slices.Clone(f.prompt)
		for j := benchSharedTokens; j < len(p); j++ {
			p[j] = uint32(3<<30 + i*benchPromptTokens + j)
		}
		ps[i] = p
	}
	return ps
}

// BenchmarkPick measures one in-process Pick (validate, hash 8,192 tokens, Match over 1M
// indexed blocks for 16 candidates, token_load, reserve, and with predict=on the index's
// predicted entries for the chosen replica) while a goroutine applies lifecycle events for
// earlier picks. It reports p50/p99 per pick and, as the floor measured in the same run, the
// p50 of hashing plus Match alone, with the ratio p99/floor.
func BenchmarkPick(b *testing.B) {
	for _, predict := range []bool{false, true} {
		b.Run(fmt.Sprintf("predict=%v", predict), func(b *testing.B) { benchPick(b, benchReplicas, predict) })
	}
}

// BenchmarkPick100 is BenchmarkPick's default pick (predictions on) with 100 replicas, all of
// them candidates: the setting of the llm-d endpoint picker's published per-decision latency.
func BenchmarkPick100(b *testing.B) { benchPick(b, 100, true) }

// benchPick runs BenchmarkPick's measurement on a fleet of n replicas.
func benchPick(b *testing.B, n int, predict bool) {
	cands := make([]string, n)
	for i := range cands {
		cands[i] = fmt.Sprintf("r%02d", i)
	}
	hashes := make([]uint64, 0, benchPromptTokens/index.DefaultBlockSize)
	out := make([]index.Overlap, 0, n)
	f := newBenchFleetN(b, n)
	ix := f.r.Index("m")
	b.Logf("fleet: %d replicas, %d blocks indexed, built in %v", n, ix.Stats().Blocks, f.build)
	prompts := benchPrompts(f, 256)
	f.r.set.predict = predict
	floor := make([]time.Duration, 5000)
	for i := range floor { // the floor: hashing and Match alone
		t0 := time.Now()
		hashes = index.HashTokens(hashes[:0], prompts[i%len(prompts)], index.DefaultBlockSize, "")
		out = ix.Match(hashes, cands, out)
		floor[i] = time.Since(t0)
	}
	if out[0].Device < benchSharedTokens/index.DefaultBlockSize {
		b.Fatalf("bench prompt overlap on r00 = %+v", out[0])
	}
	ids := requestIDs(fmt.Sprint("pick", predict, b.N), b.N)
	lat := make([]time.Duration, b.N)
	drv := startLifecycle(f.r)
	ctx := context.Background()
	req := PickRequest{Model: "m", ExpectedOutputTokens: 128}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req.RequestID = ids[i]
		req.Prompt.Tokens = prompts[i%len(prompts)]
		t0 := time.Now()
		d, err := f.r.Pick(ctx, req)
		lat[i] = time.Since(t0)
		if err != nil {
			b.Fatal(err)
		}
		drv.ch <- d.RequestID
	}
	b.StopTimer()
	drv.stop()
	p50, p99, fl := percentile(lat, 0.50), percentile(lat, 0.99), percentile(floor, 0.50)
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-µs")
	b.ReportMetric(float64(p99.Nanoseconds())/1e3, "p99-µs")
	b.ReportMetric(float64(fl.Nanoseconds())/1e3, "floor-µs")
	b.ReportMetric(float64(percentile(floor, 0.99).Nanoseconds())/1e3, "floor-p99-µs")
	b.ReportMetric(float64(p99)/float64(percentile(floor, 0.99)), "p99/floor-p99")
}

// BenchmarkPickParallel measures Pick throughput with b.RunParallel, lifecycle events applied
// concurrently; run with -cpu 1,2 to see the scaling across cores. Picks of one model serialise
// only on the select-and-reserve step; hashing and Match run in parallel.
func BenchmarkPickParallel(b *testing.B) {
	for _, predict := range []bool{false, true} {
		b.Run(fmt.Sprintf("predict=%v", predict), func(b *testing.B) {
			f := newBenchFleet(b)
			f.r.set.predict = predict
			ids := requestIDs(fmt.Sprint("par", b.N, runtime.GOMAXPROCS(0)), b.N+runtime.GOMAXPROCS(0)*64)
			prompts := benchPrompts(f, 256)
			var next atomic.Int64
			drv := startLifecycle(f.r)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				req := PickRequest{Model: "m"}
				for pb.Next() {
					n := next.Add(1) - 1
					req.RequestID = ids[n]
					req.Prompt.Tokens = prompts[n%int64(len(prompts))]
					d, err := f.r.Pick(ctx, req)
					if err != nil {
						b.Error(err)
						return
					}
					drv.ch <- d.RequestID
				}
			})
			b.StopTimer()
			drv.stop()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "picks/s")
		})
	}
	// The floor, same run: hashing and Match alone in parallel, no router.
	b.Run("floor", func(b *testing.B) {
		f := newBenchFleet(b)
		ix := f.r.Index("m")
		prompts := benchPrompts(f, 256)
		var next atomic.Int64
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			cands := make([]string, benchReplicas)
			for i := range cands {
				cands[i] = fmt.Sprintf("r%02d", i)
			}
			hashes := make([]uint64, 0, benchPromptTokens/index.DefaultBlockSize)
			out := make([]index.Overlap, 0, benchReplicas)
			for pb.Next() {
				n := next.Add(1) - 1
				hashes = index.HashTokens(hashes[:0], prompts[n%int64(len(prompts))], index.DefaultBlockSize, "")
				out = ix.Match(hashes, cands, out)
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "matches/s")
	})
}

// benchCandidates is 16 candidates with varied terms, as a policy sees them.
func benchCandidates() []Candidate {
	c := make([]Candidate, 16)
	for i := range c {
		c[i] = Candidate{
			ReplicaID: fmt.Sprintf("r%02d", i), PrefillTokens: int64(i * 977 % 4096),
			HeldBlocks: int64(i * 311 % 900), RemainingOutputBlocks: float64(i % 5 * 40),
			NewBlocks: float64(512 - i*8), ActiveRequests: i * 7 % 13, TreeSize: int64(i * 1000 % 7000),
			slot: i,
		}
		c[i].Overlap.Prefix = i * 37 % 256
		c[i].Overlap.Device = c[i].Overlap.Prefix / 2
		c[i].Overlap.Tiers = [index.NumTiers]int{c[i].Overlap.Device, c[i].Overlap.Prefix - c[i].Overlap.Device, 0}
	}
	return c
}

// BenchmarkPolicyRank measures each policy's Rank over 16 candidates. The floor, measured in the
// same run, is restoring the candidate slice (which every iteration also pays); the ratio is
// reported per policy.
func BenchmarkPolicyRank(b *testing.B) {
	r, _ := newTestRouter(b, benchReplicas, Config{})
	pool := r.pools["m"]
	tmpl := benchCandidates()
	work := make([]Candidate, len(tmpl))
	const floorN = 1 << 20
	t0 := time.Now()
	for i := 0; i < floorN; i++ {
		copy(work, tmpl)
	}
	floor := float64(time.Since(t0).Nanoseconds()) / floorN
	for _, name := range PolicyNames() {
		pol := r.policies[name]
		b.Run(name, func(b *testing.B) {
			in := PolicyInput{RequestID: "req", SessionID: "sess", Model: "m", PromptTokens: 8192, PromptUnits: 512,
				UnitTokens: 16, UnitSize: 16, PromptSize: 8192, BlockSize: 16, ExpectedOutputTokens: 200,
				Rand: pool.rnd, model: pool}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				copy(work, tmpl)
				pol.Rank(&in, work)
			}
			b.ReportMetric(floor, "floor-ns")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floor, "x-floor")
		})
	}
}
