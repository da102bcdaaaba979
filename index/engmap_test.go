package index

import (
	"math/rand/v2"
	"testing"
)

// TestEngMapAgainstGoMap runs random puts and deletes (growth past the
// quarter-growth threshold, shrinking, key 0) against a Go map.
func TestEngMapAgainstGoMap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	var g engMap
	ref := map[uint64]uint64{}
	for i := range 60_000 {
		k := r.Uint64N(3000) // includes 0, whose mixed key is remapped
		if i > 40_000 {
			k = r.Uint64N(20) // shrink back down
		}
		if r.IntN(3) == 0 {
			g.del(k)
			delete(ref, k)
		} else {
			g.put(k, uint64(i))
			ref[k] = uint64(i)
		}
		if i%997 == 0 || i == 59_999 {
			if g.len() != len(ref) {
				t.Fatalf("op %d: len %d, want %d", i, g.len(), len(ref))
			}
			for k, v := range ref {
				if got, ok := g.get(k); !ok || got != v {
					t.Fatalf("op %d: key %d = %d %v, want %d", i, k, got, ok, v)
				}
			}
			n := 0
			g.values(func(uint64) { n++ })
			if n != len(ref) {
				t.Fatalf("values visited %d, want %d", n, len(ref))
			}
		}
	}
	if len(g.slots) > 4*max(len(ref), minTableCap) {
		t.Fatalf("%d slots left for %d keys", len(g.slots), len(ref))
	}
	if _, ok := g.get(99999); ok {
		t.Fatal("absent key found")
	}
}
