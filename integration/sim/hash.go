package sim

// engineHash is the simulated engine's own block hash, deliberately unlike the router's
// (xxh3): FNV-1a over the block's tokens, chained from the parent block's hash or, for a first
// block, from the engine's root seed (vLLM's per-process NONE_HASH), then scrambled.
func engineHash(parent uint64, toks []uint32) uint64 {
	h := parent ^ 0xcbf29ce484222325
	for _, t := range toks {
		h = (h ^ uint64(t)) * 0x100000001b3
	}
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}
