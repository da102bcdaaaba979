package vllm

import "strings"

// EventKind tells which change to an engine's prefix cache an Event reports.
type EventKind uint8

// The three kinds of KV-cache event vLLM publishes.
const (
	// BlockStored reports blocks newly cached by the engine.
	BlockStored EventKind = iota + 1
	// BlockRemoved reports blocks the engine evicted.
	BlockRemoved
	// AllBlocksCleared reports that the engine dropped its whole cache, on every tier.
	AllBlocksCleared
)

// String returns vLLM's tag for the kind, e.g. "BlockStored".
func (k EventKind) String() string {
	switch k {
	case BlockStored:
		return "BlockStored"
	case BlockRemoved:
		return "BlockRemoved"
	case AllBlocksCleared:
		return "AllBlocksCleared"
	}
	return "unknown"
}

// Event is one decoded, validated KV-cache event. Hashes are the engine's own
// opaque block hashes (the low 64 bits of its digest); the consumer keys its
// own hash on TokenIDs and maps engine hashes to it for removals.
type Event struct {
	// Kind says which fields are meaningful: BlockStored uses all of them,
	// BlockRemoved uses BlockHashes, Medium and GroupIdx, AllBlocksCleared none.
	Kind EventKind
	// BlockHashes lists the blocks in prefix order.
	BlockHashes []uint64
	// Parent is the hash of the block preceding BlockHashes[0], valid when HasParent.
	Parent    uint64
	HasParent bool
	// TokenIDs holds BlockSize tokens per block, or is empty when the engine sent
	// none (CPU-offload stores), in which case blocks resolve by engine hash.
	TokenIDs  []uint32
	BlockSize int
	// LoRAName is the adapter the blocks were computed with ("" for the base model).
	LoRAName string
	// Medium is the engine's storage medium as sent ("GPU", "CPU", ...; "" when
	// absent, which older engines mean as GPU). See Tier.
	Medium string
	// GroupIdx is the KV-cache group of hybrid models (0 when absent).
	GroupIdx int
	// SpecKind is the group's kv_cache_spec_kind ("" when absent). Only
	// full-attention groups are passed on; see FullAttention.
	SpecKind string
}

// Tier is the storage tier switchyard credits separately when scoring overlap.
type Tier string

// The tiers a Medium maps to.
const (
	TierDevice Tier = "device" // accelerator memory (GPU, ...)
	TierHost   Tier = "host"   // CPU memory (offloaded KV)
	TierDisk   Tier = "disk"   // local or remote storage
)

// TierOf maps a vLLM medium string to a Tier, case-insensitively. An empty
// medium is the device tier, which is what engines that omit it mean. The
// second result is false for a medium this package does not know.
func TierOf(medium string) (Tier, bool) {
	switch strings.ToUpper(medium) {
	case "", "GPU", "CUDA", "HBM", "DEVICE", "XPU", "TPU", "NPU", "HPU":
		return TierDevice, true
	case "CPU", "HOST", "DRAM", "CPU_PINNED":
		return TierHost, true
	case "DISK", "SSD", "NVME", "FILE", "LOCAL_DISK", "STORAGE":
		return TierDisk, true
	}
	return "", false
}

// Tier returns the event's storage tier. Events handed out by this package
// always carry a known medium, so this is never empty for them.
func (e Event) Tier() Tier {
	t, _ := TierOf(e.Medium)
	return t
}

// FullAttention reports whether a kv_cache_spec_kind names a full-attention
// group, whose blocks form reusable prefixes. An absent kind counts as full
// attention: engines without hybrid groups omit it.
func FullAttention(specKind string) bool {
	switch specKind {
	case "", "full_attention", "mla_attention":
		return true
	}
	return false
}

// Batch is one decoded EventBatch from one publisher, in sequence order.
type Batch struct {
	// Replica names the engine replica, as configured on the Endpoint.
	Replica string
	// Rank is the data-parallel rank: the payload's data_parallel_rank when
	// present, otherwise the rank the endpoint's port offset implies.
	Rank int
	// Seq is the publisher's sequence number for this batch.
	Seq uint64
	// Time is the engine's timestamp (seconds since the Unix epoch).
	Time float64
	// Replayed is true when the batch came from the replay socket to fill a gap.
	Replayed bool
	// Events are the accepted events in order; dropped ones are only counted.
	Events []Event
}
