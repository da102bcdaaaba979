package enginesim

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/switchyard-llm/switchyard/clients/vllm"
	"github.com/switchyard-llm/switchyard/integration/sim"
)

// EngineConfig configures the simulated engine.
type EngineConfig struct {
	// Engine is the scheduler and KV-cache geometry (sim.DefaultEngine() when zero).
	Engine sim.EngineConfig
	// Step computes step durations; nil = sim.Polynomial (Dynamo's mocker fit).
	Step sim.StepModel
	// Speedup divides every step's duration: 1 runs at the model's pace, 10 ten times faster.
	// 0 = 1.
	Speedup float64
	// Seed seeds the engine's block hashes; a restarted process should use another one, as a
	// vLLM process gets a new hash seed. 0 = derived from the start time.
	Seed uint64
	// MaxQueued bounds the requests waiting for admission; more are refused with
	// ErrOverloaded. 0 = 4096.
	MaxQueued int
	// Logger receives the engine's logs; nil = slog.Default().
	Logger *slog.Logger
}

func (c EngineConfig) withDefaults() (EngineConfig, error) {
	if c.Engine == (sim.EngineConfig{}) {
		c.Engine = sim.DefaultEngine()
	}
	if c.Speedup == 0 {
		c.Speedup = 1
	}
	if c.Seed == 0 {
		c.Seed = uint64(time.Now().UnixNano())
	}
	if c.MaxQueued == 0 {
		c.MaxQueued = 4096
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Speedup < 0 || c.MaxQueued < 0 {
		return c, fmt.Errorf("%w: speed-up %g and max queued %d must be positive", ErrInvalid, c.Speedup, c.MaxQueued)
	}
	return c, nil
}

// Token is one generated token delivered to a request's stream.
type Token struct {
	ID        uint32
	Generated int  // tokens generated so far, this one included
	Last      bool // the request finished with this token
	// CachedPrompt is the prompt tokens the engine found in its prefix cache.
	CachedPrompt int
}

// Request is a request running on the engine. Its tokens arrive on Tokens, which is closed
// after the last one (or when the request is aborted).
type Request struct {
	ID     string
	Prompt int // prompt tokens
	Tokens <-chan Token
	ch     chan Token
}

// pending is a change queued for the engine loop to apply between steps.
type pending struct {
	add    *Request
	tokens []uint32
	abort  string
}

// Engine runs a sim.Live engine in wall-clock time and publishes its KV events. Create it with
// NewEngine, run it with Run; Submit is safe for concurrent use.
type Engine struct {
	cfg  EngineConfig
	live *sim.Live
	enc  *Encoder
	pub  *Publisher // nil = KV events are not published
	log  *slog.Logger
	wake chan struct{}

	mu       sync.Mutex
	queue    []pending
	reqs     map[string]*Request
	stopped  bool
	counters Counters
	stats    sim.LiveStats
	cached   []uint64 // engine hashes in the prefix cache, refreshed after each step
	res      sim.StepResult
}

// Counters are the engine's cumulative request and token counts.
type Counters struct {
	Requests         int64 // accepted
	Finished         int64 // generated every token
	Aborted          int64 // dropped before finishing (client gone)
	PromptTokens     int64
	GenerationTokens int64
	KVBatches        int64 // event batches published
}

// NewEngine builds an engine; pub may be nil (no KV events) and enc must be set when pub is.
func NewEngine(cfg EngineConfig, pub *Publisher, enc *Encoder) (*Engine, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if pub != nil && enc == nil {
		return nil, fmt.Errorf("%w: a publisher needs an encoder", ErrInvalid)
	}
	live, err := sim.NewLive(cfg.Engine, cfg.Step, cfg.Seed)
	if err != nil {
		return nil, err
	}
	return &Engine{
		cfg: cfg, live: live, enc: enc, pub: pub, log: cfg.Logger,
		wake: make(chan struct{}, 1), reqs: map[string]*Request{},
		stats: live.Stats(),
	}, nil
}

// Config returns the engine's configuration with defaults applied.
func (e *Engine) Config() EngineConfig { return e.cfg }

// Submit queues request id with its prompt and the output tokens it will generate. It fails for
// a duplicate live id, a request the engine cannot hold, a full queue or a stopped engine.
func (e *Engine) Submit(id string, prompt, output []uint32) (*Request, error) {
	if len(prompt) == 0 || len(output) == 0 {
		return nil, fmt.Errorf("%w: request %q: prompt and output must not be empty", ErrInvalid, id)
	}
	if n := len(prompt) + len(output); n > e.live.MaxModelLen() {
		return nil, fmt.Errorf("%w: request %q: %d tokens exceed the max model length %d", ErrInvalid, id, n, e.live.MaxModelLen())
	}
	tokens := make([]uint32, 0, len(prompt)+len(output))
	tokens = append(append(tokens, prompt...), output...)
	ch := make(chan Token, len(output))
	r := &Request{ID: id, Prompt: len(prompt), Tokens: ch, ch: ch}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.stopped:
		return nil, ErrStopped
	case e.reqs[id] != nil:
		return nil, fmt.Errorf("%w: request %q is already running", ErrInvalid, id)
	case len(e.reqs) >= e.cfg.MaxQueued+e.cfg.Engine.MaxSeqs:
		return nil, fmt.Errorf("%w: %d requests on the engine", ErrOverloaded, len(e.reqs))
	}
	e.reqs[id] = r
	e.queue = append(e.queue, pending{add: r, tokens: tokens})
	e.counters.Requests++
	e.counters.PromptTokens += int64(len(prompt))
	e.poke()
	return r, nil
}

// Abort drops a request whose client went away; its stream is closed.
func (e *Engine) Abort(id string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.reqs[id] == nil {
		return
	}
	e.queue = append(e.queue, pending{abort: id})
	e.poke()
}

func (e *Engine) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Run steps the engine until ctx is done, then closes every open stream.
func (e *Engine) Run(ctx context.Context) error {
	defer e.stop()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		e.mu.Lock()
		e.applyQueued()
		d, busy := e.live.Step()
		e.mu.Unlock()
		if !busy {
			select {
			case <-ctx.Done():
				return nil
			case <-e.wake:
			}
			continue
		}
		timer.Reset(time.Duration(float64(d) / e.cfg.Speedup))
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		e.finishStep()
	}
}

// applyQueued applies queued adds and aborts; e.mu is held and no step is open.
func (e *Engine) applyQueued() {
	for _, p := range e.queue {
		if p.add != nil {
			if err := e.live.Add(p.add.ID, p.tokens, p.add.Prompt); err != nil {
				e.log.Warn("engine: request refused", "request", p.add.ID, "err", err)
				delete(e.reqs, p.add.ID)
				close(p.add.ch)
			}
			continue
		}
		if r := e.reqs[p.abort]; r != nil {
			e.live.Abort(p.abort)
			delete(e.reqs, p.abort)
			close(r.ch)
			e.counters.Aborted++
		}
	}
	clear(e.queue)
	e.queue = e.queue[:0]
}

// finishStep ends the open step: tokens go to their streams, KV events are published.
func (e *Engine) finishStep() {
	e.mu.Lock()
	e.live.Finish(&e.res)
	for _, t := range e.res.Tokens {
		r := e.reqs[t.ID]
		if r == nil {
			continue
		}
		e.counters.GenerationTokens++
		r.ch <- Token{ID: t.Token, Generated: t.Generated, Last: t.Done, CachedPrompt: t.CachedPrompt}
		if t.Done {
			close(r.ch)
			delete(e.reqs, t.ID)
			e.counters.Finished++
		}
	}
	e.stats = e.live.Stats()
	events := e.kvEvents()
	if len(e.res.KV) > 0 {
		e.cached = e.live.CachedHashes()
	}
	e.mu.Unlock()
	if len(events) > 0 && e.pub != nil {
		e.publish(events)
	}
}

// kvEvents converts the step's KV changes to vLLM events (device tier).
func (e *Engine) kvEvents() []vllm.Event {
	if len(e.res.KV) == 0 || e.pub == nil {
		return nil
	}
	out := make([]vllm.Event, 0, len(e.res.KV))
	for _, op := range e.res.KV {
		if op.Removed {
			out = append(out, vllm.Event{Kind: vllm.BlockRemoved, BlockHashes: op.Hashes, Medium: "GPU"})
			continue
		}
		out = append(out, vllm.Event{
			Kind: vllm.BlockStored, BlockHashes: op.Hashes, Parent: op.Parent, HasParent: op.HasParent,
			TokenIDs: op.TokenIDs, BlockSize: e.cfg.Engine.BlockSize, Medium: "GPU",
		})
	}
	return out
}

// publish encodes and sends one batch; only the engine loop calls it, so batches leave in
// step order.
func (e *Engine) publish(events []vllm.Event) {
	payload, err := e.enc.Encode(float64(time.Now().UnixNano())/1e9, events)
	if err != nil {
		e.log.Error("engine: encoding KV events failed", "err", err)
		return
	}
	e.pub.Publish(payload)
	e.mu.Lock()
	e.counters.KVBatches++
	e.mu.Unlock()
}

// stop refuses new requests and closes every open stream.
func (e *Engine) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopped = true
	for id, r := range e.reqs {
		close(r.ch)
		delete(e.reqs, id)
	}
}

// Snapshot is the engine's state for metrics and inspection.
type Snapshot struct {
	Stats    sim.LiveStats
	Counters Counters
	// CachedHashes are the engine hashes of every block in the prefix cache.
	CachedHashes []uint64
	// NextSeq is the sequence number of the next KV-event batch (0 without a publisher).
	NextSeq uint64
}

// Snapshot returns the engine's current state.
func (e *Engine) Snapshot() Snapshot {
	e.mu.Lock()
	s := Snapshot{Stats: e.stats, Counters: e.counters, CachedHashes: append([]uint64(nil), e.cached...)}
	e.mu.Unlock()
	if e.pub != nil {
		s.NextSeq = e.pub.NextSeq()
	}
	return s
}
