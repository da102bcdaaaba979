package index

import "time"

// sweepPerWrite is the base of a write's sweep budget (see sweepBudget): a
// write sweeps a bounded number of expired predictions, so a burst of
// expiries never stalls a writer (Match ignores them meanwhile).
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
	ix.warm(hashes)
	ix.mu.Lock()
	defer ix.mu.Unlock()
	g, err := ix.ensureEngine(replica, 0)
	if err != nil {
		ix.reject(err)
		return
	}
	pexp := ix.tick(ix.now()) + uint32((ttl+time.Millisecond-1)/time.Millisecond)
	batch := predBatch{keys: ix.expiry.buffer(len(hashes)), pexp: pexp, slot: g.slot}
	c := change{pred: predSet, pexp: pexp, touch: true}
	var keys [prefetchBlocks]uint64
	for j := len(hashes) - 1; j >= 0; j-- { // parents end up most recent
		if (len(hashes)-1-j)%prefetchBlocks == 0 {
			ix.prefetchRun(hashes, max(0, j-prefetchBlocks+1), j+1, &keys)
		}
		m := keys[j%prefetchBlocks]
		if old, nw := ix.modify(m, g.slot, c); nw.pred() && !old.pred() {
			batch.keys = append(batch.keys, m)
		}
	}
	ix.expiry.push(batch)
	ix.afterWrite(len(hashes))
}

// warmBlocks bounds the blocks warm touches: their slots must still be cached when the
// writer gets to them.
const warmBlocks = 2048

// warm reads the home slot of each hash before the writer lock is taken, so that the cache
// misses of a large write are paid while other writers may run, not while they wait. The
// reads are atomic (the table may change meanwhile; a stale read only warms a stale line).
func (ix *Index) warm(hashes []uint64) {
	for _, h := range hashes[:min(len(hashes), warmBlocks)] {
		m := mix(h)
		t := ix.shardOf(m).tab.Load()
		t.at(t.home(m)).key.Load()
	}
}

// prefetchRun mixes hashes[lo:hi] into keys (hash i at keys[i%prefetchBlocks])
// and reads their home slots and stamps, so that a writer walking the run
// overlaps their cache misses instead of taking them one after another.
func (ix *Index) prefetchRun(hashes []uint64, lo, hi int, keys *[prefetchBlocks]uint64) {
	for i := lo; i < hi; i++ {
		m := mix(hashes[i])
		keys[i%prefetchBlocks] = m
		ix.prefetchKey(m)
	}
}

// prefetchKey reads key m's home slot and stamp (writer only); the stamp is
// summed into a field so the load is not optimised away.
func (ix *Index) prefetchKey(m uint64) {
	t := ix.shardOf(m).tab.Load()
	h := t.home(m)
	t.at(h).key.Load()
	ix.sink += *t.stamp(h)
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
