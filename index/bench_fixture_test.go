package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// The benchmark fixture: ~1M router blocks spread over 16 replicas, fed
// through ApplyStored exactly as engine events would be (so the engine-hash
// maps are populated too), plus a 512-block prompt held fully by r00, half by
// r01 and an eighth by r02 (those blocks are shared: overflow sets).
const (
	fixReplicas    = 16
	fixBlocks      = 1 << 20
	fixPromptBlock = 512
	fixChain       = 64 // router blocks per filler Stored event
)

type fixture struct {
	ix      *Index
	prompt  []uint64 // router hashes of the 512-block prompt
	cands   []string
	routers []uint64 // every router hash indexed (when requested)
	entries int
}

func fixReplica(i int) string { return fmt.Sprintf("r%02d", i%fixReplicas) }

// buildFixture builds the 1M-block index; keepRouters also returns every
// router hash (for the bare-map floor), which the memory benchmark must not.
func buildFixture(tb testing.TB, keepRouters bool) *fixture {
	tb.Helper()
	return buildFixtureWith(tb, Config{}, keepRouters)
}

// buildFixtureWith builds the fixture on an index configured by cfg.
func buildFixtureWith(tb testing.TB, cfg Config, keepRouters bool) *fixture {
	tb.Helper()
	f := &fixture{ix: New(cfg)}
	for i := range fixReplicas {
		f.cands = append(f.cands, fixReplica(i))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	tokens := make([]uint32, fixChain*DefaultBlockSize)
	engine := make([]uint64, fixChain)
	var next uint64
	// store indexes toks on replica as one event chained after engine hash
	// parent (0 = root) and returns the event's last engine hash.
	store := func(replica string, parent uint64, toks []uint32) uint64 {
		n := len(toks) / DefaultBlockSize
		for i := range n {
			next++
			engine[i] = next * 0x9e3779b97f4a7c15
		}
		ev := Stored{BlockHashes: engine[:n], TokenIDs: toks, Parent: parent, HasParent: parent != 0}
		if err := f.ix.ApplyStored(replica, 0, ev); err != nil {
			tb.Fatal(err)
		}
		return engine[n-1]
	}
	prompt := make([]uint32, fixPromptBlock*DefaultBlockSize)
	for i := range prompt {
		prompt[i] = rng.Uint32N(128000)
	}
	f.prompt = HashTokens(nil, prompt, DefaultBlockSize, "")
	for r, blocks := range []int{fixPromptBlock, fixPromptBlock / 2, fixPromptBlock / 8} {
		parent := uint64(0)
		for s := 0; s < blocks; s += fixChain {
			parent = store(fixReplica(r), parent, prompt[s*DefaultBlockSize:min(blocks, s+fixChain)*DefaultBlockSize])
		}
	}
	if keepRouters {
		f.routers = append(f.routers, f.prompt...)
	}
	for c := 0; f.ix.counts.blocks < fixBlocks; c++ {
		for i := range tokens {
			tokens[i] = rng.Uint32N(128000)
		}
		store(fixReplica(c), 0, tokens)
		if keepRouters {
			f.routers = HashTokens(f.routers, tokens, DefaultBlockSize, "")
		}
	}
	st := f.ix.Stats()
	f.entries = st.Entries + st.Predicted
	return f
}

// latencies keeps the last len(ring) per-operation durations for percentiles
// without allocating inside the timed loop.
type latencies struct {
	ring []time.Duration
	n    int
}

func newLatencies() *latencies { return &latencies{ring: make([]time.Duration, 1<<16)} }

func (l *latencies) add(d time.Duration) {
	l.ring[l.n&(len(l.ring)-1)] = d
	l.n++
}

func (l *latencies) quantile(q float64) time.Duration {
	s := slices.Clone(l.ring[:min(l.n, len(l.ring))])
	if len(s) == 0 {
		return 0
	}
	slices.Sort(s)
	return s[min(len(s)-1, int(q*float64(len(s))))]
}

func (l *latencies) mean() time.Duration {
	s := l.ring[:min(l.n, len(l.ring))]
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	return sum / time.Duration(max(1, len(s)))
}

// timeBox runs fn repeatedly for about d and returns the mean duration per call.
func timeBox(d time.Duration, fn func()) time.Duration {
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		for range 16 {
			fn()
		}
		n += 16
	}
	return time.Since(start) / time.Duration(n)
}
