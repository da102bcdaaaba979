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
// 2*predictRate calls' predictions are live and every call also sweeps the
// predictions of a call made 2 s earlier.
const predictRate = 5000

// BenchmarkPredict measures Predict on the 1M-block fixture in a steady
// state, each case on its own index warmed up with 2 s of its own calls:
// "fresh" predicts 256 blocks never seen before (a routed prompt's own
// suffix), "refresh" re-predicts the fixture's 512-block prompt, partly held
// by other replicas (overflow-set edits), and "shared" predicts 128 new
// blocks on two replicas (the second call makes every block an overflow set).
// Sweeping the predictions that expire is part of the cost; "queued" is the
// predicted entries the index still holds at the end (live or expired and not
// yet swept), which stays near the live count only if sweeping keeps up. The
// floor, measured in the same run, is one Go map insert and one delete per
// block in a map of the index's size.
func BenchmarkPredict(b *testing.B) {
	var floor time.Duration
	cases := []struct {
		name   string
		blocks int
		call   func(f *fixture, rng *rand.Rand, hs []uint64) []uint64
	}{
		{"fresh", 256, func(f *fixture, rng *rand.Rand, hs []uint64) []uint64 {
			hs = freshHashes(rng, hs)
			f.ix.Predict(fixReplica(rng.IntN(fixReplicas)), hs, 0)
			return hs
		}},
		{"refresh", fixPromptBlock, func(f *fixture, _ *rand.Rand, hs []uint64) []uint64 {
			f.ix.Predict("r05", f.prompt, 0)
			return hs
		}},
		{"shared", 256, func(f *fixture, rng *rand.Rand, hs []uint64) []uint64 {
			hs = freshHashes(rng, hs)[:128]
			r := rng.IntN(fixReplicas)
			f.ix.Predict(fixReplica(r), hs, 0)
			f.ix.Predict(fixReplica(r+1), hs, 0)
			return hs
		}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			var clock atomic.Int64
			epoch := time.Unix(1_700_000_000, 0)
			now := func() time.Time { return epoch.Add(time.Duration(clock.Load())) }
			f := buildFixtureWith(b, Config{Now: now}, false)
			rng := rand.New(rand.NewPCG(5, 6))
			hs := make([]uint64, 0, 256)
			for range 2*predictRate + predictRate/10 {
				hs = tc.call(f, rng, hs)
				clock.Add(int64(time.Second / predictRate))
			}
			if floor == 0 {
				floor = mapFloor(f.ix.Stats().Blocks, 256)
			}
			runtime.GC()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				hs = tc.call(f, rng, hs)
				clock.Add(int64(time.Second / predictRate))
			}
			b.StopTimer()
			reportPerBlock(b, tc.blocks, floor)
			f.ix.mu.Lock()
			b.ReportMetric(float64(f.ix.counts.preds), "queued")
			f.ix.mu.Unlock()
		})
	}
}

// freshHashes fills dst with 256 random router hashes.
func freshHashes(rng *rand.Rand, dst []uint64) []uint64 {
	dst = dst[:0]
	for range 256 {
		dst = append(dst, rng.Uint64())
	}
	return dst
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
