package vllm

// DropReason names why an event was not passed to the Sink. Every dropped
// event is counted under exactly one reason.
type DropReason uint8

// Why events are dropped. DropSpecKind and DropUnknownTag are skips by design
// (events this package does not index); the others are invalid events.
const (
	// DropUnknownTag: an event type this package does not know (or no tag).
	DropUnknownTag DropReason = iota
	// DropSpecKind: a store in, or a removal from, a KV-cache group that is
	// not full attention (sliding window, mamba, ...).
	DropSpecKind
	// DropNotEvent: an element of the events list is neither an array nor a map.
	DropNotEvent
	// DropMissingField: a required field is absent.
	DropMissingField
	// DropFieldType: a field has the wrong msgpack type.
	DropFieldType
	// DropFieldRange: an integer field is out of range (token id, group index).
	DropFieldRange
	// DropBlockSize: block_size is not in 1..Limits.MaxBlockSize.
	DropBlockSize
	// DropHash: a binary block hash is empty or longer than 64 bytes.
	DropHash
	// DropEmptyHashes: block_hashes is empty.
	DropEmptyHashes
	// DropTokenCount: token_ids is neither empty nor block_size per block.
	DropTokenCount
	// DropMedium: medium names no known Tier.
	DropMedium
	// DropTooLarge: the event has more blocks or tokens than Limits allow.
	DropTooLarge
	numDropReasons
)

var dropNames = [numDropReasons]string{
	DropUnknownTag:   "unknown_tag",
	DropSpecKind:     "spec_kind",
	DropNotEvent:     "not_event",
	DropMissingField: "missing_field",
	DropFieldType:    "field_type",
	DropFieldRange:   "field_range",
	DropBlockSize:    "block_size",
	DropHash:         "hash",
	DropEmptyHashes:  "empty_hashes",
	DropTokenCount:   "token_count",
	DropMedium:       "medium",
	DropTooLarge:     "too_large",
}

// String returns the reason's metric label, e.g. "token_count".
func (r DropReason) String() string {
	if r < numDropReasons {
		return dropNames[r]
	}
	return "unknown"
}

// DropReasons lists every reason, in order, for exporting counters.
func DropReasons() []DropReason {
	out := make([]DropReason, numDropReasons)
	for i := range out {
		out[i] = DropReason(i)
	}
	return out
}

// Drops counts dropped events by reason.
type Drops [numDropReasons]uint32

// Total returns the number of dropped events.
func (d *Drops) Total() int {
	n := 0
	for _, v := range d {
		n += int(v)
	}
	return n
}

// Count returns how many events were dropped for reason r.
func (d *Drops) Count(r DropReason) int {
	if r >= numDropReasons {
		return 0
	}
	return int(d[r])
}
