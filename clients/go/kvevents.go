package switchyard

import v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"

// StoredEvent wraps a BlockStored report (newly cached blocks, in chain
// order) as a KV event.
func StoredEvent(s *v1.BlockStored) *v1.KVEvent {
	return &v1.KVEvent{Event: &v1.KVEvent_Stored{Stored: s}}
}

// RemovedEvent reports blocks evicted from tier (other tiers keep their
// copies).
func RemovedEvent(tier v1.Tier, blockHashes ...uint64) *v1.KVEvent {
	return &v1.KVEvent{Event: &v1.KVEvent_Removed{Removed: &v1.BlockRemoved{BlockHashes: blockHashes, Tier: tier}}}
}

// ClearedEvent reports that the engine dropped its whole cache.
func ClearedEvent() *v1.KVEvent {
	return &v1.KVEvent{Event: &v1.KVEvent_Cleared{Cleared: &v1.AllBlocksCleared{}}}
}
