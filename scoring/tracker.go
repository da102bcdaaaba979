package scoring

// checkpointStride is the spacing, in hashed units, of the prompt checkpoints the tracker keeps
// per active request. A chained hash names a whole prefix, so holding the hash at every
// stride-th unit (plus the last) lets the tracker count prompt blocks shared by active requests
// once, and find how much of a new prompt active requests already hold by binary search, at a
// stride-th of the map work of tracking every block. Sharing is resolved to the stride: a prefix
// shared up to a non-checkpoint unit is counted as shared up to the previous checkpoint.
const checkpointStride = 16

// checkpoint is one held prefix: its chained hash and the blocks it adds beyond the previous one.
type checkpoint struct {
	hash   uint64
	blocks int32
}

// heldPrefix is a checkpoint's reference count on one replica and the blocks counted for it.
type heldPrefix struct {
	refs   int32
	blocks int32
}

// loadState is one replica's live load. Guarded by its model's lock.
type loadState struct {
	active    int
	prefill   int64 // uncached prompt tokens of requests before their first token
	shared    int64 // prompt blocks of checkpointed prefixes held by active requests, each once
	private   int64 // prompt blocks beyond the last checkpoint (partial blocks, unhashed text)
	output    int64 // output blocks grown so far
	remaining int64 // expected output tokens still to come (hinted or estimated requests)
	held      map[uint64]heldPrefix
	tree      treeSize
	clamped   uint64 // times a term would have gone negative (must stay 0; reported in Counters)
}

// decodeBlocks is the KV blocks held by the replica's active requests.
func (l *loadState) decodeBlocks() int64 { return l.shared + l.private + l.output }

// hold references a request's checkpoints, counting blocks of prefixes not yet held.
func (l *loadState) hold(cps []checkpoint) {
	if len(cps) == 0 {
		return
	}
	if l.held == nil {
		l.held = make(map[uint64]heldPrefix)
	}
	for _, c := range cps {
		h := l.held[c.hash]
		if h.refs == 0 {
			h.blocks = c.blocks
			l.shared += int64(c.blocks)
		}
		h.refs++
		l.held[c.hash] = h
	}
}

// release drops a request's checkpoint references, uncounting prefixes no longer held.
func (l *loadState) release(cps []checkpoint) {
	for _, c := range cps {
		h, ok := l.held[c.hash]
		if !ok {
			l.clamped++
			continue
		}
		h.refs--
		if h.refs > 0 {
			l.held[c.hash] = h
			continue
		}
		delete(l.held, c.hash)
		l.shared = l.sub(l.shared, int64(h.blocks))
	}
}

// sub subtracts d from v, never going below zero (a violation is counted).
func (l *loadState) sub(v, d int64) int64 {
	if v < d {
		l.clamped++
		return 0
	}
	return v - d
}

// heldPrefixBlocks returns how many blocks of a prompt's leading checkpoints this replica's
// active requests already hold. A held checkpoint implies every earlier one is held (the holder's
// chain passes through them), so a binary search finds the longest.
func (l *loadState) heldPrefixBlocks(p *promptShape) float64 {
	n := p.checkpoints()
	if len(l.held) == 0 || n == 0 {
		return 0
	}
	if _, ok := l.held[p.hashes[p.checkpointPos(0)]]; !ok {
		return 0
	}
	lo, hi := 0, n-1 // lo is held; find the last held in [lo, hi]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if _, ok := l.held[p.hashes[p.checkpointPos(mid)]]; ok {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return p.blocksThrough(p.checkpointPos(lo))
}
