package index

import (
	"fmt"
	"testing"
)

func TestMatchBestOverRanks(t *testing.T) {
	h := HashTokens(nil, tABCD, 4, "")
	cases := []struct {
		name  string
		setup func(t *testing.T, ix *Index)
		want  Overlap
	}{
		{"longer device run wins", func(t *testing.T, ix *Index) {
			must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{1, 2, 3}, TokenIDs: concat(tAB, tC)}))
		}, dev(3)},
		{"device beats a longer prefix on host", func(t *testing.T, ix *Index) {
			must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{1, 2, 3, 4}, TokenIDs: tABCD, Tier: TierHost}))
		}, dev(2)},
		{"same device run: longer prefix wins", func(t *testing.T, ix *Index) {
			must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{3}, Parent: 2, HasParent: true, TokenIDs: tC, Tier: TierDisk}))
			must(t, ix.ApplyRemoved("r", 1, Removed{BlockHashes: []uint64{2}}))
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{2}, Parent: 1, HasParent: true, TokenIDs: tB, Tier: TierHost}))
		}, Overlap{Device: 1, Prefix: 3, Tiers: [NumTiers]int{1, 1, 1}}},
		{"same prefix: host beats disk", func(t *testing.T, ix *Index) {
			must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA, Tier: TierDisk}))
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{1}, TokenIDs: tA, Tier: TierHost}))
		}, Overlap{Prefix: 1, Tiers: [NumTiers]int{0, 1, 0}}},
		{"same tiers: confirmed beats predicted", func(t *testing.T, ix *Index) {
			ix.Predict("r", h[:2], 0)
			must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
		}, dev(2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Config{BlockSize: 4})
			tc.setup(t, ix)
			if got := ix.Match(h, []string{"r"}, nil)[0]; got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestMatchCandidates(t *testing.T) {
	ix := New(Config{BlockSize: 4})
	must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
	h := HashTokens(nil, tABCD, 4, "")
	out := make([]Overlap, 1, 8)
	out[0] = dev(9) // stale content must be cleared
	out = ix.Match(h, []string{"x", "r", "r"}, out)
	if len(out) != 3 || out[0] != (Overlap{}) || out[1] != dev(2) || out[2] != dev(2) {
		t.Fatalf("got %+v", out)
	}
	if got := ix.Match(nil, []string{"r"}, out); got[0] != (Overlap{}) {
		t.Fatalf("empty prompt matched %+v", got)
	}
	if got := ix.Match(h, nil, out); len(got) != 0 {
		t.Fatalf("no candidates gave %d results", len(got))
	}
}

// TestMatchManyRanks covers more candidate ranks than fit on Match's stack.
func TestMatchManyRanks(t *testing.T) {
	ix := New(Config{BlockSize: 4})
	var cands []string
	for i := range 20 {
		name := fmt.Sprint("r", i)
		cands = append(cands, name)
		for rank := range 3 {
			n := 1 + (i+rank)%4
			must(t, ix.ApplyStored(name, rank, Stored{BlockHashes: []uint64{1, 2, 3, 4}[:n], TokenIDs: tABCD[:4*n]}))
		}
	}
	h := HashTokens(nil, tABCD, 4, "")
	for range 3 { // pooled buffers are reused
		out := ix.Match(h, cands, nil)
		for i, o := range out {
			if want := dev(bestOf3(i)); o != want {
				t.Fatalf("replica %d: %+v, want %+v", i, o, want)
			}
		}
	}
}

func bestOf3(i int) int {
	b := 0
	for rank := range 3 {
		b = max(b, 1+(i+rank)%4)
	}
	return b
}

func TestMatchDoesNotAllocate(t *testing.T) {
	ix := New(Config{BlockSize: 4})
	for r := range 8 {
		must(t, ix.ApplyStored(fmt.Sprint("r", r), 0, Stored{BlockHashes: []uint64{1, 2, 3, 4}, TokenIDs: tABCD}))
	}
	ix.Predict("r1", HashTokens(nil, tABCD, 4, ""), 0)
	h := HashTokens(nil, tABCD, 4, "")
	cands := []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}
	out := make([]Overlap, len(cands))
	if n := testing.AllocsPerRun(50, func() { out = ix.Match(h, cands, out) }); n != 0 {
		t.Fatalf("Match allocated %v times per call", n)
	}
	if out[0] != dev(4) {
		t.Fatalf("got %+v", out[0])
	}
}
