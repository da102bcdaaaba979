package index

import (
	"fmt"
	"slices"
)

// Stored is an engine's BlockStored event, already decoded. Hashes are the
// ENGINE's opaque hashes; the index computes its own router hashes from the
// tokens and keeps an engine-hash -> router-hash map per (replica, rank).
type Stored struct {
	BlockHashes []uint64 // engine hashes, one per engine block, in chain order
	Parent      uint64   // engine hash of the parent block; valid when HasParent
	HasParent   bool
	TokenIDs    []uint32 // len == BlockSize*len(BlockHashes); may be empty for offload stores (resolve via engine-hash map)
	BlockSize   int      // engine block size; 0 = router's; must be a multiple of the router's
	LoRA        string
	Tier        Tier
}

// Removed is an engine's BlockRemoved event, already decoded.
type Removed struct {
	BlockHashes []uint64 // engine hashes
	Tier        Tier
}

// ApplyStored indexes the blocks of one Stored event of (replica, rank),
// whole or not at all: a rejected event changes nothing but the rejection
// counters and returns an error wrapping ErrRank, ErrUnknownTier,
// ErrBlockSize, ErrTokenCount, ErrOrphan, ErrUnknownBlock or ErrTooManyRanks.
//
// With token ids, each engine block is split into BlockSize/router-block-size
// router blocks hashed from its tokens, chained from the router hash of the
// parent engine block (resolved through the map; an unknown parent is an
// orphan, never guessed) or, without a parent, from the LoRA seed. If an
// engine hash was mapped to different router blocks before, those old entries
// of this (replica, rank) are dropped first (counted in Stats.Remapped).
// Without token ids (an offload to another tier), every engine hash must
// already be known to this (replica, rank); its router blocks gain the tier.
func (ix *Index) ApplyStored(replica string, rank int, ev Stored) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := ix.applyStored(replica, rank, &ev); err != nil {
		ix.reject(err)
		return err
	}
	ix.afterWrite(len(ix.scratch))
	return nil
}

func (ix *Index) applyStored(replica string, rank int, ev *Stored) error {
	if err := checkRankTier(rank, ev.Tier); err != nil {
		return err
	}
	if len(ev.BlockHashes) == 0 {
		return nil
	}
	g := ix.lookupEngine(replica, rank)
	offload := len(ev.TokenIDs) == 0
	var err error
	if offload {
		err = ix.resolveOffload(g, ev)
	} else {
		err = ix.hashStored(g, ev)
	}
	if err != nil {
		return fmt.Errorf("stored event of replica %q rank %d: %w", replica, rank, err)
	}
	if g == nil {
		if g, err = ix.ensureEngine(replica, rank); err != nil {
			return fmt.Errorf("stored event of replica %q rank %d: %w", replica, rank, err)
		}
	}
	if !offload {
		ix.remapConflicts(g, ev)
	}
	var keys [prefetchBlocks]uint64
	for j := len(ix.scratch) - 1; j >= 0; j-- { // parents end up most recent
		if (len(ix.scratch)-1-j)%prefetchBlocks == 0 {
			ix.prefetchRun(ix.scratch, max(0, j-prefetchBlocks+1), j+1, &keys)
		}
		ix.modify(keys[j%prefetchBlocks], g.slot, change{set: 1 << ev.Tier, touch: true})
	}
	return nil
}

func checkRankTier(rank int, t Tier) error {
	if rank < 0 {
		return fmt.Errorf("%w: rank %d", ErrRank, rank)
	}
	if !t.valid() {
		return fmt.Errorf("%w: %s", ErrUnknownTier, t)
	}
	return nil
}

// resolveOffload fills ix.scratch with the router blocks of a store without
// tokens, or fails if any engine hash is unknown to this (replica, rank).
func (ix *Index) resolveOffload(g *engine, ev *Stored) error {
	ix.scratch = ix.scratch[:0]
	var one [1]uint64
	for _, e := range ev.BlockHashes {
		var rs []uint64
		ok := false
		if g != nil {
			rs, ok = g.routers(e, &one)
		}
		if !ok {
			return fmt.Errorf("%w: offload store of engine hash %#x without token ids", ErrUnknownBlock, e)
		}
		ix.scratch = append(ix.scratch, rs...)
	}
	return nil
}

// hashStored validates a store with tokens and fills ix.scratch with its
// router hashes, BlockSize/router-block-size per engine block.
func (ix *Index) hashStored(g *engine, ev *Stored) error {
	bs := ev.BlockSize
	if bs == 0 {
		bs = ix.blockSize
	}
	if bs <= 0 || bs%ix.blockSize != 0 {
		return fmt.Errorf("%w: engine block size %d, router block size %d", ErrBlockSize, ev.BlockSize, ix.blockSize)
	}
	if len(ev.TokenIDs) != bs*len(ev.BlockHashes) {
		return fmt.Errorf("%w: %d token ids for %d blocks of %d", ErrTokenCount, len(ev.TokenIDs), len(ev.BlockHashes), bs)
	}
	seed := loraSeed(ev.LoRA)
	if ev.HasParent {
		p, ok := uint64(0), false
		if g != nil {
			p, ok = g.eng.get(ev.Parent)
		}
		if !ok {
			return fmt.Errorf("%w: parent engine hash %#x", ErrOrphan, ev.Parent)
		}
		seed = p
	}
	ev.BlockSize = bs
	ix.scratch = chainTokens(ix.scratch[:0], ev.TokenIDs, ix.blockSize, seed)
	return nil
}

// remapConflicts drops the old router blocks of engine hashes that now map
// elsewhere, then records the new mapping of every engine block of ev.
func (ix *Index) remapConflicts(g *engine, ev *Stored) {
	k := ev.BlockSize / ix.blockSize
	var one [1]uint64
	for i, e := range ev.BlockHashes {
		old, ok := g.routers(e, &one)
		if ok && !slices.Equal(old, ix.scratch[i*k:(i+1)*k]) {
			ix.counts.remapped++
			for _, r := range old {
				ix.modify(mix(r), g.slot, change{clr: tierMask})
			}
			delete(g.split, e)
		}
	}
	for i, e := range ev.BlockHashes {
		rs := ix.scratch[i*k : (i+1)*k]
		g.eng.put(e, rs[k-1])
		if k > 1 {
			if g.split == nil {
				g.split = map[uint64][]uint64{}
			}
			g.split[e] = slices.Clone(rs)
		}
	}
}

// ApplyRemoved drops tier ev.Tier of the router blocks behind each engine hash
// of (replica, rank). Hashes that are not indexed on that tier are counted in
// Stats.UnknownRemoved and are not an error; the known ones are applied. Only
// a bad rank or tier rejects the event (ErrRank, ErrUnknownTier). Removing the
// device tier also drops a prediction on the block: the engine's word wins.
// Once none of its router blocks has a confirmed tier left, an engine hash
// is forgotten.
func (ix *Index) ApplyRemoved(replica string, rank int, ev Removed) error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if err := checkRankTier(rank, ev.Tier); err != nil {
		err = fmt.Errorf("removed event of replica %q rank %d: %w", replica, rank, err)
		ix.reject(err)
		return err
	}
	g := ix.lookupEngine(replica, rank)
	if g == nil {
		ix.counts.unknownRemoved += uint64(len(ev.BlockHashes))
		return nil
	}
	c := change{clr: 1 << ev.Tier}
	if ev.Tier == TierDevice {
		c.pred = predClear
	}
	var one [1]uint64
	for _, e := range ev.BlockHashes {
		rs, ok := g.routers(e, &one)
		if !ok {
			ix.counts.unknownRemoved++
			continue
		}
		hit, held := false, false
		for _, r := range rs {
			old, nw := ix.modify(mix(r), g.slot, c)
			hit = hit || old.tiers()&c.clr != 0
			held = held || nw.tiers() != 0
		}
		if !hit {
			ix.counts.unknownRemoved++
		}
		if !held {
			g.eng.del(e)
			delete(g.split, e)
		}
	}
	ix.afterWrite(len(ev.BlockHashes))
	return nil
}

// Clear applies AllBlocksCleared of one engine (replica, DP rank): every entry
// of it on every tier, its predictions and its engine-hash map go. The
// (replica, rank) stays registered.
func (ix *Index) Clear(replica string, rank int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if g := ix.lookupEngine(replica, rank); g != nil {
		ix.clearEngine(g)
	}
}

// RemoveReplica forgets replica entirely: the entries of every rank, its
// predictions and its engine-hash maps.
func (ix *Index) RemoveReplica(replica string) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	for _, g := range ix.byReplica[replica] {
		ix.clearEngine(g)
	}
	ix.dropReplica(replica)
}

func (ix *Index) clearEngine(g *engine) {
	drop := change{clr: tierMask, pred: predClear}
	for _, rs := range g.split {
		for _, r := range rs {
			ix.modify(mix(r), g.slot, drop)
		}
	}
	g.eng.values(func(r uint64) { ix.modify(mix(r), g.slot, drop) })
	g.eng.reset()
	g.split = nil
	if g.preds > 0 {
		for _, b := range ix.expiry.heap {
			if b.slot == g.slot {
				for _, m := range b.keys[b.done:] {
					ix.modify(m, g.slot, drop)
				}
			}
		}
	}
	if g.preds != 0 || g.tiers != [NumTiers]int{} {
		ix.purgeSlot(g.slot) // entries no engine hash leads to any more
	}
}

// purgeSlot removes every entry of slot by scanning the whole table. Clear
// needs it only when no engine hash leads to an entry any more, which only an
// event naming the same engine hash twice for different content can cause.
func (ix *Index) purgeSlot(slot uint16) {
	var keys []uint64
	var one [1]entry
	ix.eachBlock(func(sh *shard, t *table, i int) {
		for _, x := range entriesOf(sh, entry(t.at(i).ent.Load()), &one) {
			if x.slot() == slot {
				keys = append(keys, t.at(i).key.Load())
			}
		}
	})
	for _, k := range keys {
		ix.modify(k, slot, change{clr: tierMask, pred: predClear})
	}
}

// reject counts a rejected event by reason.
func (ix *Index) reject(err error) {
	r := reasonOf(err)
	ix.counts.rejected[r]++
	if r == ReasonOrphan {
		ix.counts.orphans++
	}
}

// afterWrite runs the bounded housekeeping every write of n blocks pays for:
// a few expired predictions are swept (sweepBudget), and the entry cap is
// enforced.
func (ix *Index) afterWrite(n int) {
	ix.sweep(ix.tick(ix.now()), sweepBudget(n))
	ix.enforceCap()
}
