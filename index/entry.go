package index

// entry is one (block, replica-rank) record packed in a word, so a reader gets
// it with a single atomic load:
//
//	bits  0-31  expiry tick of the predicted entry (valid when entPred is set)
//	bits 32-47  slot: the (replica, rank) it belongs to
//	bits 48-50  confirmed tiers (bit t = Tier t)
//	bit     51  predicted on the device tier (not yet confirmed)
//	bit     63  entOvf: the word is not an entry but the index of the block's
//	            overflow set (a block held by several replica-ranks)
type entry uint64

const (
	entSlotShift = 32
	entTierShift = 48
	entPred      = entry(1) << 51
	entOvf       = entry(1) << 63
	tierMask     = 1<<NumTiers - 1
	deviceBit    = 1 << TierDevice
)

func mkEntry(slot uint16, tiers uint8, pred bool, pexp uint32) entry {
	e := entry(slot)<<entSlotShift | entry(tiers&tierMask)<<entTierShift
	if pred {
		e |= entPred | entry(pexp)
	}
	return e
}

func ovfRef(idx uint32) entry { return entOvf | entry(idx) }

func (e entry) isOvf() bool      { return e&entOvf != 0 }
func (e entry) ovfIndex() uint32 { return uint32(e) }
func (e entry) slot() uint16     { return uint16(e >> entSlotShift) }
func (e entry) tiers() uint8     { return uint8(e>>entTierShift) & tierMask }
func (e entry) pred() bool       { return e&entPred != 0 }
func (e entry) pexp() uint32     { return uint32(e) }
func (e entry) empty() bool      { return e.tiers() == 0 && !e.pred() }

// predLive reports a predicted entry whose expiry tick is after now; ticks wrap,
// so the comparison is on the signed difference.
func (e entry) predLive(now uint32) bool { return e.pred() && int32(e.pexp()-now) > 0 }

// count is the number of index entries the word stands for: one per confirmed
// tier plus one for a prediction (what MaxEntries caps).
func (e entry) count() int {
	n := 0
	for t := range uint8(NumTiers) {
		n += int(e.tiers() >> t & 1)
	}
	if e.pred() {
		n++
	}
	return n
}

// ovfSet lists the entries of a block held by more than one replica-rank,
// sorted by slot. It is immutable once published: writers replace it whole
// (copy on write), so readers can use it after their seqlock check. Sets of
// up to ovfInline entries (most shared blocks) keep them in place, so a copy
// costs one allocation, not two.
type ovfSet struct {
	ents   []entry
	inline [ovfInline]entry
}

// ovfInline is how many entries a set holds without a separate array.
const ovfInline = 3

// newOvfSet returns a set of n zero entries.
func newOvfSet(n int) *ovfSet {
	s := &ovfSet{}
	if n <= ovfInline {
		s.ents = s.inline[:n]
	} else {
		s.ents = make([]entry, n)
	}
	return s
}

// find returns the position of slot in the set and whether it is there.
func (s *ovfSet) find(slot uint16) (int, bool) {
	lo, hi := 0, len(s.ents)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.ents[mid].slot() < slot {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(s.ents) && s.ents[lo].slot() == slot
}
