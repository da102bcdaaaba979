package index

import (
	"cmp"
	"slices"
)

// Bounded memory. Every touch (a Stored or Predict naming a block) gives the
// block the next value of a logical clock, unique per touch; blocks of one
// event are touched last-to-first so a chain's root is its most recent block
// and is never evicted before its descendants (which could not match without
// it). Match does not touch: readers never write. In switchyard every routed
// request predicts its prompt on the chosen replica, so a prefix in use is
// refreshed through Predict.
//
// When the entries (confirmed tiers plus predictions) exceed MaxEntries, the
// expired predictions are swept and then whole blocks are evicted in exact
// least-recently-touched order until the entries are down to a low-water mark
// 1/64 below the cap, so the O(blocks) victim search runs at most once per
// MaxEntries/64 insertions. Every evicted entry is counted in Stats.Evicted.

// histBuckets is the resolution of the victim search's stamp histogram.
const histBuckets = 1024

// nextStamp advances the LRU clock; near the end of the uint32 range the
// stamps are renumbered 1..blocks, keeping their order.
func (ix *Index) nextStamp() uint32 {
	if ix.clock+1 >= ix.clockLimit {
		ix.renumber()
	}
	ix.clock++
	return ix.clock
}

func (ix *Index) enforceCap() {
	if ix.counts.entries+ix.counts.preds <= ix.maxEntries {
		return
	}
	ix.sweep(ix.tick(ix.now()), -1)
	total := ix.counts.entries + ix.counts.preds
	if total <= ix.maxEntries {
		return
	}
	for _, m := range ix.lruVictims(total - ix.lowWater) {
		ix.counts.evicted += uint64(ix.dropBlock(m))
	}
}

// stamped is one block seen by a scan of all shards.
type stamped struct {
	m     uint64
	stamp uint32
	n     int32 // entries
}

// eachBlock calls f for every block of every shard (writer).
func (ix *Index) eachBlock(f func(sh *shard, t *table, i int)) {
	for s := range ix.shards {
		sh := &ix.shards[s]
		t := sh.tab.Load()
		for i := range t.n {
			if t.at(i).key.Load() != 0 {
				f(sh, t, i)
			}
		}
	}
}

func blockEntries(sh *shard, t *table, i int) int {
	var one [1]entry
	n := 0
	for _, x := range entriesOf(sh, entry(t.at(i).ent.Load()), &one) {
		n += x.count()
	}
	return n
}

// lruVictims returns the least recently touched blocks that together hold at
// least need entries, oldest first. A histogram of stamps locates the cutoff
// without sorting every block; only the cutoff bucket is sorted.
func (ix *Index) lruVictims(need int) []uint64 {
	lo := ix.clock
	ix.eachBlock(func(_ *shard, t *table, i int) { lo = min(lo, *t.stamp(i)) })
	span := uint64(ix.clock-lo) + 1
	bucket := func(s uint32) int { return int(uint64(s-lo) * histBuckets / span) }
	var hist [histBuckets]int
	ix.eachBlock(func(sh *shard, t *table, i int) { hist[bucket(*t.stamp(i))] += blockEntries(sh, t, i) })
	cut, below := 0, 0
	for cut < histBuckets-1 && below+hist[cut] < need {
		below += hist[cut]
		cut++
	}
	var victims []uint64
	var edge []stamped
	ix.eachBlock(func(sh *shard, t *table, i int) {
		switch b := bucket(*t.stamp(i)); {
		case b < cut:
			victims = append(victims, t.at(i).key.Load())
		case b == cut:
			edge = append(edge, stamped{m: t.at(i).key.Load(), stamp: *t.stamp(i), n: int32(blockEntries(sh, t, i))})
		}
	})
	slices.SortFunc(edge, func(a, b stamped) int { return cmp.Compare(a.stamp, b.stamp) })
	for _, s := range edge {
		if below >= need {
			break
		}
		victims = append(victims, s.m)
		below += int(s.n)
	}
	return victims
}

// renumber rewrites every stamp to its rank (1..blocks) in stamp order.
func (ix *Index) renumber() {
	type pos struct {
		t     *table
		i     int
		stamp uint32
	}
	var all []pos
	ix.eachBlock(func(_ *shard, t *table, i int) { all = append(all, pos{t, i, *t.stamp(i)}) })
	slices.SortFunc(all, func(a, b pos) int { return cmp.Compare(a.stamp, b.stamp) })
	for r, p := range all {
		*p.t.stamp(p.i) = uint32(r + 1)
	}
	ix.clock = uint32(len(all))
}
