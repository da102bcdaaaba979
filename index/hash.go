package index

import (
	"slices"

	"github.com/zeebo/xxh3"
)

// DefaultBlockSize is the router block size in tokens when Config.BlockSize is 0.
// It equals vLLM's default so engine blocks map one to one.
const DefaultBlockSize = 16

// DefaultTextChunkBytes is the pseudo-block size of the approximate text mode
// (HashText): 64 bytes is roughly 16 tokens of English text.
const DefaultTextChunkBytes = 64

// textDomain separates text-mode hashes from token-mode hashes, so a text chunk
// can never collide with a token block whose bytes happen to be equal.
const textDomain = 0x7478742d6d6f6465

// loraSeed is the chain seed of a block with no parent: 0 for the base model,
// the xxh3 hash of the adapter name otherwise, so identical tokens under
// different adapters (whose KV differs) never share a hash.
func loraSeed(lora string) uint64 {
	if lora == "" {
		return 0
	}
	return xxh3.HashString(lora)
}

// HashTokens appends to dst the router's chained hash of every FULL block of
// tokens and returns the extended slice. Block i's hash is xxh3-64 of its
// little-endian uint32 tokens seeded with block i-1's hash; block 0 is seeded
// by the LoRA name ("" = base model). A hash therefore names a whole prefix,
// which is what lets Match walk a request's hashes in order. A trailing partial
// block is not hashed (engines do not cache it). blockSize <= 0 means
// DefaultBlockSize. It does not allocate when cap(dst) has room for the blocks.
//
// Clients that already hold chained hashes of their own (Mooncake-style
// hash_ids) may pass those to Match and Predict as they are, instead.
func HashTokens(dst []uint64, tokens []uint32, blockSize int, lora string) []uint64 {
	if blockSize <= 0 {
		blockSize = DefaultBlockSize
	}
	return chainTokens(dst, tokens, blockSize, loraSeed(lora))
}

// chainTokens hashes the full blocks of tokens continuing the chain from seed
// (the parent's router hash, or a LoRA seed for a root block).
func chainTokens(dst []uint64, tokens []uint32, blockSize int, seed uint64) []uint64 {
	n := len(tokens) / blockSize
	dst = slices.Grow(dst, n)
	var conv blockConverter
	for i := range n {
		seed = xxh3.HashSeed(conv.bytes(tokens[i*blockSize:(i+1)*blockSize]), seed)
		dst = append(dst, seed)
	}
	return dst
}

// HashText is the APPROXIMATE mode, for data planes that cannot tokenize: it
// cuts text into pseudo-blocks of chunkBytes bytes (full chunks only; a
// trailing partial chunk is not hashed) and chains them exactly like
// HashTokens, in a hash domain of its own. The hashes do not correspond to the
// engine's token blocks, so they never match engine KV events; they only give
// prefix affinity between requests that share leading text, through Predict
// (use DefaultTextPredictedTTL). chunkBytes <= 0 means DefaultTextChunkBytes.
// It does not allocate when cap(dst) has room.
func HashText(dst []uint64, text string, chunkBytes int, lora string) []uint64 {
	if chunkBytes <= 0 {
		chunkBytes = DefaultTextChunkBytes
	}
	n := len(text) / chunkBytes
	dst = slices.Grow(dst, n)
	seed := loraSeed(lora) ^ textDomain
	for i := range n {
		seed = xxh3.HashStringSeed(text[i*chunkBytes:(i+1)*chunkBytes], seed)
		dst = append(dst, seed)
	}
	return dst
}
