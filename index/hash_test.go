package index

import (
	"slices"
	"strings"
	"testing"
)

func TestHashTokensMatchesNaiveChain(t *testing.T) {
	cases := []struct {
		name      string
		tokens    []uint32
		blockSize int
		lora      string
		wantN     int
	}{
		{"empty", nil, 16, "", 0},
		{"shorter than a block", toks(0, 15), 16, "", 0},
		{"exact blocks", toks(0, 64), 16, "", 4},
		{"partial trailing block is not hashed", toks(0, 70), 16, "", 4},
		{"lora seeds the chain", toks(0, 64), 16, "adapter-1", 4},
		{"default block size", toks(0, 40), 0, "", 2},
		{"large tokens little-endian", []uint32{0xffffffff, 0x01020304, 7, 0x80000000}, 2, "", 2},
		{"long blocks (over 240 bytes)", toks(5, 256), 128, "x", 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := HashTokens(nil, tc.tokens, tc.blockSize, tc.lora)
			bs := tc.blockSize
			if bs == 0 {
				bs = DefaultBlockSize
			}
			want := naiveChain(tc.tokens, bs, naiveSeed(tc.lora))
			if len(got) != tc.wantN || !slices.Equal(got, want) {
				t.Fatalf("got %x, want %x (%d blocks)", got, want, tc.wantN)
			}
		})
	}
}

func TestHashChainProperties(t *testing.T) {
	base := toks(0, 64)
	h := HashTokens(nil, base, 16, "")
	changed := slices.Clone(base)
	changed[40]++ // inside block 2
	h2 := HashTokens(nil, changed, 16, "")
	if !slices.Equal(h[:2], h2[:2]) || h[2] == h2[2] || h[3] == h2[3] {
		t.Fatalf("a change in block 2 must change blocks 2.. only: %x vs %x", h, h2)
	}
	if l := HashTokens(nil, base, 16, "a"); l[0] == h[0] || l[3] == h[3] {
		t.Fatalf("lora must change every hash")
	}
	prefix := []uint64{42}
	if got := HashTokens(prefix, base, 16, ""); got[0] != 42 || !slices.Equal(got[1:], h) {
		t.Fatalf("HashTokens must append to dst: %x", got)
	}
}

func TestHashTextApproximateMode(t *testing.T) {
	text := strings.Repeat("You are a helpful assistant. ", 10) // 290 bytes
	h := HashText(nil, text, 64, "")
	if len(h) != 4 {
		t.Fatalf("%d chunks of 64 from %d bytes, want 4", len(h), len(text))
	}
	if !slices.Equal(h, HashText(nil, text, 0, "")) {
		t.Fatalf("chunkBytes 0 must mean DefaultTextChunkBytes")
	}
	other := text[:130] + "X" + text[131:]
	h2 := HashText(nil, other, 64, "")
	if !slices.Equal(h[:2], h2[:2]) || h[2] == h2[2] {
		t.Fatalf("shared leading text must give shared leading hashes only")
	}
	if HashText(nil, text, 64, "a")[0] == h[0] {
		t.Fatalf("lora must seed text chains too")
	}
	// Text whose bytes equal a token block must not collide with it.
	tokens := toks(0x61616161, 16)
	var conv blockConverter
	asText := string(conv.bytes(tokens))
	if HashText(nil, asText, 64, "")[0] == HashTokens(nil, tokens, 16, "")[0] {
		t.Fatalf("text and token hashes share a domain")
	}
}

func TestHashingDoesNotAllocate(t *testing.T) {
	tokens := toks(0, 8192)
	text := strings.Repeat("abcdefgh", 1024)
	dst := make([]uint64, 0, 512)
	if n := testing.AllocsPerRun(20, func() { dst = HashTokens(dst[:0], tokens, 16, "lora") }); n != 0 {
		t.Errorf("HashTokens allocated %v times", n)
	}
	if n := testing.AllocsPerRun(20, func() { dst = HashText(dst[:0], text, 64, "") }); n != 0 {
		t.Errorf("HashText allocated %v times", n)
	}
}
