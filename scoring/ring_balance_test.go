package scoring

import (
	"fmt"
	"testing"
)

// TestHashRingBalancesShortIDs guards against a ring whose points cluster:
// with 100 virtual nodes each of 8 members must own a fair share of keys,
// whatever the length of the member ids.
func TestHashRingBalancesShortIDs(t *testing.T) {
	for _, format := range []string{"r%d", "r%02d", "replica-%02d", "10.0.0.%d:8000"} {
		members := make([]string, 8)
		for i := range members {
			members[i] = fmt.Sprintf(format, i)
		}
		ring := NewHashRing(members, 100)
		counts := map[string]int{}
		const keys = 20000
		for k := 0; k < keys; k++ {
			counts[ring.Owner(fmt.Sprintf("session-%d", k))]++
		}
		for _, m := range members {
			share := float64(counts[m]) / keys
			if share < 0.125/2 || share > 0.125*2 {
				t.Errorf("ids %q: %s owns %.1f%% of keys, want near 12.5%%", format, m, 100*share)
			}
		}
	}
}
