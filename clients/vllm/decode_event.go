package vllm

import "math"

// noDrop marks an accepted event.
const noDrop = numDropReasons

// field identifies an event field, whichever encoding carried it.
type field uint8

const (
	fUnknown field = iota
	fType
	fHashes
	fParent
	fTokens
	fBlockSize
	fLoRAID
	fMedium
	fLoRAName
	fExtraKeys
	fGroupIdx
	fSpecKind
	fSlidingWindow
)

// Positional layouts after the tag, in vLLM's field order. Trailing fields
// may be omitted (omit_defaults); extra trailing fields are skipped.
var (
	storedLayout  = [...]field{fHashes, fParent, fTokens, fBlockSize, fLoRAID, fMedium, fLoRAName, fExtraKeys, fGroupIdx, fSpecKind, fSlidingWindow}
	removedLayout = [...]field{fHashes, fMedium, fGroupIdx}
)

// fieldByKey maps a map-encoding key to its field.
func fieldByKey(key []byte) field {
	switch string(key) {
	case "type":
		return fType
	case "block_hashes":
		return fHashes
	case "parent_block_hash":
		return fParent
	case "token_ids":
		return fTokens
	case "block_size":
		return fBlockSize
	case "lora_id":
		return fLoRAID
	case "medium":
		return fMedium
	case "lora_name":
		return fLoRAName
	case "extra_keys":
		return fExtraKeys
	case "group_idx":
		return fGroupIdx
	case "kv_cache_spec_kind":
		return fSpecKind
	case "kv_cache_spec_sliding_window":
		return fSlidingWindow
	}
	return fUnknown
}

func kindByTag(tag []byte) EventKind {
	switch string(tag) {
	case "BlockStored":
		return BlockStored
	case "BlockRemoved":
		return BlockRemoved
	case "AllBlocksCleared":
		return AllBlocksCleared
	}
	return 0
}

// rawEvent collects the fields of one event before validation.
type rawEvent struct {
	seen      uint32 // bit per field
	drop      DropReason
	tag       []byte
	hashes    []uint64
	parent    uint64
	hasParent bool
	tokens    []uint32
	blockSize int64
	medium    string
	lora      string
	group     int64
	spec      string
}

func (e *rawEvent) has(f field) bool { return e.seen&(1<<f) != 0 }

// reject records the first reason the event is invalid; reading goes on so
// the stream stays aligned on the next event.
func (e *rawEvent) reject(r DropReason) {
	if e.drop == noDrop {
		e.drop = r
	}
}

// Event nesting: batch array (0) > events array (1) > event (2) > field value (3).
const fieldDepth = 3

// event decodes one element of the events list. A non-nil error is fatal
// for the batch (the stream is no longer aligned); otherwise the event is
// either accepted (drop == noDrop) or dropped for the returned reason.
func (d *Decoder) event() (Event, DropReason, error) {
	d.ev = rawEvent{drop: noDrop}
	k, err := d.r.next()
	if err != nil {
		return Event{}, 0, err
	}
	var kind EventKind
	switch k {
	case kArray:
		kind, err = d.positional()
	case kMap:
		kind, err = d.mapped()
	default:
		return Event{}, DropNotEvent, d.r.skip(2)
	}
	if err != nil {
		return Event{}, 0, err
	}
	ev, drop := d.finish(kind)
	return ev, drop, nil
}

func (d *Decoder) positional() (EventKind, error) {
	r := d.r
	n, err := r.arrayLen()
	if err != nil {
		return 0, err
	}
	if n == 0 {
		d.ev.reject(DropNotEvent)
		return 0, nil
	}
	if k, err := r.next(); err != nil {
		return 0, err
	} else if k != kStr {
		d.ev.reject(DropNotEvent)
		return 0, r.skipN(n, fieldDepth)
	}
	tag, err := r.raw()
	if err != nil {
		return 0, err
	}
	kind := kindByTag(tag)
	var layout []field
	switch kind {
	case BlockStored:
		layout = storedLayout[:]
	case BlockRemoved:
		layout = removedLayout[:]
	}
	for i := 1; i < n; i++ {
		f := fUnknown
		if i-1 < len(layout) {
			f = layout[i-1]
		}
		if err := d.field(f); err != nil {
			return 0, err
		}
	}
	return kind, nil
}

func (d *Decoder) mapped() (EventKind, error) {
	r := d.r
	n, err := r.mapLen()
	if err != nil {
		return 0, err
	}
	for range n {
		k, err := r.next()
		if err != nil {
			return 0, err
		}
		f := fUnknown
		if k == kStr {
			key, err := r.raw()
			if err != nil {
				return 0, err
			}
			f = fieldByKey(key)
		} else if err := r.skip(fieldDepth); err != nil {
			return 0, err
		}
		if err := d.field(f); err != nil {
			return 0, err
		}
	}
	return kindByTag(d.ev.tag), nil
}

// field reads the value of field f into d.ev. Wrong types or ranges reject
// the event but consume the value; only stream-level failures are errors.
func (d *Decoder) field(f field) error {
	r, e := d.r, &d.ev
	k, err := r.next()
	if err != nil {
		return err
	}
	e.seen |= 1 << f
	switch f {
	case fType:
		if k == kStr {
			e.tag, err = r.raw()
			return err
		}
	case fHashes:
		if k == kArray {
			e.hashes, err = d.hashList()
			return err
		}
	case fParent:
		switch k {
		case kNil:
			return r.skip(fieldDepth)
		case kInt, kBin:
			e.hasParent = true
			e.parent, err = d.hash(k)
			return err
		}
	case fTokens:
		switch k {
		case kNil:
			return r.skip(fieldDepth)
		case kArray:
			e.tokens, err = d.tokenList()
			return err
		}
	case fBlockSize:
		if k == kInt {
			e.blockSize, err = r.int64()
			return err
		}
	case fGroupIdx:
		switch k {
		case kNil:
			return r.skip(fieldDepth)
		case kInt:
			e.group, err = r.int64()
			if err == nil && (e.group < 0 || e.group >= maxGroups) {
				e.reject(DropFieldRange)
			}
			return err
		}
	case fMedium, fLoRAName, fSpecKind:
		switch k {
		case kNil:
			return r.skip(fieldDepth)
		case kStr:
			b, err := r.raw()
			s := d.str(b)
			switch f {
			case fMedium:
				e.medium = s
			case fLoRAName:
				e.lora = s
			default:
				e.spec = s
			}
			return err
		}
	default: // lora_id, extra_keys, sliding window, unknown: not used
		return r.skip(fieldDepth)
	}
	e.reject(DropFieldType)
	return r.skip(fieldDepth)
}

// hash reads one block hash: an integer of any width (negative int64 values
// are taken as their two's-complement bits) or bytes, of which the last 8 are
// read big-endian.
func (d *Decoder) hash(k kind) (uint64, error) {
	if k == kInt {
		return d.r.uint64()
	}
	b, err := d.r.raw()
	if err != nil {
		return 0, err
	}
	if len(b) == 0 || len(b) > 64 {
		d.ev.reject(DropHash)
		return 0, nil
	}
	if len(b) > 8 {
		b = b[len(b)-8:]
	}
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

func (d *Decoder) hashList() ([]uint64, error) {
	return readList(d, d.lim.MaxBlocksPerEvent, func(k kind) bool { return k == kInt || k == kBin }, d.hash)
}

func (d *Decoder) tokenList() ([]uint32, error) {
	return readList(d, d.lim.MaxTokensPerEvent, func(k kind) bool { return k == kInt }, d.token)
}

// token reads one token id; ids outside uint32 reject the event.
func (d *Decoder) token(kind) (uint32, error) {
	v, err := d.r.int64()
	if err != nil {
		return 0, err
	}
	if v < 0 || v > math.MaxUint32 {
		d.ev.reject(DropFieldRange)
		return 0, nil
	}
	return uint32(v), nil
}

// readList reads an array of at most limit elements with read. A longer
// array, or elements of a kind accept refuses, reject the event; the values
// are consumed either way.
func readList[T any](d *Decoder, limit int, accept func(kind) bool, read func(kind) (T, error)) ([]T, error) {
	r := d.r
	n, err := r.arrayLen()
	if err != nil {
		return nil, err
	}
	if n > limit {
		d.ev.reject(DropTooLarge)
		return nil, r.skipN(n, fieldDepth+1)
	}
	out := make([]T, n)
	for i := range out {
		k, err := r.next()
		if err != nil {
			return nil, err
		}
		if !accept(k) {
			d.ev.reject(DropFieldType)
			if err := r.skip(fieldDepth + 1); err != nil {
				return nil, err
			}
			continue
		}
		if out[i], err = read(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// finish validates the collected fields and builds the Event.
func (d *Decoder) finish(kind EventKind) (Event, DropReason) {
	e := &d.ev
	if e.drop != noDrop {
		return Event{}, e.drop
	}
	if kind == 0 {
		return Event{}, DropUnknownTag
	}
	if kind == AllBlocksCleared {
		return Event{Kind: kind}, noDrop
	}
	if !e.has(fHashes) || (kind == BlockStored && !e.has(fBlockSize)) {
		return Event{}, DropMissingField
	}
	group := int(e.group)
	if kind == BlockStored {
		full := FullAttention(e.spec)
		if _, known := d.groups[group]; known || len(d.groups) < maxGroups {
			d.groups[group] = full
		}
		if !full {
			return Event{}, DropSpecKind
		}
	} else if full, known := d.groups[group]; known && !full {
		return Event{}, DropSpecKind
	}
	if len(e.hashes) == 0 {
		return Event{}, DropEmptyHashes
	}
	if _, ok := TierOf(e.medium); !ok {
		return Event{}, DropMedium
	}
	ev := Event{Kind: kind, BlockHashes: e.hashes, Medium: e.medium, GroupIdx: group, SpecKind: e.spec}
	if kind == BlockRemoved {
		return ev, noDrop
	}
	if e.blockSize < 1 || e.blockSize > int64(d.lim.MaxBlockSize) {
		return Event{}, DropBlockSize
	}
	if len(e.tokens) != 0 && int64(len(e.tokens)) != e.blockSize*int64(len(e.hashes)) {
		return Event{}, DropTokenCount
	}
	ev.Parent, ev.HasParent = e.parent, e.hasParent
	ev.TokenIDs, ev.BlockSize, ev.LoRAName = e.tokens, int(e.blockSize), e.lora
	return ev, noDrop
}
