package index

import (
	"errors"
	"testing"
)

// eventCase is a scripted sequence of operations on a fresh index (router
// block size 4) followed by expectations on Match and Stats.
type eventCase struct {
	name string
	run  func(t *testing.T, ix *Index) // performs the operations, checks errors
	// prompt is matched against candidates {"r", "s"}.
	prompt      []uint32
	lora        string
	want        Overlap // for "r"
	wantS       Overlap // for "s"
	wantEntries int
	wantBlocks  int
	check       func(t *testing.T, st Stats)
}

// Token blocks of 4 used by the cases: A B C D chain in that order.
var (
	tA, tB, tC, tD = toks(100, 4), toks(200, 4), toks(300, 4), toks(400, 4)
	tAB            = concat(tA, tB)
	tABCD          = concat(tA, tB, tC, tD)
)

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v, want %v", err, target)
	}
}

func dev(n int) Overlap { return Overlap{Device: n, Prefix: n, Tiers: [NumTiers]int{n, 0, 0}} }

func TestEventEdgeCases(t *testing.T) {
	cases := []eventCase{
		{
			name: "engine block twice the router's is split",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tABCD, BlockSize: 8}))
			},
			prompt: tABCD, want: dev(4), wantEntries: 4, wantBlocks: 4,
		},
		{
			name: "removing a split engine block removes all its router blocks",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tABCD, BlockSize: 8}))
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{2}}))
			},
			prompt: tABCD, want: dev(2), wantEntries: 2, wantBlocks: 2,
		},
		{
			name: "child of a split block chains from its last router block",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tAB, BlockSize: 8}))
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{2}, Parent: 1, HasParent: true, TokenIDs: concat(tC, tD), BlockSize: 8}))
			},
			prompt: tABCD, want: dev(4), wantEntries: 4, wantBlocks: 4,
		},
		{
			name: "engine block size not a multiple is rejected",
			run: func(t *testing.T, ix *Index) {
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: toks(0, 6), BlockSize: 6}), ErrBlockSize)
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: toks(0, 2), BlockSize: 2}), ErrBlockSize)
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: toks(0, 4), BlockSize: -4}), ErrBlockSize)
			},
			prompt: tA,
			check: func(t *testing.T, st Stats) {
				if st.Rejected[ReasonBlockSize] != 3 || len(st.Replicas) != 0 {
					t.Errorf("rejected %v replicas %v", st.Rejected, st.Replicas)
				}
			},
		},
		{
			name: "token count mismatch is rejected",
			run: func(t *testing.T, ix *Index) {
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: concat(tA, tB[:3])}), ErrTokenCount)
			},
			prompt: tAB,
			check:  func(t *testing.T, st Stats) { wantCount(t, st.Rejected[ReasonTokenCount], 1) },
		},
		{
			name: "orphan parent is rejected and counted, never guessed",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{3}, Parent: 99, HasParent: true, TokenIDs: tB}), ErrOrphan)
			},
			prompt: tAB, want: dev(1), wantEntries: 1, wantBlocks: 1,
			check: func(t *testing.T, st Stats) {
				wantCount(t, st.Orphans, 1)
				wantCount(t, st.Rejected[ReasonOrphan], 1)
			},
		},
		{
			name: "a parent known only on another rank is an orphan",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
				wantErr(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{2}, Parent: 1, HasParent: true, TokenIDs: tB}), ErrOrphan)
			},
			prompt: tAB, want: dev(1), wantEntries: 1, wantBlocks: 1,
		},
		{
			name: "duplicate stores are idempotent",
			run: func(t *testing.T, ix *Index) {
				for range 3 {
					must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				}
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{2}}))
			},
			prompt: tAB, want: dev(1), wantEntries: 1, wantBlocks: 1,
		},
		{
			name: "unknown hashes in a removal are counted, known ones applied",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{77, 2, 78}}))
				must(t, ix.ApplyRemoved("nobody", 0, Removed{BlockHashes: []uint64{1, 2}}))
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{1}, Tier: TierDisk}))
			},
			prompt: tAB, want: dev(1), wantEntries: 1, wantBlocks: 1,
			check: func(t *testing.T, st Stats) { wantCount(t, st.UnknownRemoved, 5) },
		},
		{
			name: "removal on one tier leaves the block's other tiers",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, Tier: TierHost}))
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{2}, Tier: TierDisk}))
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{1, 2}, Tier: TierDevice}))
				must(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{2}, Tier: TierHost}))
			},
			prompt: tAB, want: Overlap{Prefix: 2, Tiers: [NumTiers]int{0, 1, 1}}, wantEntries: 2, wantBlocks: 2,
			check: func(t *testing.T, st Stats) {
				if st.Replicas["r"] != [NumTiers]int{0, 1, 1} {
					t.Errorf("replica tiers %v", st.Replicas["r"])
				}
			},
		},
		{
			name: "offload of an unknown hash rejects the whole event",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 5}, Tier: TierHost}), ErrUnknownBlock)
				wantErr(t, ix.ApplyStored("s", 0, Stored{BlockHashes: []uint64{1}, Tier: TierHost}), ErrUnknownBlock)
			},
			prompt: tA, want: dev(1), wantEntries: 1, wantBlocks: 1,
			check: func(t *testing.T, st Stats) { wantCount(t, st.Rejected[ReasonUnknownBlock], 2) },
		},
		{
			name: "a clear in the middle of a chain orphans its continuation",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				must(t, ix.ApplyStored("r", 1, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}))
				ix.Clear("r", 0)
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{3}, Parent: 2, HasParent: true, TokenIDs: tC}), ErrOrphan)
				ix.Clear("r", 7)
			},
			prompt: tABCD, want: dev(1), wantEntries: 1, wantBlocks: 1,
		},
		{
			name: "other replicas survive a clear",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				must(t, ix.ApplyStored("s", 0, Stored{BlockHashes: []uint64{1, 2, 3}, TokenIDs: concat(tAB, tC)}))
				ix.Clear("r", 0)
			},
			prompt: tABCD, wantS: dev(3), wantEntries: 3, wantBlocks: 3,
		},
		{
			name: "LoRA adapters never share blocks with the base model",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB, LoRA: "sql"}))
				must(t, ix.ApplyStored("s", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
			},
			prompt: tAB, lora: "sql", want: dev(2), wantEntries: 4, wantBlocks: 4,
		},
		{
			name: "an engine hash stored again with other content drops the old blocks",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{2}, TokenIDs: tC}))
			},
			prompt: tAB, want: dev(1), wantEntries: 2, wantBlocks: 2,
			check: func(t *testing.T, st Stats) { wantCount(t, st.Remapped, 1) },
		},
		{
			name: "an event naming one engine hash twice is cleared completely",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{5, 5}, TokenIDs: tAB}))
				ix.Clear("r", 0)
			},
			prompt: tAB,
		},
		{
			name: "bad rank and bad tier are rejected",
			run: func(t *testing.T, ix *Index) {
				wantErr(t, ix.ApplyStored("r", -1, Stored{BlockHashes: []uint64{1}, TokenIDs: tA}), ErrRank)
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1}, TokenIDs: tA, Tier: 9}), ErrUnknownTier)
				wantErr(t, ix.ApplyRemoved("r", 0, Removed{BlockHashes: []uint64{1}, Tier: 3}), ErrUnknownTier)
				wantErr(t, ix.ApplyRemoved("r", -2, Removed{BlockHashes: []uint64{1}}), ErrRank)
			},
			prompt: tA,
			check: func(t *testing.T, st Stats) {
				wantCount(t, st.Rejected[ReasonRank], 2)
				wantCount(t, st.Rejected[ReasonUnknownTier], 2)
			},
		},
		{
			name: "remove replica forgets every rank",
			run: func(t *testing.T, ix *Index) {
				must(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{1, 2}, TokenIDs: tAB}))
				must(t, ix.ApplyStored("r", 3, Stored{BlockHashes: []uint64{1}, TokenIDs: tA, Tier: TierHost}))
				ix.Predict("r", HashTokens(nil, tABCD, 4, ""), 0)
				ix.RemoveReplica("r")
				wantErr(t, ix.ApplyStored("r", 0, Stored{BlockHashes: []uint64{3}, Parent: 2, HasParent: true, TokenIDs: tC}), ErrOrphan)
			},
			prompt: tABCD,
			check: func(t *testing.T, st Stats) {
				if _, ok := st.Replicas["r"]; ok || st.Predicted != 0 {
					t.Errorf("replica still listed: %+v", st)
				}
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(Config{BlockSize: 4})
			tc.run(t, ix)
			got := ix.Match(HashTokens(nil, tc.prompt, 4, tc.lora), []string{"r", "s"}, nil)
			if got[0] != tc.want || got[1] != tc.wantS {
				t.Errorf("match r=%+v s=%+v, want r=%+v s=%+v", got[0], got[1], tc.want, tc.wantS)
			}
			st := ix.Stats()
			if st.Entries != tc.wantEntries || st.Blocks != tc.wantBlocks {
				t.Errorf("entries %d blocks %d, want %d %d", st.Entries, st.Blocks, tc.wantEntries, tc.wantBlocks)
			}
			if tc.check != nil {
				tc.check(t, st)
			}
		})
	}
}

func wantCount[T comparable](t *testing.T, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}
