package index

import (
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Index is the KV block index of one model (the block size is per model): for
// every router block hash, which (replica, DP rank) holds it on which tier,
// confirmed by engine events or predicted by routing decisions.
//
// All methods are safe for concurrent use. Writers (events, Predict, Stats)
// are serialized by one mutex; Match takes no lock at all (see table.go).
type Index struct {
	blockSize  int
	maxEntries int
	lowWater   int
	ttl        time.Duration
	now        func() time.Time
	epoch      time.Time

	shardBits uint8
	shards    []shard
	view      atomic.Pointer[replicaView]
	runs      sync.Pool // *[]rankRun for Match calls with many candidate ranks

	mu         sync.Mutex // serializes writers; everything below is writer-only
	engines    []*engine  // by slot; nil = free slot
	freeSlots  []uint16
	byReplica  map[string][]*engine // sorted by rank
	clock      uint32               // LRU recency stamp of the last touch
	clockLimit uint32               // renumber stamps when clock reaches it
	counts     counters
	expiry     expiryQueue
	carry      []carried // sweep scratch
	sink       uint32    // sum of prefetched stamps (see prefetchKey)
	scratch    []uint64
}

// counters are the writer's running totals behind Stats.
type counters struct {
	blocks, entries, preds                     int
	evicted, orphans, unknownRemoved, remapped uint64
	expired                                    uint64
	rejected                                   map[string]uint64
}

// engine is the writer-side state of one (replica, DP rank): the engine-hash
// to router-hash map that serves Removed events and parent resolution.
type engine struct {
	replica string
	rank    int
	slot    uint16
	// eng maps an engine hash to the router hash of its last router block
	// (the one a child chains from).
	eng engMap
	// split lists all router hashes of engine blocks larger than a router
	// block, in chain order; present only for those.
	split map[uint64][]uint64
	tiers [NumTiers]int // confirmed entries per tier
	preds int           // predicted entries (live or not yet swept)
}

// routers returns the router hashes that engine hash e stands for.
func (g *engine) routers(e uint64, buf *[1]uint64) ([]uint64, bool) {
	if s, ok := g.split[e]; ok {
		return s, true
	}
	r, ok := g.eng.get(e)
	buf[0] = r
	return buf[:], ok
}

// replicaView is what readers need to resolve candidates: each replica's
// slots, one per DP rank. It is immutable and replaced whole on change.
type replicaView struct{ slots map[string][]uint16 }

// New returns an empty Index; zero Config fields take their defaults.
func New(cfg Config) *Index { return newIndex(cfg, defaultShardBits) }

// newIndex lets tests pick the shard count (1<<shardBits; 0 = one shard, to
// force collisions, growth and shrinking).
func newIndex(cfg Config, shardBits uint8) *Index {
	cfg = cfg.withDefaults()
	ix := &Index{
		blockSize:  cfg.BlockSize,
		maxEntries: cfg.MaxEntries,
		lowWater:   cfg.MaxEntries - cfg.MaxEntries/64,
		ttl:        min(cfg.PredictedTTL, maxTTL),
		now:        cfg.Now,
		byReplica:  map[string][]*engine{},
		clockLimit: math.MaxUint32,
		shardBits:  shardBits,
		shards:     make([]shard, 1<<shardBits),
	}
	ix.epoch = ix.now()
	ix.counts.rejected = map[string]uint64{}
	for i := range ix.shards {
		ix.shards[i].init(shardBits)
	}
	ix.view.Store(&replicaView{slots: map[string][]uint16{}})
	return ix
}

// BlockSize returns the router block size in tokens, to hash prompts with.
func (ix *Index) BlockSize() int { return ix.blockSize }

// tick converts a time to the index's millisecond ticks (wrapping uint32).
func (ix *Index) tick(t time.Time) uint32 {
	return uint32(t.Sub(ix.epoch) / time.Millisecond)
}

func (ix *Index) shardOf(m uint64) *shard { return &ix.shards[m>>(64-ix.shardBits)] }

// lookupEngine returns the state of (replica, rank), or nil.
func (ix *Index) lookupEngine(replica string, rank int) *engine {
	for _, g := range ix.byReplica[replica] {
		if g.rank == rank {
			return g
		}
	}
	return nil
}

// ensureEngine returns the state of (replica, rank), registering it (and
// publishing a new reader view) on first use.
func (ix *Index) ensureEngine(replica string, rank int) (*engine, error) {
	if g := ix.lookupEngine(replica, rank); g != nil {
		return g, nil
	}
	var slot uint16
	switch {
	case len(ix.freeSlots) > 0:
		slot = ix.freeSlots[len(ix.freeSlots)-1]
		ix.freeSlots = ix.freeSlots[:len(ix.freeSlots)-1]
	case len(ix.engines) < MaxRanks:
		slot = uint16(len(ix.engines))
		ix.engines = append(ix.engines, nil)
	default:
		return nil, ErrTooManyRanks
	}
	g := &engine{replica: replica, rank: rank, slot: slot}
	ix.engines[slot] = g
	gs := append(ix.byReplica[replica], g)
	slices.SortFunc(gs, func(a, b *engine) int { return a.rank - b.rank })
	ix.byReplica[replica] = gs
	ix.publishView()
	return g, nil
}

// dropReplica unregisters every rank of replica; their entries must be gone.
func (ix *Index) dropReplica(replica string) {
	for _, g := range ix.byReplica[replica] {
		ix.engines[g.slot] = nil
		ix.freeSlots = append(ix.freeSlots, g.slot)
	}
	delete(ix.byReplica, replica)
	ix.publishView()
}

func (ix *Index) publishView() {
	v := &replicaView{slots: make(map[string][]uint16, len(ix.byReplica))}
	for name, gs := range ix.byReplica {
		s := make([]uint16, len(gs))
		for i, g := range gs {
			s[i] = g.slot
		}
		v.slots[name] = s
	}
	ix.view.Store(v)
}
