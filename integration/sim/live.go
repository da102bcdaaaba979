package sim

import (
	"fmt"
	"time"
)

// Live is one simulated engine driven step by step by its caller instead of by Run's event
// queue: a process that serves real requests in wall-clock time (switchyard engine-sim) adds
// requests as they arrive, asks for the next step and its duration, waits, and then finishes
// the step to collect the tokens generated and the KV events to publish. It uses the same
// scheduler, KV cache and engine hashes as Run. A Live is not safe for concurrent use.
type Live struct {
	e       *engine
	step    StepModel
	byID    map[string]*seq
	counted map[*seq]bool // admitted sequences whose prefix hit is counted
	gen     []int         // generated count of each scheduled sequence before the step
	stats   LiveStats
}

// LiveStats are a Live engine's gauges and counters, as vLLM exports them.
type LiveStats struct {
	Running, Waiting int   // sequences running and waiting (vLLM num_requests_*)
	UsedBlocks       int   // KV blocks in use by sequences
	CachedBlocks     int   // blocks holding a hashed prefix (in use or free): the prefix cache
	NumBlocks        int   // KV capacity in blocks
	PrefixQueries    int64 // prompt tokens looked up in the prefix cache at first admission
	PrefixHits       int64 // of those, tokens found cached
	Preemptions      int64
	Steps            int64
}

// KVOp is one prefix-cache change of a step, in the order it happened: Removed lists evicted
// blocks' engine hashes; otherwise Hashes are newly stored full blocks (engine hashes, chained)
// with their TokenIDs (BlockSize per block) and the engine hash of the block before them.
type KVOp struct {
	Removed   bool
	Hashes    []uint64
	Parent    uint64
	HasParent bool
	TokenIDs  []uint32
}

// TokenOut reports one sequence that generated a token in a step.
type TokenOut struct {
	ID        string
	Token     uint32 // the token generated
	Generated int    // tokens generated so far, this one included
	Done      bool   // the sequence finished with this token and left the engine
	// CachedPrompt is the prompt tokens found in the prefix cache at first admission.
	CachedPrompt int
}

// StepResult is what finishing a step produced. Its slices are reused by the next Finish.
type StepResult struct {
	KV     []KVOp
	Tokens []TokenOut
}

// NewLive returns an idle engine of configuration cfg. step nil = Polynomial; seed seeds the
// engine's block hashes (vLLM's per-process hash seed), so a restarted process with another
// seed has different engine hashes for the same content.
func NewLive(cfg EngineConfig, step StepModel, seed uint64) (*Live, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if step == nil {
		step = Polynomial{}
	}
	l := &Live{e: newEngine(0, "live", cfg, seed), step: step, byID: map[string]*seq{}, counted: map[*seq]bool{}}
	l.stats.NumBlocks = cfg.NumBlocks
	return l, nil
}

// Config returns the engine's configuration.
func (l *Live) Config() EngineConfig { return l.e.cfg }

// MaxModelLen is the longest prompt plus output the engine accepts.
func (l *Live) MaxModelLen() int { return l.e.cfg.maxLen() }

// Add queues request id: tokens holds its prompt (the first prompt tokens) followed by every
// output token it will generate. It fails, changing nothing, for a duplicate id, an empty
// prompt or output, or a request longer than MaxModelLen.
func (l *Live) Add(id string, tokens []uint32, prompt int) error {
	switch {
	case l.byID[id] != nil:
		return fmt.Errorf("%w: request %q is already running", ErrInvalid, id)
	case prompt < 1 || prompt >= len(tokens):
		return fmt.Errorf("%w: request %q: prompt of %d tokens and %d output tokens: both must be positive", ErrInvalid, id, prompt, len(tokens)-prompt)
	case len(tokens) > l.MaxModelLen():
		return fmt.Errorf("%w: request %q: %d tokens exceed the max model length %d", ErrInvalid, id, len(tokens), l.MaxModelLen())
	}
	s := &seq{}
	s.reset(0, id, tokens, prompt)
	l.byID[id] = s
	l.e.enqueue(s)
	return nil
}

// Abort drops request id (its client went away), freeing its blocks; cached prefixes stay
// cached. It reports whether the request was on the engine. Call it between steps only.
func (l *Live) Abort(id string) bool {
	s := l.byID[id]
	if s == nil {
		return false
	}
	delete(l.byID, id)
	delete(l.counted, s)
	e := l.e
	for i, w := range e.waiting {
		if w == s {
			e.waiting = append(e.waiting[:i], e.waiting[i+1:]...)
			return true
		}
	}
	for i, r := range e.running {
		if r == s {
			e.running = append(e.running[:i], e.running[i+1:]...)
			e.freeBlocks(s)
			break
		}
	}
	return true
}

// Step schedules the next step and returns how long it takes, or false when there is no work.
// Finish must be called before the next Step, Add or Abort.
func (l *Live) Step() (time.Duration, bool) {
	if !l.e.schedule() {
		return 0, false
	}
	l.gen = l.gen[:0]
	for _, s := range l.e.sched {
		l.gen = append(l.gen, s.generated)
		if !l.counted[s] && s.cachedPrompt >= 0 {
			l.counted[s] = true
			l.stats.PrefixQueries += int64(s.prompt)
			l.stats.PrefixHits += int64(s.cachedPrompt)
		}
	}
	l.stats.Steps++
	return max(l.step.StepTime(&l.e.batch), time.Nanosecond), true
}

// Finish applies the step Step scheduled and fills res with the KV events and tokens it produced.
func (l *Live) Finish(res *StepResult) {
	e := l.e
	res.KV, res.Tokens = l.kvOps(res.KV[:0]), res.Tokens[:0]
	e.log.reset()
	var out stepOutput
	e.finishStep(&out, 1<<30)
	for i, s := range e.sched {
		if s.generated == l.gen[i] {
			continue
		}
		t := TokenOut{ID: s.rid, Token: s.tokens[s.prompt+s.generated-1], Generated: s.generated, Done: s.done, CachedPrompt: max(s.cachedPrompt, 0)}
		res.Tokens = append(res.Tokens, t)
		if s.done {
			delete(l.byID, s.rid)
			delete(l.counted, s)
		}
	}
	l.stats.Preemptions = int64(e.preemptions)
}

// kvOps converts the step's op log, merging consecutive removals into one op.
func (l *Live) kvOps(dst []KVOp) []KVOp {
	bs := l.e.cfg.BlockSize
	for _, op := range l.e.log.ops {
		if op.s == nil {
			if n := len(dst); n > 0 && dst[n-1].Removed {
				dst[n-1].Hashes = append(dst[n-1].Hashes, op.hash)
				continue
			}
			dst = append(dst, KVOp{Removed: true, Hashes: []uint64{op.hash}})
			continue
		}
		s, from, to := op.s, int(op.from), int(op.to)
		k := KVOp{
			Hashes:   append([]uint64(nil), s.hashes[from:to]...),
			TokenIDs: append([]uint32(nil), s.tokens[from*bs:to*bs]...),
		}
		if from > 0 {
			k.Parent, k.HasParent = s.hashes[from-1], true
		}
		dst = append(dst, k)
	}
	return dst
}

// Stats returns the engine's current gauges and counters.
func (l *Live) Stats() LiveStats {
	st := l.stats
	st.Running, st.Waiting = len(l.e.running), len(l.e.waiting)
	st.UsedBlocks = l.e.kv.used()
	st.CachedBlocks = len(l.e.kv.cached)
	return st
}

// CachedHashes returns the engine hashes of every block in the prefix cache, in no order.
func (l *Live) CachedHashes() []uint64 {
	out := make([]uint64, 0, len(l.e.kv.cached))
	for h := range l.e.kv.cached {
		out = append(out, h)
	}
	return out
}
