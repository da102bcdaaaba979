package index

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// predictRate is the pick rate the Predict benchmark simulates: the fake clock
// advances 1/predictRate per call, so with the default 2 s TTL about
// 2*predictRate calls' predictions are live and every call also pays for
// sweeping the predictions of a call made 2 s earlier.
const predictRate = 5000

// BenchmarkPredict measures Predict on the 1M-block fixture in a steady
// state: "fresh" predicts 256 blocks never seen before (a routed prompt's
// own suffix), "refresh" re-predicts 512 blocks that are already predicted
// (a repeated prompt), and "shared" predicts on r03 the 512 blocks the
// fixture holds on r00-r02 and removes them again (overflow-set edits). The
// floor, measured in the same run, is one Go map insert and one delete per
// block in a map of the index's size.
func BenchmarkPredict(b *testing.B) {
	var clock atomic.Int64
	epoch := time.Unix(1_700_000_000, 0)
	now := func() time.Time { return epoch.Add(time.Duration(clock.Load())) }
	step := func() { clock.Add(int64(time.Second / predictRate)) }
	f := buildFixtureWith(b, Config{Now: now}, false)
	rng := rand.New(rand.NewPCG(5, 6))
	fresh := func(dst []uint64) []uint64 {
		dst = dst[:0]
		for range 256 {
			dst = append(dst, rng.Uint64())
		}
		return dst
	}
	hs := make([]uint64, 0, 256)
	// Warm up to the steady state: 2 s of picks' predictions are live.
	for range 2*predictRate + predictRate/10 {
		hs = fresh(hs)
		f.ix.Predict(fixReplica(rng.IntN(fixReplicas)), hs, 0)
		step()
	}
	runtime.GC()
	floor := mapFloor(f.ix.Stats().Blocks, 256)
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			hs = fresh(hs)
			f.ix.Predict(fixReplica(rng.IntN(fixReplicas)), hs, 0)
			step()
		}
		reportPerBlock(b, 256, floor)
	})
	b.Run("refresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f.ix.Predict("r05", f.prompt, 0)
			step()
		}
		reportPerBlock(b, len(f.prompt), floor)
	})
	b.Run("shared", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			f.ix.Predict("r03", f.prompt, 0)
			f.ix.Clear("r03", 0)
			step()
		}
		reportPerBlock(b, len(f.prompt), floor)
	})
}

// reportPerBlock reports ns per predicted block and its ratio to the floor.
func reportPerBlock(b *testing.B, blocks int, floor time.Duration) {
	per := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(blocks)
	b.ReportMetric(per, "ns/block")
	b.ReportMetric(float64(floor.Nanoseconds()), "floor-ns/block")
	b.ReportMetric(per/float64(floor.Nanoseconds()), "x-floor")
}

// mapFloor times one insert of a new key and one delete of an old key per
// block in a Go map holding size keys, in batches of batch blocks.
func mapFloor(size, batch int) time.Duration {
	m := make(map[uint64]uint64, size)
	rng := rand.New(rand.NewPCG(7, 8))
	keys := make([]uint64, size)
	for i := range keys {
		keys[i] = rng.Uint64()
		m[keys[i]] = uint64(i)
	}
	n := 0
	d := timeBox(floorTime, func() {
		for range batch {
			k := rng.Uint64()
			m[k] = 1
			delete(m, keys[n%size])
			keys[n%size] = k
			n++
		}
	})
	return d / time.Duration(batch)
}
