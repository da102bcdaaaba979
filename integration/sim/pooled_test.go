package sim

import (
	"testing"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

func TestPooledHitRate(t *testing.T) {
	same := workload.Request{InputLength: 100, OutputLength: 1, HashIDs: []uint64{1}}
	other := workload.Request{Timestamp: secs(1), InputLength: 100, OutputLength: 1, HashIDs: []uint64{2}}
	for _, tc := range []struct {
		name     string
		reqs     []workload.Request
		capacity int
		want     float64
	}{
		// The repeat hits its 6 full blocks (96 tokens) of 16.
		{"repeat", []workload.Request{same, same}, 64, 96.0 / 200},
		// A 7-block cache: the other prompt evicts the first, which then misses.
		{"evicted", []workload.Request{same, other, {Timestamp: secs(2), InputLength: 100, OutputLength: 1, HashIDs: []uint64{1}}}, 7, 0},
		{"kept", []workload.Request{same, other, {Timestamp: secs(2), InputLength: 100, OutputLength: 1, HashIDs: []uint64{1}}}, 14, 96.0 / 300},
	} {
		if got := PooledHitRate(mustWorkload(t, tc.reqs...), 16, tc.capacity); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
