package index

// predOp is what a change does to the predicted flag of an entry.
type predOp uint8

const (
	predKeep    predOp = iota
	predSet            // predict until pexp (or later, if already predicted longer)
	predClear          // drop the prediction
	predClearIf        // drop the prediction if it still expires at pexp (sweeper)
)

// change is one edit of one (block, slot) entry.
type change struct {
	set, clr uint8 // confirmed tier bits to add / remove
	pred     predOp
	pexp     uint32
	touch    bool // refresh the block's LRU recency
}

// apply returns the entry after the change. A confirmed device tier always
// removes a prediction: confirmed state wins.
func (c change) apply(old entry, slot uint16) entry {
	tiers := old.tiers()&^c.clr | c.set
	pred, pexp := old.pred(), old.pexp()
	switch c.pred {
	case predSet:
		if !pred || int32(c.pexp-pexp) > 0 {
			pexp = c.pexp
		}
		pred = true
	case predClear:
		pred = false
	case predClearIf:
		pred = pred && pexp != c.pexp
	}
	if tiers&deviceBit != 0 {
		pred = false
	}
	return mkEntry(slot, tiers, pred, pexp)
}

// modify applies c to block m's entry for slot (writer only), creating or
// deleting the block as needed and keeping every counter in step. It returns
// the entry before and after; an absent entry reads as an empty one.
func (ix *Index) modify(m uint64, slot uint16, c change) (old, nw entry) {
	sh := ix.shardOf(m)
	t := sh.tab.Load()
	w, i, found := t.get(m)
	old = mkEntry(slot, 0, false, 0)
	var set *ovfSet
	pos, inSet := 0, false
	if found {
		if w.isOvf() {
			set = sh.getOvf(w.ovfIndex())
			if pos, inSet = set.find(slot); inSet {
				old = set.ents[pos]
			}
		} else if w.slot() == slot {
			old = w
		}
	}
	nw = c.apply(old, slot)
	if nw == old {
		if found && c.touch {
			*t.stamp(i) = ix.nextStamp()
		}
		return old, nw
	}
	ix.account(slot, old, nw)
	sh.begin()
	switch {
	case !found:
		sh.insert(m, nw, ix.nextStamp())
		ix.counts.blocks++
	case set == nil && w.slot() == slot:
		if nw.empty() {
			sh.remove(i)
			ix.counts.blocks--
		} else {
			t.at(i).ent.Store(uint64(nw))
		}
	case set == nil:
		pair := newOvfSet(2)
		pair.ents[0], pair.ents[1] = w, nw
		if nw.slot() < w.slot() {
			pair.ents[0], pair.ents[1] = nw, w
		}
		t.at(i).ent.Store(uint64(ovfRef(sh.putOvf(pair))))
	case inSet && nw.empty() && len(set.ents) == 2:
		t.at(i).ent.Store(uint64(set.ents[1-pos]))
		sh.freeOvf(w.ovfIndex())
	default:
		sh.replaceOvf(w.ovfIndex(), editSet(set.ents, pos, inSet, nw))
	}
	sh.end()
	if found && c.touch && !nw.empty() {
		*t.stamp(i) = ix.nextStamp()
	}
	return old, nw
}

// editSet returns a new set holding ents with position pos replaced by nw
// (inSet), nw inserted at pos (!inSet), or the entry at pos dropped (nw
// empty).
func editSet(ents []entry, pos int, inSet bool, nw entry) *ovfSet {
	switch {
	case inSet && nw.empty():
		s := newOvfSet(len(ents) - 1)
		copy(s.ents, ents[:pos])
		copy(s.ents[pos:], ents[pos+1:])
		return s
	case inSet:
		s := newOvfSet(len(ents))
		copy(s.ents, ents)
		s.ents[pos] = nw
		return s
	}
	s := newOvfSet(len(ents) + 1)
	copy(s.ents, ents[:pos])
	s.ents[pos] = nw
	copy(s.ents[pos+1:], ents[pos:])
	return s
}

// account moves the counters of slot from entry old to entry nw.
func (ix *Index) account(slot uint16, old, nw entry) {
	g := ix.engines[slot]
	for t := range NumTiers {
		d := int(nw.tiers()>>t&1) - int(old.tiers()>>t&1)
		g.tiers[t] += d
		ix.counts.entries += d
	}
	if d := b2i(nw.pred()) - b2i(old.pred()); d != 0 {
		g.preds += d
		ix.counts.preds += d
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// dropBlock deletes block m with all its entries (eviction) and returns how
// many entries went.
func (ix *Index) dropBlock(m uint64) int {
	sh := ix.shardOf(m)
	e, i, ok := sh.tab.Load().get(m)
	if !ok {
		return 0
	}
	var one [1]entry
	n := 0
	for _, x := range entriesOf(sh, e, &one) {
		ix.account(x.slot(), x, mkEntry(x.slot(), 0, false, 0))
		n += x.count()
	}
	sh.begin()
	if e.isOvf() {
		sh.freeOvf(e.ovfIndex())
	}
	sh.remove(i)
	sh.end()
	ix.counts.blocks--
	return n
}

// entriesOf returns block word e's entries (one, or its overflow set).
func entriesOf(sh *shard, e entry, one *[1]entry) []entry {
	if e.isOvf() {
		return sh.getOvf(e.ovfIndex()).ents
	}
	one[0] = e
	return one[:]
}
