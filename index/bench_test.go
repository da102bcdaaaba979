package index

import (
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/zeebo/xxh3"
)

// Every benchmark measures a floor in the same run (raw xxh3, a bare Go map)
// and reports the ratio, so the figures stay meaningful on a noisy machine.
// Run: go test -run '^$' -bench . -benchtime 2s ./index/   (see README.md)

const floorTime = 300 * time.Millisecond

// BenchmarkHashTokens8K: chained block hashes of an 8,192-token prompt.
// Target >= 5 GB/s of token bytes (<= 7 us). Floor: one xxh3 call over the
// same 32 KiB (no chaining, no per-block calls).
func BenchmarkHashTokens8K(b *testing.B) {
	tokens := make([]uint32, 8192)
	for i := range tokens {
		tokens[i] = rand.Uint32N(128000)
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(&tokens[0])), len(tokens)*4)
	var sink uint64
	floor := timeBox(floorTime, func() { sink += xxh3.Hash(raw) })
	dst := make([]uint64, 0, 512)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		dst = HashTokens(dst[:0], tokens, DefaultBlockSize, "")
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(len(raw))/float64(per.Nanoseconds()), "GB/s")
	b.ReportMetric(float64(len(raw))/float64(floor.Nanoseconds()), "floor-GB/s")
	b.ReportMetric(float64(per)/float64(floor), "x-floor")
	runtime.KeepAlive(sink)
}

// matchFloor is the bare-map floor of Match: one Go map lookup per prompt
// block in a map holding every indexed router hash.
type matchFloor struct {
	m map[uint64]uint32
}

func newMatchFloor(f *fixture) *matchFloor {
	m := make(map[uint64]uint32, len(f.routers))
	for i, h := range f.routers {
		m[h] = uint32(i)
	}
	return &matchFloor{m: m}
}

func (mf *matchFloor) walk(prompt []uint64) uint32 {
	var s uint32
	for _, h := range prompt {
		v, ok := mf.m[h]
		if !ok {
			break
		}
		s += v
	}
	return s
}

// BenchmarkMatch512: a 512-block prompt against ~1M blocks on 16 replicas,
// all 16 candidates. Target p99 <= 10 us and within 3x of the floor.
func BenchmarkMatch512(b *testing.B) {
	f := buildFixture(b, true)
	mf := newMatchFloor(f)
	runtime.GC() // settle the setup's garbage before timing
	var sink uint32
	floorLat := newLatencies()
	timeBox(floorTime, func() {
		t := time.Now()
		sink += mf.walk(f.prompt)
		floorLat.add(time.Since(t))
	})
	out := make([]Overlap, len(f.cands))
	lat := newLatencies()
	b.ReportAllocs()
	for b.Loop() {
		t := time.Now()
		out = f.ix.Match(f.prompt, f.cands, out)
		lat.add(time.Since(t))
	}
	if out[0].Device != fixPromptBlock || out[1].Device != fixPromptBlock/2 {
		b.Fatalf("fixture mismatch: %+v", out[:3])
	}
	b.ReportMetric(float64(lat.quantile(0.99).Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(floorLat.mean().Nanoseconds()), "floor-ns")
	b.ReportMetric(float64(floorLat.quantile(0.99).Nanoseconds()), "floor-p99-ns")
	b.ReportMetric(float64(lat.mean())/float64(floorLat.mean()), "x-floor")
	runtime.KeepAlive(sink)
}

// BenchmarkMatch512Cold is BenchmarkMatch512 with the CPU caches flushed
// (64 MiB streamed, twice the L3) before every timed call, for Match and for
// the floor alike: the figure when the prompt's blocks come from DRAM.
func BenchmarkMatch512Cold(b *testing.B) {
	f := buildFixture(b, true)
	mf := newMatchFloor(f)
	junk := make([]byte, 64<<20)
	runtime.GC()
	var sink uint32
	flush := func() {
		for i := 0; i < len(junk); i += 64 {
			junk[i]++
		}
	}
	floorLat, lat := newLatencies(), newLatencies()
	timeBox(floorTime, func() {
		flush()
		t := time.Now()
		sink += mf.walk(f.prompt)
		floorLat.add(time.Since(t))
	})
	out := make([]Overlap, len(f.cands))
	for b.Loop() { // ns/op includes the flush; match-ns is the figure
		flush()
		t := time.Now()
		out = f.ix.Match(f.prompt, f.cands, out)
		lat.add(time.Since(t))
	}
	b.ReportMetric(float64(lat.mean().Nanoseconds()), "match-ns")
	b.ReportMetric(float64(lat.quantile(0.99).Nanoseconds()), "p99-ns")
	b.ReportMetric(float64(floorLat.mean().Nanoseconds()), "floor-ns")
	b.ReportMetric(float64(floorLat.quantile(0.99).Nanoseconds()), "floor-p99-ns")
	b.ReportMetric(float64(lat.mean())/float64(floorLat.mean()), "x-floor")
	runtime.KeepAlive(sink)
}

// applyWorkload is a pool of Stored events (16 blocks each, 16 replicas) and
// their Removed counterparts, applied as a sliding window so the index holds
// a steady ~256k blocks.
type applyWorkload struct {
	stored  []Stored
	removed []Removed
	window  int
}

func newApplyWorkload(events, window int) *applyWorkload {
	rng := rand.New(rand.NewPCG(3, 4))
	w := &applyWorkload{window: window}
	next := uint64(1) << 40 // engine hashes disjoint from the fixture's
	for range events {
		hs := make([]uint64, 16)
		for i := range hs {
			next++
			hs[i] = next * 0x9e3779b97f4a7c15
		}
		toks := make([]uint32, 16*DefaultBlockSize)
		for i := range toks {
			toks[i] = rng.Uint32N(128000)
		}
		w.stored = append(w.stored, Stored{BlockHashes: hs, TokenIDs: toks})
		w.removed = append(w.removed, Removed{BlockHashes: hs})
	}
	return w
}

// step applies event i (stored) and event i-window (removed): 32 block events.
func (w *applyWorkload) step(ix *Index, i int) {
	n := len(w.stored)
	if err := ix.ApplyStored(fixReplica(i), 0, w.stored[i%n]); err != nil {
		panic(err)
	}
	if j := i - w.window; j >= 0 {
		if err := ix.ApplyRemoved(fixReplica(j), 0, w.removed[j%n]); err != nil {
			panic(err)
		}
	}
}

// BenchmarkApply: Stored+Removed block events (including hashing the
// tokens) on one core. Target >= 2M block events/s. Floor: one Go map
// insert and one delete per block.
func BenchmarkApply(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	w := newApplyWorkload(1<<15, 1<<14)
	ix := New(Config{})
	for i := range w.window { // warm to the steady state
		w.step(ix, i)
	}
	fm := make(map[uint64]uint64, w.window*16)
	k := 0
	floor := timeBox(floorTime, func() {
		for range 16 {
			fm[uint64(k)*0x9e3779b97f4a7c15] = uint64(k)
			delete(fm, uint64(k-w.window*16)*0x9e3779b97f4a7c15)
			k++
		}
	})
	i := w.window
	for b.Loop() {
		w.step(ix, i)
		i++
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(32/per.Seconds(), "block-events/s")
	b.ReportMetric(32/floor.Seconds(), "floor-events/s")
	b.ReportMetric(float64(per)/float64(floor), "x-floor")
}

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkMemory: heap bytes per (block, replica) entry at ~1M blocks on 16
// replicas, engine-hash maps included, measured as the runtime.MemStats
// HeapAlloc growth (after GC) of building the index. Target <= 64 B/entry.
// Floor: a bare map[uint64]uint64 of as many entries, measured the same way.
func BenchmarkMemory(b *testing.B) {
	before := heapInUse()
	f := buildFixture(b, false)
	used := heapInUse() - before
	floorBefore := heapInUse()
	fm := make(map[uint64]uint64)
	for i := range f.entries {
		fm[uint64(i)*0x9e3779b97f4a7c15] = uint64(i)
	}
	floorUsed := heapInUse() - floorBefore
	var st Stats
	for b.Loop() {
		st = f.ix.Stats()
	}
	per := float64(used) / float64(f.entries)
	b.ReportMetric(per, "B/entry")
	b.ReportMetric(float64(floorUsed)/float64(len(fm)), "floor-B/entry")
	b.ReportMetric(per/(float64(floorUsed)/float64(len(fm))), "x-floor")
	b.ReportMetric(float64(st.MemoryBytes)/float64(f.entries), "estimate-B/entry")
	b.ReportMetric(float64(f.entries), "entries")
	runtime.KeepAlive(f)
}

// BenchmarkMatchUnderWrites: Match throughput (one reader goroutine) while a
// writer applies 200k block events/s, against the write-free throughput
// measured in alternating rounds of the same run. Target ratio >= 0.8.
func BenchmarkMatchUnderWrites(b *testing.B) {
	f := buildFixture(b, false)
	w := newApplyWorkload(1<<13, 1<<12)
	runtime.GC()
	out := make([]Overlap, len(f.cands))
	match := func() { out = f.ix.Match(f.prompt, f.cands, out) }
	var events atomic.Int64
	writer := func(stop <-chan struct{}, wg *sync.WaitGroup) {
		defer wg.Done()
		const rate = 200_000 // block events per second
		start, i := time.Now(), 0
		for {
			select {
			case <-stop:
				return
			default:
			}
			due := int(time.Since(start).Seconds() * rate / 32) // steps of 32 block events
			for ; i < due; i++ {
				w.step(f.ix, i)
				events.Add(32)
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	withWriter := func(fn func()) (rate float64) {
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		e0, t0 := events.Load(), time.Now()
		go writer(stop, &wg)
		fn()
		close(stop)
		wg.Wait()
		return float64(events.Load()-e0) / time.Since(t0).Seconds()
	}
	// Alternate short write-free and with-writer rounds so that load from
	// elsewhere on the machine hits both alike; report the median round ratio.
	const rounds = 9
	var ratios []float64
	var free, busy time.Duration
	var wrate float64
	for range rounds {
		f := timeBox(floorTime/5, match)
		var bz time.Duration
		wrate += withWriter(func() { bz = timeBox(floorTime/5, match) })
		free += f
		busy += bz
		ratios = append(ratios, float64(f)/float64(bz))
	}
	slices.Sort(ratios)
	withWriter(func() {
		for b.Loop() {
			match()
		}
	})
	b.ReportMetric(ratios[rounds/2], "ratio")
	b.ReportMetric(float64(free.Nanoseconds())/rounds, "free-ns")
	b.ReportMetric(float64(busy.Nanoseconds())/rounds, "busy-ns")
	b.ReportMetric(wrate/rounds, "writer-events/s")
}
