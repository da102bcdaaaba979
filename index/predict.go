package index

import "time"

// sweepPerWrite bounds how many expired predictions one write removes, so a
// burst of expiries never stalls a writer (Match ignores them meanwhile).
const sweepPerWrite = 64

// Predict records that replica (rank 0) is about to hold the blocks with the
// given ROUTER hashes on its device tier, typically right after routing a
// request there, so the next request sharing the prefix is routed alike before
// the engine's Stored event arrives. Entries expire after ttl (<= 0 means
// Config.PredictedTTL) with millisecond resolution; a live prediction is
// extended, never shortened. Confirmed (event) state always wins: a block
// confirmed on the device is not predicted, a later confirmation or device
// removal replaces the prediction. Expired predictions are ignored by Match at
// once and swept lazily by later writes, never by a blocking sweep.
func (ix *Index) Predict(replica string, hashes []uint64, ttl time.Duration) {
	if len(hashes) == 0 {
		return
	}
	if ttl <= 0 {
		ttl = ix.ttl
	}
	ttl = min(ttl, maxTTL)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	g, err := ix.ensureEngine(replica, 0)
	if err != nil {
		ix.reject(err)
		return
	}
	pexp := ix.tick(ix.now()) + uint32((ttl+time.Millisecond-1)/time.Millisecond)
	for j := len(hashes) - 1; j >= 0; j-- { // parents end up most recent
		m := mix(hashes[j])
		old, nw := ix.modify(m, g.slot, change{pred: predSet, pexp: pexp, touch: true})
		if nw.pred() && !old.pred() {
			ix.expiry.push(predItem{m: m, pexp: nw.pexp(), slot: g.slot})
		}
	}
	ix.afterWrite()
}

// sweep removes up to limit (< 0: all) predictions that expired by tick now.
// The heap holds one item per predicted entry; an item whose entry was
// extended is pushed back with the new expiry.
func (ix *Index) sweep(now uint32, limit int) {
	for ; limit != 0 && len(ix.expiry) > 0; limit-- {
		it := ix.expiry[0]
		if int32(it.pexp-now) > 0 {
			return
		}
		ix.expiry.pop()
		e := ix.entryOf(it.m, it.slot)
		switch {
		case !e.pred():
		case int32(e.pexp()-now) > 0:
			ix.expiry.push(predItem{m: it.m, pexp: e.pexp(), slot: it.slot})
		default:
			ix.modify(it.m, it.slot, change{pred: predClearIf, pexp: e.pexp()})
			ix.counts.expired++
		}
	}
}

// entryOf returns block m's entry for slot (writer), empty if absent.
func (ix *Index) entryOf(m uint64, slot uint16) entry {
	sh := ix.shardOf(m)
	e, _, ok := sh.tab.Load().get(m)
	if !ok {
		return 0
	}
	if !e.isOvf() {
		if e.slot() == slot {
			return e
		}
		return 0
	}
	set := sh.getOvf(e.ovfIndex())
	if p, ok := set.find(slot); ok {
		return set.ents[p]
	}
	return 0
}

// predItem schedules the expiry of the prediction of block m on slot.
type predItem struct {
	m    uint64
	pexp uint32
	slot uint16
}

// predHeap is a min-heap of predItems by expiry tick (wrapping compare).
type predHeap []predItem

func (h predHeap) less(i, j int) bool { return int32(h[i].pexp-h[j].pexp) < 0 }

func (h *predHeap) push(it predItem) {
	*h = append(*h, it)
	s := *h
	for i := len(s) - 1; i > 0; {
		p := (i - 1) / 2
		if !s.less(i, p) {
			break
		}
		s[i], s[p] = s[p], s[i]
		i = p
	}
}

func (h *predHeap) pop() {
	s := *h
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && s.less(c+1, c) {
			c++
		}
		if !s.less(c, i) {
			break
		}
		s[i], s[c] = s[c], s[i]
		i = c
	}
	*h = s
}
