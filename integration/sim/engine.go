package sim

import "github.com/switchyard-llm/switchyard/integration/workload"

// engine is one simulated replica: vLLM V1's scheduler over a paged, prefix-cached KV cache.
type engine struct {
	idx  int
	id   string
	cfg  EngineConfig
	root uint64 // hash seed of first blocks
	kv   *kvCache
	log  opLog

	waiting []*seq // FCFS; preempted requests go back to the front
	running []*seq // admission order
	sched   []*seq // scheduled in the current step
	hit     []int32
	batch   Batch
	busy    bool
	order   uint64

	preemptions int
	steps       int
	busyNS      int64
	series      decodeSeries
}

func newEngine(idx int, id string, cfg EngineConfig, seed uint64) *engine {
	e := &engine{idx: idx, id: id, cfg: cfg, root: workload.Mix64(seed ^ workload.Mix64(uint64(idx)+1))}
	e.kv = newKVCache(cfg.NumBlocks, &e.log)
	return e
}

func (e *engine) enqueue(s *seq) { e.waiting = append(e.waiting, s) }

// schedule builds the next step: running requests first (a decode token, or the next prefill
// chunk), preempting the most recently admitted when blocks run out, then waiting requests
// FCFS if nothing was preempted. It reports whether anything was scheduled.
func (e *engine) schedule() bool {
	budget := e.cfg.MaxBatchedTokens
	e.sched = e.sched[:0]
	preempted := false
	for i := 0; i < len(e.running) && budget > 0; i++ {
		s := e.running[i]
		n := min(s.known-s.computed, budget)
		for !e.grow(s, s.computed+n) {
			v := e.running[len(e.running)-1]
			e.preempt(v)
			preempted = true
			if v == s {
				n = 0
				break
			}
		}
		if n == 0 {
			break
		}
		s.sched = n
		budget -= n
		e.sched = append(e.sched, s)
	}
	if !preempted {
		e.admit(budget)
	}
	e.fillBatch()
	return len(e.sched) > 0
}

// admit moves waiting requests to running while the budget, max_num_seqs and free blocks
// allow, with their cached prefix reused.
func (e *engine) admit(budget int) {
	bs := e.cfg.BlockSize
	for len(e.waiting) > 0 && len(e.running) < e.cfg.MaxSeqs && budget > 0 {
		s := e.waiting[0]
		hit, freeHits := e.prefixHit(s)
		start := hit * bs
		n := min(s.known-start, budget)
		if ceilDiv(start+n, bs)-hit+freeHits > e.kv.nfree {
			return
		}
		for _, b := range e.hit {
			e.kv.acquire(b)
		}
		s.blocks = append(s.blocks[:0], e.hit...)
		s.registered, s.computed = hit, start
		if s.cachedPrompt < 0 {
			s.cachedPrompt = min(start, s.prompt)
		}
		e.grow(s, start+n) // fits: checked above
		e.waiting[0] = nil
		e.waiting = e.waiting[1:]
		s.order = e.order
		e.order++
		e.running = append(e.running, s)
		s.sched = n
		budget -= n
		e.sched = append(e.sched, s)
	}
}

// prefixHit finds the cached leading blocks of s's known tokens (at least one token is always
// left to compute) into e.hit, and how many of them are in the free list.
func (e *engine) prefixHit(s *seq) (hit, free int) {
	bs := e.cfg.BlockSize
	limit := (s.known - 1) / bs
	s.hashUpTo(limit, e.root, bs)
	e.hit = e.hit[:0]
	for b := 0; b < limit; b++ {
		blk, ok := e.kv.lookup(s.hashes[b])
		if !ok {
			break
		}
		e.hit = append(e.hit, blk)
		if e.kv.blocks[blk].ref == 0 {
			free++
		}
	}
	return len(e.hit), free
}

// grow gives s the blocks for its first upto tokens and registers the blocks those tokens
// fill, or reports false (changing nothing) when free blocks do not suffice.
func (e *engine) grow(s *seq, upto int) bool {
	need := ceilDiv(upto, e.cfg.BlockSize) - len(s.blocks)
	if need > e.kv.nfree {
		return false
	}
	for ; need > 0; need-- {
		s.blocks = append(s.blocks, e.kv.allocate())
	}
	if full := upto / e.cfg.BlockSize; full > s.registered {
		e.register(s, full)
	}
	return true
}

// register caches s's blocks [registered, full) under their hashes and logs them as stored.
// A block whose content another block already caches is swapped for that block (the
// duplicate is freed), so a sequence's chain always runs through cached blocks.
func (e *engine) register(s *seq, full int) {
	s.hashUpTo(full, e.root, e.cfg.BlockSize)
	run := -1
	for b := s.registered; b < full; b++ {
		h := s.hashes[b]
		if ex, ok := e.kv.lookup(h); ok {
			if run >= 0 {
				e.log.stored(s, run, b)
				run = -1
			}
			e.kv.acquire(ex)
			e.kv.release(s.blocks[b])
			s.blocks[b] = ex
			continue
		}
		e.kv.register(s.blocks[b], h)
		if run < 0 {
			run = b
		}
	}
	if run >= 0 {
		e.log.stored(s, run, full)
	}
	s.registered = full
}

// preempt frees the blocks of v (the last running request) and puts it back at the front of
// the waiting queue to be recomputed.
func (e *engine) preempt(v *seq) {
	e.running[len(e.running)-1] = nil
	e.running = e.running[:len(e.running)-1]
	e.freeBlocks(v)
	v.computed, v.registered = 0, 0
	v.preemptions++
	e.preemptions++
	e.waiting = append(e.waiting, nil)
	copy(e.waiting[1:], e.waiting)
	e.waiting[0] = v
}

// freeBlocks releases s's blocks tail first, so shared prefixes stay cached longest.
func (e *engine) freeBlocks(s *seq) {
	for i := len(s.blocks) - 1; i >= 0; i-- {
		e.kv.release(s.blocks[i])
	}
	s.blocks = s.blocks[:0]
}

// fillBatch summarises the scheduled step for the step-time model.
func (e *engine) fillBatch() {
	b := &e.batch
	*b = Batch{Prefills: b.Prefills[:0], CapacityTokens: e.cfg.CapacityTokens()}
	for _, s := range e.sched {
		if s.sched == 1 && s.decoding() {
			b.Decodes++
			b.DecodeContext += int64(s.known)
			continue
		}
		b.PrefillTokens += s.sched
		b.Prefills = append(b.Prefills, Chunk{Tokens: s.sched, Context: s.computed})
	}
}
