package index

import (
	"math/bits"
	"runtime"
	"sync/atomic"
)

// The router-hash table is split in 1<<shardBits shards (64 by default),
// chosen by the top bits of the mixed hash. Each shard is an open-addressing
// table (linear probing, backward-shift deletion) guarded by a sequence lock:
// the single writer makes the sequence odd while it changes the shard and even
// again after; a reader samples the sequence, reads with atomic loads and
// retries if the sequence moved. Readers therefore never take a lock nor
// write shared memory, so concurrent Match calls do not bounce cache lines
// between cores, and a writer delays only the reads of one shard for the few
// nanoseconds of one block update. Sharding keeps each rehash small (a writer
// pause of one shard, not of the whole table) and retries rare.
const (
	defaultShardBits = 6
	minTableCap      = 8
	// maxLoadNum/maxLoadDen is the fill that triggers growth. Large tables grow
	// by a quarter (small ones double), so the fill stays between 64% and 80%
	// and memory per block stays low; the rehash this costs is amortized.
	maxLoadNum = 4
	maxLoadDen = 5
	// mixMul spreads hashes that are not uniform (client-supplied ids are often
	// small integers) over shards and slots; it is odd, so mixing is a bijection.
	mixMul = 0x9e3779b97f4a7c15
	// zeroKey stands for the key that mixes to 0, because 0 marks an empty slot.
	zeroKey = 0x5bd1e9955bd1e995
)

// grownCap is the capacity after n when a table is full.
func grownCap(n int) int {
	if n < 1024 {
		return max(minTableCap, 2*n)
	}
	return n + n/4
}

// movable reports whether the key at slot j, whose home is h, may move back
// into the hole at i during backward-shift deletion: it may unless its home
// lies cyclically in (i, j].
func movable(i, j, h int) bool {
	if i <= j {
		return h <= i || h > j
	}
	return h <= i && h > j
}

// mix maps a router hash to its table key.
func mix(h uint64) uint64 {
	m := h * mixMul
	if m == 0 {
		m = zeroKey
	}
	return m
}

// table is one generation of a shard's slots. Key and entry word share a
// slot, so a probe that finds the key has the entry in the same cache line.
// slots are read by readers; stamps (LRU recency) only by the writer.
type table struct {
	shift  uint8 // the index's shard bits, dropped from keys before scaling
	n      int   // capacity in slots
	slots  []slot
	stamps []uint32
	used   int
}

type slot struct{ key, ent atomic.Uint64 }

func newTable(shift uint8, n int) *table {
	return &table{shift: shift, n: n, slots: make([]slot, n), stamps: make([]uint32, n)}
}

// at returns slot i.
func (t *table) at(i int) *slot { return &t.slots[i] }

// stamp returns the LRU stamp of slot i (writer only).
func (t *table) stamp(i int) *uint32 { return &t.stamps[i] }

// home is the first slot probed for key m: the shard bits are dropped and the
// rest is scaled to the capacity (multiply-shift, any capacity works).
func (t *table) home(m uint64) int {
	hi, _ := bits.Mul64(m<<t.shift, uint64(t.n))
	return int(hi)
}

// get probes for m with atomic loads. It gives up after a full cycle, which
// only a torn read during a concurrent change can cause; the caller's sequence
// check then fails and it retries.
func (t *table) get(m uint64) (entry, int, bool) {
	n := len(t.slots)
	i := t.home(m)
	for range n {
		k := t.slots[i].key.Load()
		if k == m {
			return entry(t.slots[i].ent.Load()), i, true
		}
		if k == 0 {
			return 0, i, false
		}
		if i++; i == n {
			i = 0
		}
	}
	return 0, -1, false
}

// ovfSlab holds a shard's overflow sets; ents words of overflowing blocks point
// into it. It is replaced whole when it grows.
type ovfSlab struct{ sets []atomic.Pointer[ovfSet] }

// shard is one sequence-locked table. It is padded so that two shards' hot
// sequence words never share a cache line.
type shard struct {
	seq atomic.Uint64
	tab atomic.Pointer[table]
	ovf atomic.Pointer[ovfSlab]
	// writer only
	ovfFree []uint32
	ovfHigh int // overflow indexes ever handed out
	ovfLen  int // overflow sets in use
	_       [64]byte
}

func (s *shard) init(shift uint8) {
	s.tab.Store(newTable(shift, minTableCap))
	s.ovf.Store(&ovfSlab{})
}

// lookup is the reader's consistent read of block m: its entry word and, for
// a block held by several replica-ranks, its immutable overflow set.
func (s *shard) lookup(m uint64) (entry, *ovfSet, bool) {
	for spin := 0; ; spin++ {
		if seq := s.seq.Load(); seq&1 == 0 {
			e, _, ok := s.tab.Load().get(m)
			var set *ovfSet
			if ok && e.isOvf() {
				if sets := s.ovf.Load().sets; int(e.ovfIndex()) < len(sets) {
					set = sets[e.ovfIndex()].Load()
				}
			}
			if s.seq.Load() == seq && (set != nil || !e.isOvf()) {
				return e, set, ok
			}
		}
		if spin > 64 {
			runtime.Gosched()
		}
	}
}

// begin and end bracket every writer change of the shard.
func (s *shard) begin() { s.seq.Add(1) }
func (s *shard) end()   { s.seq.Add(1) }

// insert adds absent key m (writer, inside begin/end) and returns its slot.
func (s *shard) insert(m uint64, e entry, stamp uint32) {
	t := s.tab.Load()
	if (t.used+1)*maxLoadDen > t.n*maxLoadNum {
		t = s.resize(grownCap(t.n))
	}
	_, i, _ := t.get(m)
	t.at(i).key.Store(m)
	t.at(i).ent.Store(uint64(e))
	*t.stamp(i) = stamp
	t.used++
}

// remove deletes slot i by shifting later keys of the probe run back, so no
// tombstones are ever needed (writer, inside begin/end).
func (s *shard) remove(i int) {
	t := s.tab.Load()
	n := t.n
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		k := t.at(j).key.Load()
		if k == 0 {
			break
		}
		if movable(i, j, t.home(k)) {
			t.at(i).key.Store(k)
			t.at(i).ent.Store(t.at(j).ent.Load())
			*t.stamp(i) = *t.stamp(j)
			i = j
		}
	}
	t.at(i).key.Store(0)
	t.at(i).ent.Store(0)
	t.used--
	if n > minTableCap && t.used*5 < n {
		s.resize(max(minTableCap, t.used*2))
	}
}

// resize rehashes into a fresh table of n slots and publishes it. Readers
// still walking the old table see a frozen, consistent copy.
func (s *shard) resize(n int) *table {
	old := s.tab.Load()
	t := newTable(old.shift, n)
	for i := range old.n {
		if k := old.at(i).key.Load(); k != 0 {
			_, j, _ := t.get(k)
			t.at(j).key.Store(k)
			t.at(j).ent.Store(old.at(i).ent.Load())
			*t.stamp(j) = *old.stamp(i)
			t.used++
		}
	}
	s.tab.Store(t)
	return t
}

// putOvf stores set under a free overflow index (writer, inside begin/end).
func (s *shard) putOvf(set *ovfSet) uint32 {
	s.ovfLen++
	if n := len(s.ovfFree); n > 0 {
		idx := s.ovfFree[n-1]
		s.ovfFree = s.ovfFree[:n-1]
		s.ovf.Load().sets[idx].Store(set)
		return idx
	}
	slab := s.ovf.Load()
	idx := s.ovfHigh
	s.ovfHigh++
	if idx == len(slab.sets) {
		grown := &ovfSlab{sets: make([]atomic.Pointer[ovfSet], max(4, 2*idx))}
		for i := range slab.sets {
			grown.sets[i].Store(slab.sets[i].Load())
		}
		s.ovf.Store(grown)
		slab = grown
	}
	slab.sets[idx].Store(set)
	return uint32(idx)
}

func (s *shard) getOvf(idx uint32) *ovfSet { return s.ovf.Load().sets[idx].Load() }

func (s *shard) replaceOvf(idx uint32, set *ovfSet) { s.ovf.Load().sets[idx].Store(set) }

func (s *shard) freeOvf(idx uint32) {
	s.ovf.Load().sets[idx].Store(nil)
	s.ovfFree = append(s.ovfFree, idx)
	s.ovfLen--
}
