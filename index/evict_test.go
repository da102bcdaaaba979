package index

import (
	"fmt"
	"testing"
)

// storeRoot stores one root block with tokens {v,v,v,v} on replica r.
func storeRoot(t *testing.T, ix *Index, r string, v int) {
	t.Helper()
	must(t, ix.ApplyStored(r, 0, Stored{BlockHashes: []uint64{uint64(v)}, TokenIDs: toks(v*10, 4)}))
}

func rootHash(v int) []uint64 { return HashTokens(nil, toks(v*10, 4), 4, "") }

func TestEvictionIsLeastRecentlyTouched(t *testing.T) {
	cases := []struct {
		name      string
		max       int
		ops       func(t *testing.T, ix *Index)
		evicted   []int // roots that must be gone
		kept      []int // roots that must remain
		wantDrops uint64
	}{
		{
			name: "oldest goes first",
			max:  4,
			ops: func(t *testing.T, ix *Index) {
				for v := 1; v <= 6; v++ {
					storeRoot(t, ix, "r", v)
				}
			},
			evicted: []int{1, 2}, kept: []int{3, 4, 5, 6}, wantDrops: 2,
		},
		{
			name: "a store or a prediction refreshes a block",
			max:  4,
			ops: func(t *testing.T, ix *Index) {
				for v := 1; v <= 4; v++ {
					storeRoot(t, ix, "r", v)
				}
				storeRoot(t, ix, "r", 1)        // duplicate store touches
				ix.Predict("s", rootHash(2), 0) // prediction adds an entry and touches
				storeRoot(t, ix, "r", 5)        // 6 entries > 4: evict 3, 4 (1 entry each)
			},
			evicted: []int{3, 4}, kept: []int{1, 2, 5}, wantDrops: 2,
		},
		{
			name: "a whole block goes, every entry counted",
			max:  4,
			ops: func(t *testing.T, ix *Index) {
				storeRoot(t, ix, "r", 1)
				storeRoot(t, ix, "s", 1)
				storeRoot(t, ix, "q", 1)
				storeRoot(t, ix, "r", 2)
				storeRoot(t, ix, "r", 3)
			},
			evicted: []int{1}, kept: []int{2, 3}, wantDrops: 3,
		},
		{
			name: "the low-water mark frees 1/64 of the cap at once",
			max:  128,
			ops: func(t *testing.T, ix *Index) {
				for v := 1; v <= 129; v++ {
					storeRoot(t, ix, "r", v)
				}
			},
			evicted: []int{1, 2, 3}, kept: []int{4, 129}, wantDrops: 3,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Config{BlockSize: 4, MaxEntries: tc.max})
			tc.ops(t, ix)
			st := ix.Stats()
			if st.Evicted != tc.wantDrops || st.Entries+st.Predicted > tc.max {
				t.Fatalf("evicted %d (want %d), %d entries for cap %d", st.Evicted, tc.wantDrops, st.Entries+st.Predicted, tc.max)
			}
			for _, v := range tc.evicted {
				if o := ix.Match(rootHash(v), []string{"r"}, nil)[0]; o.Prefix != 0 {
					t.Errorf("root %d still indexed", v)
				}
			}
			for _, v := range tc.kept {
				if o := ix.Match(rootHash(v), []string{"r"}, nil)[0]; o.Prefix != 1 {
					t.Errorf("root %d evicted", v)
				}
			}
		})
	}
}

// TestEvictionKeepsChainRoots: blocks of one event are touched last to first,
// so the cap trims chains from their tails and what remains still matches.
func TestEvictionKeepsChainRoots(t *testing.T) {
	ix := New(Config{BlockSize: 4, MaxEntries: 6})
	must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2, 3, 4}, TokenIDs: tABCD}))
	must(t, ix.ApplyStored("s", 0, Stored{BlockHashes: []uint64{1, 2, 3, 4}, TokenIDs: toks(900, 16)}))
	got := ix.Match(HashTokens(nil, tABCD, 4, ""), []string{"r"}, nil)[0]
	if got.Prefix != 2 {
		t.Fatalf("chain of r kept %d leading blocks, want 2 (the root half)", got.Prefix)
	}
}

// TestRenumberKeepsOrder drives the stamp clock over its limit many times.
func TestRenumberKeepsOrder(t *testing.T) {
	ix := New(Config{BlockSize: 4, MaxEntries: 8})
	ix.clockLimit = 20
	for v := 1; v <= 100; v++ {
		storeRoot(t, ix, "r", v)
		if v%3 == 0 {
			storeRoot(t, ix, "r", v-1) // keep every third predecessor hot
		}
	}
	if ix.clock >= 20 {
		t.Fatalf("clock %d passed its limit", ix.clock)
	}
	// Most recent first: 100, 98 (re-touched at 99), 99, 97, 95, 96, 94, 92.
	for _, v := range []int{100, 99, 98, 97, 96, 95, 94, 92} {
		if ix.Match(rootHash(v), []string{"r"}, nil)[0].Prefix != 1 {
			t.Errorf("recent root %d evicted", v)
		}
	}
	for _, v := range []int{93, 91, 90, 1} {
		if ix.Match(rootHash(v), []string{"r"}, nil)[0].Prefix != 0 {
			t.Errorf("cold root %d kept", v)
		}
	}
}

// TestMemoryStaysBounded churns many more blocks than the cap through and
// checks the count of entries, blocks and table slots stays bounded.
func TestMemoryStaysBounded(t *testing.T) {
	const cap = 1000
	ix := New(Config{BlockSize: 4, MaxEntries: cap})
	for v := range 20 * cap {
		r := fmt.Sprint("r", v%5)
		storeRoot(t, ix, r, v)
		ix.Predict(r, rootHash(v+1), 0)
	}
	st := ix.Stats()
	if st.Entries+st.Predicted > cap || st.Evicted+uint64(st.Entries+st.Predicted)+st.Expired != 2*20*cap {
		t.Fatalf("entries %d predicted %d evicted %d expired %d", st.Entries, st.Predicted, st.Evicted, st.Expired)
	}
	slots := 0
	for i := range ix.shards {
		slots += ix.shards[i].tab.Load().n
	}
	if slots > 4*cap {
		t.Fatalf("%d table slots for at most %d blocks", slots, cap)
	}
}
