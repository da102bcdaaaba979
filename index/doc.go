// Package index is switchyard's memory of which replica holds which KV-cache
// blocks, on which tier. It sits on the hot path of every routing decision
// and absorbs every engine's KV events; it knows nothing about load, policy
// or transport.
//
// # Hashing
//
// The router owns its block hash (HashTokens): xxh3-64 over each full block's
// little-endian uint32 tokens, seeded with the previous block's hash, the
// first block seeded by the LoRA name. A hash therefore names a whole prefix.
// Engines' own hashes are opaque: the index recomputes router hashes from the
// token ids of Stored events and keeps, per (replica, DP rank), a map from
// engine hash to router hashes that serves Removed events, offload stores
// without tokens and parent resolution. An engine block that is k router
// blocks long becomes k router blocks. HashText is an APPROXIMATE mode for
// data planes that cannot tokenize: fixed-size byte chunks chained the same
// way, useful only together with Predict. Clients may also pass precomputed
// chained hashes of their own to Match and Predict.
//
// # Tiers and matching
//
// A block may sit on the device (GPU), host (CPU) and disk tiers of a replica
// at once. Match walks a request's hashes in order for a set of candidate
// replicas and reports, per candidate, the leading run on the device and the
// leading run on any tier with its tier mix, the best over the replica's DP
// ranks. It stops at the first block no candidate holds and does not
// allocate.
//
// # Predictions
//
// Predict records blocks a replica is about to hold because a request was
// just routed there; predictions expire after a TTL (millisecond resolution),
// count as device blocks until then, and always yield to the engine's own
// events.
//
// # Bounded memory
//
// Config.MaxEntries caps (block, replica-rank, tier) entries, predictions
// included; beyond it the least recently stored or predicted blocks are
// evicted and counted (see evict.go).
//
// # Concurrency
//
// Writers (events, Predict, Stats) are serialized by one mutex per Index (one
// Index per model). Match takes no lock: the block table is sharded by hash,
// each shard an open-addressing table behind a sequence lock that readers
// only read (see table.go), so readers neither block writers nor each other.
// index/README.md has the benchmark figures.
package index
