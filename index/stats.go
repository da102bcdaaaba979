package index

// Stats is a snapshot of the index's size and counters, for metrics.
type Stats struct {
	Blocks         int                      // distinct router hashes indexed
	Entries        int                      // (block, replica-rank, tier) entries, confirmed
	Predicted      int                      // live predicted entries
	Evicted        uint64                   // entries dropped by the MaxEntries cap
	Orphans        uint64                   // Stored events rejected for an unknown parent
	Rejected       map[string]uint64        // rejected events by reason (the Reason* constants)
	UnknownRemoved uint64                   // Removed hashes that were not indexed (on that tier)
	Replicas       map[string][NumTiers]int // confirmed entries per replica (summed over its ranks) per tier
	MemoryBytes    int64                    // estimate of the index's heap footprint (see memoryEstimate)
	// Remapped counts engine hashes stored again with different content,
	// whose old router blocks were dropped from that replica-rank.
	Remapped uint64
	// Expired counts predictions swept after their TTL.
	Expired uint64
}

// Stats returns a snapshot. It first sweeps every expired prediction, so
// Predicted counts live ones only.
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.sweep(ix.tick(ix.now()), -1)
	c := &ix.counts
	st := Stats{
		Blocks:         c.blocks,
		Entries:        c.entries,
		Predicted:      c.preds,
		Evicted:        c.evicted,
		Orphans:        c.orphans,
		Rejected:       make(map[string]uint64, len(c.rejected)),
		UnknownRemoved: c.unknownRemoved,
		Replicas:       make(map[string][NumTiers]int, len(ix.byReplica)),
		MemoryBytes:    ix.memoryEstimate(),
		Remapped:       c.remapped,
		Expired:        c.expired,
	}
	for k, v := range c.rejected {
		st.Rejected[k] = v
	}
	for name, gs := range ix.byReplica {
		st.Replicas[name] = tierSums(gs)
	}
	return st
}

// ReplicaBlocks returns one replica's confirmed entries per tier, summed over
// its ranks: Stats().Replicas[replica] without the sweep and the memory scan
// Stats does, for callers that ask about one replica often.
func (ix *Index) ReplicaBlocks(replica string) [NumTiers]int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return tierSums(ix.byReplica[replica])
}

func tierSums(gs []*engine) [NumTiers]int {
	var sum [NumTiers]int
	for _, g := range gs {
		for t := range NumTiers {
			sum[t] += g.tiers[t]
		}
	}
	return sum
}

// Per-item sizes behind memoryEstimate, in bytes.
const (
	slotBytes      = 8 + 8 + 4 // key, entry word, stamp
	ovfBaseBytes   = 8 + 48    // slab pointer, set with its in-place entries
	engSlotBytes   = 16        // one engine-hash map slot
	splitBytes     = 24 + 40   // slice header plus Go map entry, per split engine block
	predBatchBytes = 40        // one queued Predict call, besides its keys
)

// memoryEstimate adds up the table capacities, overflow sets, engine-hash maps
// and the expiry heap. It is an estimate; BenchmarkMemory measures the real
// heap with runtime.MemStats.
func (ix *Index) memoryEstimate() int64 {
	var b int64
	for s := range ix.shards {
		sh := &ix.shards[s]
		b += int64(sh.tab.Load().n) * slotBytes
		sets := sh.ovf.Load().sets
		b += int64(len(sets)) * 8
		for i := range sets {
			if set := sets[i].Load(); set != nil {
				b += ovfBaseBytes
				if len(set.ents) > ovfInline {
					b += int64(cap(set.ents)) * 8
				}
			}
		}
	}
	for _, g := range ix.engines {
		if g == nil {
			continue
		}
		b += int64(len(g.eng.slots)) * engSlotBytes
		for _, rs := range g.split {
			b += splitBytes + int64(cap(rs))*8
		}
	}
	return b + ix.expiry.bytes()
}
