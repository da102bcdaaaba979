package index_test

import (
	"fmt"
	"time"

	"github.com/switchyard-llm/switchyard/index"
)

func ExampleHashTokens() {
	tokens := make([]uint32, 40) // 2 full blocks of 16 and 8 tokens left over
	for i := range tokens {
		tokens[i] = uint32(1000 + i)
	}
	hashes := index.HashTokens(nil, tokens, 16, "")
	withLoRA := index.HashTokens(nil, tokens, 16, "sql-adapter")
	fmt.Println(len(hashes), hashes[0] != withLoRA[0])
	// Output: 2 true
}

func ExampleHashText() {
	// Approximate mode: 64-byte pseudo-blocks, for data planes without a tokenizer.
	a := index.HashText(nil, "You are a terse assistant that answers in JSON. Always include a status field. Question: what is 2+2?", 64, "")
	b := index.HashText(nil, "You are a terse assistant that answers in JSON. Always include a status field. Question: who wrote Faust?", 64, "")
	fmt.Println(len(a), a[0] == b[0])
	// Output: 1 true
}

func ExampleParseTier() {
	for _, s := range []string{"GPU", "cpu", "disk", "tape"} {
		t, err := index.ParseTier(s)
		fmt.Println(t, err)
	}
	// Output:
	// device <nil>
	// host <nil>
	// disk <nil>
	// device index: unknown tier: "tape" (want device|gpu|host|cpu|disk)
}

func ExampleIndex_Match() {
	ix := index.New(index.Config{BlockSize: 4})
	prompt := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}

	// Replica a's engine stored the first two blocks on its GPU and
	// offloaded the first one to CPU memory as well.
	_ = ix.ApplyStored("a", 0, index.Stored{BlockHashes: []uint64{0xa1, 0xa2}, TokenIDs: prompt[:8]})
	_ = ix.ApplyStored("a", 0, index.Stored{BlockHashes: []uint64{0xa1}, Tier: index.TierHost})
	// Replica b holds the first block, on CPU only.
	_ = ix.ApplyStored("b", 0, index.Stored{BlockHashes: []uint64{0xb1}, TokenIDs: prompt[:4], Tier: index.TierHost})

	hashes := index.HashTokens(nil, prompt, ix.BlockSize(), "")
	for i, o := range ix.Match(hashes, []string{"a", "b", "c"}, nil) {
		fmt.Printf("%c device=%d prefix=%d tiers=%v\n", 'a'+i, o.Device, o.Prefix, o.Tiers)
	}
	// Output:
	// a device=2 prefix=2 tiers=[2 0 0]
	// b device=0 prefix=1 tiers=[0 1 0]
	// c device=0 prefix=0 tiers=[0 0 0]
}

func ExampleIndex_Predict() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ix := index.New(index.Config{BlockSize: 4, Now: func() time.Time { return now }})
	hashes := index.HashTokens(nil, []uint32{1, 2, 3, 4, 5, 6, 7, 8}, 4, "")

	ix.Predict("a", hashes, 0) // default TTL: 2s
	o := ix.Match(hashes, []string{"a"}, nil)[0]
	fmt.Println(o.Device, o.Predicted)

	now = now.Add(2 * time.Second)
	o = ix.Match(hashes, []string{"a"}, nil)[0]
	fmt.Println(o.Device, o.Predicted)
	// Output:
	// 2 2
	// 0 0
}

func ExampleIndex_ApplyStored() {
	ix := index.New(index.Config{BlockSize: 16})
	err := ix.ApplyStored("a", 0, index.Stored{
		BlockHashes: []uint64{7}, Parent: 6, HasParent: true, TokenIDs: make([]uint32, 16),
	})
	fmt.Println(err)
	fmt.Println(ix.Stats().Orphans)
	// Output:
	// stored event of replica "a" rank 0: index: parent block is unknown: parent engine hash 0x6
	// 1
}
