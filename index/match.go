package index

import "slices"

// Overlap is one candidate's match result. A replica's overlap is the best
// over its DP ranks: most Device blocks, then longest Prefix, then more host
// (cheaper to reload than disk) blocks, then fewer predicted ones, then more
// blocks on the device (fewer on disk), so that ranks tying on everything
// before never leave the choice to the order in which they are compared.
type Overlap struct {
	Device    int           // leading blocks all present on the device tier (confirmed or predicted)
	Prefix    int           // leading blocks each present on at least one tier
	Tiers     [NumTiers]int // of the Prefix blocks, how many have each tier as their BEST (device>host>disk); sums to Prefix
	Predicted int           // of the Prefix blocks, how many are vouched for only by predicted entries
}

func (a Overlap) better(b Overlap) bool {
	switch {
	case a.Device != b.Device:
		return a.Device > b.Device
	case a.Prefix != b.Prefix:
		return a.Prefix > b.Prefix
	case a.Tiers[TierHost] != b.Tiers[TierHost]:
		return a.Tiers[TierHost] > b.Tiers[TierHost]
	case a.Predicted != b.Predicted:
		return a.Predicted < b.Predicted
	}
	return a.Tiers[TierDevice] > b.Tiers[TierDevice]
}

// rankRun is the walk state of one (candidate, DP rank).
type rankRun struct {
	o    Overlap
	cand int32
	slot uint16
	dev  bool // still on the leading device run
}

// advance extends the run with one block whose entry for the run's slot is e
// (empty when absent); false means the run has ended.
func (r *rankRun) advance(e entry, now uint32) bool {
	tiers, pred := e.tiers(), e.predLive(now)
	if tiers == 0 && !pred {
		return false
	}
	r.o.Prefix++
	onDev := tiers&deviceBit != 0 || pred
	switch {
	case onDev:
		r.o.Tiers[TierDevice]++
	case tiers&(1<<TierHost) != 0:
		r.o.Tiers[TierHost]++
	default:
		r.o.Tiers[TierDisk]++
	}
	if tiers == 0 {
		r.o.Predicted++
	}
	if r.dev && !onDev {
		r.dev = false
	}
	if r.dev {
		r.o.Device++
	}
	return true
}

// stackRuns is how many candidate ranks Match handles without the pool.
const stackRuns = 32

// Match fills out[i] for candidates[i] with how many leading blocks of the
// request's chained router hashes that replica holds, per tier (see Overlap).
// It walks hashes in order and stops at the first block no remaining
// candidate rank holds. out is grown or reused; Match allocates nothing per
// block and nothing at all when cap(out) >= len(candidates) (and the
// candidates have at most 32 ranks in total; beyond that a pooled buffer is
// reused). Unknown candidates get a zero Overlap. Match takes no lock and is
// safe for concurrent use with writers; it sees each block as it was at some
// instant during the call.
func (ix *Index) Match(hashes []uint64, candidates []string, out []Overlap) []Overlap {
	if cap(out) < len(candidates) {
		out = make([]Overlap, len(candidates))
	} else {
		out = out[:len(candidates)]
		clear(out)
	}
	view := ix.view.Load()
	n := 0
	for _, c := range candidates {
		n += len(view.slots[c])
	}
	if n == 0 || len(hashes) == 0 {
		return out
	}
	if n <= stackRuns {
		var stack [stackRuns]rankRun
		ix.walk(hashes, fillRuns(stack[:0], view, candidates), out)
		return out
	}
	p := ix.getRuns(n)
	*p = fillRuns((*p)[:0], view, candidates)
	ix.walk(hashes, *p, out)
	ix.runs.Put(p)
	return out
}

// fillRuns appends one run per (candidate, rank), sorted by slot as walk needs.
func fillRuns(runs []rankRun, view *replicaView, candidates []string) []rankRun {
	for i, c := range candidates {
		for _, s := range view.slots[c] {
			runs = append(runs, rankRun{cand: int32(i), slot: s, dev: true})
		}
	}
	slices.SortFunc(runs, func(a, b rankRun) int { return int(a.slot) - int(b.slot) })
	return runs
}

func (ix *Index) getRuns(n int) *[]rankRun {
	if p, ok := ix.runs.Get().(*[]rankRun); ok && cap(*p) >= n {
		return p
	}
	s := make([]rankRun, 0, n)
	return &s
}

// walk advances the live runs (sorted by slot) block by block and commits each
// run to out when it ends.
func (ix *Index) walk(hashes []uint64, live []rankRun, out []Overlap) {
	now := ix.tick(ix.now())
	var keys [prefetchBlocks]uint64
	for b := range hashes {
		if b%prefetchBlocks == 0 {
			ix.prefetch(hashes[b:min(len(hashes), b+prefetchBlocks)], &keys)
		}
		m := keys[b%prefetchBlocks]
		e, set, ok := ix.shardOf(m).lookup(m)
		if !ok {
			break
		}
		j := 0
		if set == nil {
			for i := range live {
				r := &live[i]
				if r.slot == e.slot() && r.advance(e, now) {
					keep(live, i, j)
					j++
				} else {
					commit(out, r)
				}
			}
		} else {
			p := 0
			for i := range live {
				r := &live[i]
				for p < len(set.ents) && set.ents[p].slot() < r.slot {
					p++
				}
				if p < len(set.ents) && set.ents[p].slot() == r.slot && r.advance(set.ents[p], now) {
					keep(live, i, j)
					j++
				} else {
					commit(out, r)
				}
			}
		}
		if live = live[:j]; j == 0 {
			return
		}
	}
	for i := range live {
		commit(out, &live[i])
	}
}

// prefetchBlocks is how many upcoming blocks walk loads at once: issued back
// to back, their cache misses overlap instead of queuing one after another.
const prefetchBlocks = 8

// prefetch mixes each hash into keys and reads its home slot, so that the
// following lookups find them in cache. The loads are atomic (hence never
// elided) and only read.
func (ix *Index) prefetch(hashes []uint64, keys *[prefetchBlocks]uint64) {
	for i, h := range hashes {
		m := mix(h)
		keys[i] = m
		t := ix.shardOf(m).tab.Load()
		t.at(t.home(m)).key.Load()
	}
}

// keep moves live run i to position j of the compacted live list.
func keep(live []rankRun, i, j int) {
	if i != j {
		live[j] = live[i]
	}
}

func commit(out []Overlap, r *rankRun) {
	if r.o.better(out[r.cand]) {
		out[r.cand] = r.o
	}
}
