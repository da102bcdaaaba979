package index

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TestPropertyAgainstModel runs random interleavings of every operation
// (several replicas, ranks, tiers, LoRAs, shared prefixes, split engine
// blocks, bad events, predictions, clock jumps) and compares the index with
// the naive model after every single step.
func TestPropertyAgainstModel(t *testing.T) {
	configs := []struct {
		name       string
		cfg        Config
		shardBits  uint8
		clockLimit uint32
	}{
		{"unbounded", Config{}, defaultShardBits, 0},
		{"one shard", Config{}, 0, 0},
		{"tight cap", Config{MaxEntries: 24}, 1, 0},
		{"cap with low water", Config{MaxEntries: 130}, 0, 0},
		{"stamp renumbering", Config{MaxEntries: 40}, 2, 90},
	}
	steps := 400
	if testing.Short() {
		steps = 100
	}
	for _, tc := range configs {
		for seed := range uint64(6) {
			t.Run(fmt.Sprintf("%s/seed%d", tc.name, seed), func(t *testing.T) {
				w := newWorld(t, tc.cfg, tc.shardBits)
				if tc.clockLimit != 0 {
					w.ix.clockLimit = tc.clockLimit
				}
				c := randChooser{rand.New(rand.NewPCG(seed, 99))}
				var log []string
				for i := range steps {
					log = append(log, w.step(c))
					if err := w.check(); err != nil {
						t.Fatalf("step %d after %v: %v", i, log[max(0, len(log)-8):], err)
					}
				}
			})
		}
	}
}
