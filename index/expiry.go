package index

// Expiry of predictions. A Predict call records, in one predBatch, the keys
// of the entries it newly predicted (an entry already predicted is covered
// already). Batches wait in a min-heap ordered by expiry tick; the sweep works
// through the earliest expired batch key by key, so a write sweeps a bounded
// part of it and the next write resumes where it stopped. A key whose entry
// was extended meanwhile is queued again with its new tick (runs of keys with
// the same tick share one batch); a key whose entry is no longer predicted is
// dropped. Every predicted entry is thus covered by a queued key, and an
// entry refreshed by many calls within its TTL costs one visit per expiry,
// not one per call. Batches cost 8 bytes a key and one heap operation per
// call instead of one per block.

// predBatch is keys of slot's predicted entries to check at tick pexp: those
// one Predict call newly predicted, or a run of keys queued again.
type predBatch struct {
	keys []uint64 // mixed keys
	done int      // keys already swept
	pexp uint32
	slot uint16
}

// expiryQueue is the writer's queue of prediction batches.
type expiryQueue struct {
	heap  []predBatch // min-heap by pexp (wrapping compare)
	keys  int         // keys queued and not yet swept, over all batches
	spare [][]uint64  // key buffers of swept batches, reused by later calls
}

// maxSpare bounds the key buffers kept for reuse.
const maxSpare = 64

func (q *expiryQueue) less(i, j int) bool { return int32(q.heap[i].pexp-q.heap[j].pexp) < 0 }

// buffer returns an empty key buffer of capacity at least n.
func (q *expiryQueue) buffer(n int) []uint64 {
	if k := len(q.spare); k > 0 {
		b := q.spare[k-1]
		q.spare = q.spare[:k-1]
		if cap(b) >= n {
			return b[:0]
		}
	}
	return make([]uint64, 0, max(n, 64))
}

// recycle keeps b for a later buffer call.
func (q *expiryQueue) recycle(b []uint64) {
	if len(q.spare) < maxSpare {
		q.spare = append(q.spare, b[:0])
	}
}

// push queues a batch; an empty one only returns its buffer.
func (q *expiryQueue) push(b predBatch) {
	if len(b.keys) == 0 {
		q.recycle(b.keys)
		return
	}
	q.keys += len(b.keys)
	q.heap = append(q.heap, b)
	for i := len(q.heap) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.heap[i], q.heap[p] = q.heap[p], q.heap[i]
		i = p
	}
}

// pop removes the earliest batch (fully swept) and recycles its buffer.
func (q *expiryQueue) pop() {
	h := q.heap
	q.recycle(h[0].keys)
	n := len(h) - 1
	h[0] = h[n]
	h[n] = predBatch{}
	h = h[:n]
	for i := 0; ; {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && int32(h[c+1].pexp-h[c].pexp) < 0 {
			c++
		}
		if int32(h[c].pexp-h[i].pexp) >= 0 {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	q.heap = h
}

// bytes estimates the queue's heap footprint.
func (q *expiryQueue) bytes() int64 {
	b := int64(cap(q.heap)) * predBatchBytes
	for i := range q.heap {
		b += int64(cap(q.heap[i].keys)) * 8
	}
	for _, s := range q.spare {
		b += int64(cap(s)) * 8
	}
	return b
}

// sweepBudget is how many expired predictions a write of n blocks sweeps at
// most: a bounded amount, but more than the write can add, so sweeping keeps
// up with predicting however large the predictions are.
func sweepBudget(n int) int { return sweepPerWrite + 2*n }

// sweep removes up to limit (< 0: all) predictions that expired by tick now.
func (ix *Index) sweep(now uint32, limit int) {
	q := &ix.expiry
	for limit != 0 && len(q.heap) > 0 {
		b := &q.heap[0]
		if int32(b.pexp-now) > 0 {
			return
		}
		n := len(b.keys) - b.done
		if limit > 0 {
			n = min(n, limit)
			limit -= n
		}
		slot := b.slot
		carry := ix.sweepKeys(b.keys[b.done:b.done+n], slot, now, ix.carry[:0])
		b.done += n
		q.keys -= n
		if b.done == len(b.keys) {
			q.pop()
		}
		ix.requeue(carry, slot)
		ix.carry = carry
	}
}

// carried is a swept key whose entry was extended to pexp.
type carried struct {
	m    uint64
	pexp uint32
}

// sweepKeys drops the expired predictions of slot among keys and appends the
// keys of extended ones to carry.
func (ix *Index) sweepKeys(keys []uint64, slot uint16, now uint32, carry []carried) []carried {
	for i, m := range keys {
		if i%prefetchBlocks == 0 {
			ix.prefetchKeys(keys[i:min(len(keys), i+prefetchBlocks)])
		}
		e := ix.entryOf(m, slot)
		switch {
		case !e.pred():
		case int32(e.pexp()-now) > 0:
			carry = append(carry, carried{m, e.pexp()})
		default:
			ix.modify(m, slot, change{pred: predClearIf, pexp: e.pexp()})
			ix.counts.expired++
		}
	}
	return carry
}

// requeue queues carried keys again, one batch per run of equal ticks.
func (ix *Index) requeue(carry []carried, slot uint16) {
	for i := 0; i < len(carry); {
		j := i + 1
		for j < len(carry) && carry[j].pexp == carry[i].pexp {
			j++
		}
		b := predBatch{keys: ix.expiry.buffer(j - i), pexp: carry[i].pexp, slot: slot}
		for _, c := range carry[i:j] {
			b.keys = append(b.keys, c.m)
		}
		ix.expiry.push(b)
		i = j
	}
}

// prefetchKeys reads the home slot of each mixed key so that the writer's
// following lookups of a run of keys overlap their cache misses.
func (ix *Index) prefetchKeys(keys []uint64) {
	for _, m := range keys {
		ix.prefetchKey(m)
	}
}
