package sim

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/switchyard-llm/switchyard/index"
	"github.com/switchyard-llm/switchyard/integration/workload"
	"github.com/switchyard-llm/switchyard/scoring"
)

// model is the model name the simulated replicas serve.
const model = "sim"

// epoch is simulated time zero on the router's clock.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// simulation is one run of one variant.
type simulation struct {
	cfg     Config
	v       Variant
	w       *workload.Workload
	router  *scoring.Router
	drv     *workload.Driver
	engines []*engine
	byID    map[string]*engine
	q       eventQueue
	now     int64
	out     stepOutput
	evs     []scoring.LifecycleEvent
	removed []uint64
	recs    []reqRecord
	free    []*seq
	stats   routerStats
	done    int
	bin     int64
}

// Run simulates w on a fleet routed by variant v and returns its measurements.
func Run(ctx context.Context, w *workload.Workload, cfg Config, v Variant) (*Result, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &simulation{cfg: c, v: v, w: w, recs: make([]reqRecord, len(w.Requests)), bin: int64(c.Bin)}
	if s.drv, err = workload.NewDriver(w, c.Replay); err != nil {
		return nil, err
	}
	if err := s.setup(ctx); err != nil {
		return nil, err
	}
	defer s.router.Close()
	for _, a := range s.drv.Start() {
		s.q.push(int64(a.At), evArrival, a.Request)
	}
	for n := 0; s.q.len() > 0; n++ {
		if n&4095 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		ev := s.q.pop()
		s.now = ev.at
		switch ev.kind {
		case evArrival:
			s.arrive(ctx, int(ev.idx))
		case evStep:
			s.stepDone(ctx, s.engines[ev.idx])
		}
	}
	return s.result(), nil
}

// setup builds the router on the simulated clock and registers fresh engines.
func (s *simulation) setup(ctx context.Context) error {
	clock := func() time.Time { return epoch.Add(time.Duration(s.now)) }
	est := s.v.OutputEstimate
	rc := scoring.Config{
		DefaultPolicy:  s.v.Policy,
		BlockSize:      s.cfg.RouterBlockSize,
		Index:          index.Config{Now: clock},
		OutputEstimate: &est,
		Seed:           s.cfg.Seed,
		Now:            clock,
	}
	if len(s.v.Params) > 0 {
		rc.PolicyParams = map[string]map[string]float64{s.v.Policy: s.v.Params}
	}
	r, err := scoring.NewRouter(rc)
	if err != nil {
		return fmt.Errorf("policy %s: %w", s.v.Label, err)
	}
	s.router = r
	s.byID = make(map[string]*engine, s.cfg.Replicas)
	for i := range s.cfg.Replicas {
		id := fmt.Sprintf("replica-%02d", i) // ≥ 4 bytes: see the report on HashRing and short ids
		e := newEngine(i, id, s.cfg.Engine, s.cfg.Seed)
		s.engines = append(s.engines, e)
		s.byID[id] = e
		rep := scoring.Replica{ID: id, Model: model, KVBlocks: s.cfg.Engine.NumBlocks, MaxBatchedTokens: s.cfg.Engine.MaxBatchedTokens}
		if _, err := r.Register(ctx, rep); err != nil {
			return fmt.Errorf("register %s: %w", id, err)
		}
		if err := r.ClearKV(id, 0); err != nil { // a fresh engine announces an empty cache
			return fmt.Errorf("clear %s: %w", id, err)
		}
	}
	return nil
}

// arrive routes request i and hands it to the chosen engine.
func (s *simulation) arrive(ctx context.Context, i int) {
	r := &s.w.Requests[i]
	rec := &s.recs[i]
	rec.issued, rec.arrival, rec.replica = true, s.now, -1
	if r.InputLength+r.OutputLength > s.cfg.Engine.maxLen() {
		s.drop(i, dropTooLong)
		return
	}
	sq := s.newSeq()
	toks := s.w.Tokens(sq.tokens[:0], i)
	sq.reset(i, "q"+strconv.Itoa(i), toks, r.InputLength)
	req := scoring.PickRequest{
		RequestID: sq.rid, Model: model, SessionID: r.SessionID,
		Prompt: scoring.Prompt{Tokens: toks[:r.InputLength]},
	}
	if s.v.Oracle {
		req.ExpectedOutputTokens = r.OutputLength
	}
	d, err := s.router.Pick(ctx, req)
	if err != nil {
		s.stats.pickErrors++
		s.free = append(s.free, sq)
		s.drop(i, dropPickError)
		return
	}
	e := s.byID[d.ReplicaID]
	rec.replica = int16(e.idx)
	e.enqueue(sq)
	if !e.busy {
		s.startStep(e)
	}
}

// drop finishes request i without serving it, so its session goes on.
func (s *simulation) drop(i int, why dropReason) {
	s.recs[i].dropped = why
	s.finish(i)
}

// finish counts request i as over and issues what it releases.
func (s *simulation) finish(i int) {
	s.done++
	if s.cfg.Progress != nil && s.done%256 == 0 {
		s.cfg.Progress(s.done, len(s.w.Requests))
	}
	for _, a := range s.drv.Done(i, time.Duration(s.now)) {
		s.q.push(int64(a.At), evArrival, a.Request)
	}
}

func (s *simulation) newSeq() *seq {
	if n := len(s.free); n > 0 {
		sq := s.free[n-1]
		s.free = s.free[:n-1]
		return sq
	}
	return &seq{}
}

// startStep schedules e's next step if it has work.
func (s *simulation) startStep(e *engine) {
	if !e.schedule() {
		e.busy = false
		return
	}
	d := max(int64(s.cfg.Step.StepTime(&e.batch)), 1)
	e.busy = true
	e.steps++
	e.busyNS += d
	s.q.push(s.now+d, evStep, e.idx)
}

// stepDone ends e's step: its KV events and the data plane's lifecycle events reach the
// router, finished requests are recorded, and the next step starts.
func (s *simulation) stepDone(ctx context.Context, e *engine) {
	s.publish(e)
	s.out.reset()
	e.finishStep(&s.out, s.cfg.ProgressEvery)
	s.lifecycle(ctx, e)
	for _, sq := range s.out.done {
		rec := &s.recs[sq.req]
		rec.done, rec.cached, rec.preemptions = s.now, int32(sq.cachedPrompt), int32(sq.preemptions)
		sq.tokens, sq.rid = sq.tokens[:0], ""
		s.free = append(s.free, sq)
		s.finish(sq.req)
	}
	for _, sq := range s.out.first {
		s.recs[sq.req].first = s.now
	}
	e.series.set(s.now, e.decodeBlocks(), s.bin)
	s.startStep(e)
}

// publish sends the step's KV events to the router in the order they happened.
func (s *simulation) publish(e *engine) {
	bs := e.cfg.BlockSize
	flush := func() {
		if len(s.removed) == 0 {
			return
		}
		s.stats.removedBlocks += uint64(len(s.removed))
		s.stats.kvError(s.router.ApplyRemoved(e.id, 0, index.Removed{BlockHashes: s.removed}))
		s.removed = s.removed[:0]
	}
	for _, op := range e.log.ops {
		if op.s == nil {
			s.removed = append(s.removed, op.hash)
			continue
		}
		flush()
		sq, from, to := op.s, int(op.from), int(op.to)
		ev := index.Stored{
			BlockHashes: sq.hashes[from:to],
			TokenIDs:    sq.tokens[from*bs : to*bs],
			BlockSize:   bs,
		}
		if from > 0 {
			ev.Parent, ev.HasParent = sq.hashes[from-1], true
		}
		s.stats.storedEvents++
		s.stats.kvError(s.router.ApplyStored(e.id, 0, ev))
	}
	flush()
	e.log.reset()
}

// lifecycle reports the step's first tokens, progress and completions as a data plane would.
func (s *simulation) lifecycle(ctx context.Context, e *engine) {
	s.evs = s.evs[:0]
	at := epoch.Add(time.Duration(s.now))
	for _, sq := range s.out.first {
		s.evs = append(s.evs, scoring.LifecycleEvent{RequestID: sq.rid, ReplicaID: e.id, Time: at, Kind: scoring.EventFirstToken})
	}
	for _, sq := range s.out.progress {
		s.evs = append(s.evs, scoring.LifecycleEvent{RequestID: sq.rid, ReplicaID: e.id, Time: at, Kind: scoring.EventProgress, GeneratedTokens: sq.generated})
	}
	for _, sq := range s.out.done {
		s.evs = append(s.evs, scoring.LifecycleEvent{
			RequestID: sq.rid, ReplicaID: e.id, Time: at, Kind: scoring.EventDone,
			OutputTokens: sq.generated, CachedPromptTokens: sq.cachedPrompt, Status: "ok",
		})
	}
	if len(s.evs) == 0 {
		return
	}
	res := s.router.ApplyLifecycle(ctx, s.evs)
	s.stats.lifecycleUnknown += res.UnknownRequest
	s.stats.lifecycleRejected += res.UnknownReplica + res.Invalid
}

// routerStats counts what the router did with the simulated events.
type routerStats struct {
	pickErrors        int
	storedEvents      uint64
	removedBlocks     uint64
	kvRejected        map[string]uint64
	lifecycleUnknown  int
	lifecycleRejected int
}

func (r *routerStats) kvError(err error) {
	if err == nil {
		return
	}
	if r.kvRejected == nil {
		r.kvRejected = map[string]uint64{}
	}
	reason := "other"
	for _, k := range []struct {
		err  error
		name string
	}{{index.ErrOrphan, "orphan"}, {index.ErrBlockSize, "block_size"}, {index.ErrTokenCount, "token_count"}, {index.ErrUnknownBlock, "unknown_block"}, {scoring.ErrUnknownReplica, "unknown_replica"}} {
		if errors.Is(err, k.err) {
			reason = k.name
			break
		}
	}
	r.kvRejected[reason]++
}
