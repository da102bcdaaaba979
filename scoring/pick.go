package scoring

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/switchyard-llm/switchyard/index"
)

// pickScratch holds one pick's reusable buffers (pooled; nothing here escapes a pick).
type pickScratch struct {
	hashes   []uint64
	ids      []string   // replicas of the model to match (eligible and draining)
	reps     []*replica // parallel to ids
	slots    []int      // parallel to ids: position in the decision's candidates
	overlaps []index.Overlap
	cands    []Candidate
	in       PolicyInput // handed to the policy by pointer; kept here so it does not escape per pick
}

// Pick chooses a replica for req and, unless req.DryRun, reserves the request on it atomically
// with the choice. A live request id gets its earlier decision back (idempotent retries).
// Errors: ErrInvalid, ErrUnknownPolicy, ErrUnknownModel, ErrNoReplica, ErrConflict (a live
// request id of another model), or the context's error.
func (r *Router) Pick(ctx context.Context, req PickRequest) (*Decision, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validatePick(&req); err != nil {
		return nil, err
	}
	if !req.DryRun {
		if q := r.reqs.get(req.RequestID); q != nil {
			return r.replay(q, &req)
		}
	}
	reps := r.fleet.Load().models[req.Model]
	if len(reps) == 0 {
		return nil, fmt.Errorf("%w: %q has no registered replica", ErrUnknownModel, req.Model)
	}
	pol, polName, err := r.policyFor(&req)
	if err != nil {
		return nil, err
	}
	sc := r.scratch.Get().(*pickScratch)
	defer r.scratch.Put(sc)

	d := &Decision{
		RequestID: req.RequestID, Model: req.Model, SessionID: req.SessionID,
		Policy: polName, DryRun: req.DryRun,
	}
	d.Candidates = r.listCandidates(sc, &req, reps)
	if len(sc.ids) == 0 {
		r.ctr.noReplica.Add(1)
		return nil, fmt.Errorf("%w: none of %d candidates of model %q is registered", ErrNoReplica, len(d.Candidates), req.Model)
	}

	pool := reps[0].pool
	shape, err := shapePrompt(sc.hashes[:0], &req, r.set.blockSize, r.set.textChunk)
	if err != nil {
		return nil, err
	}
	sc.hashes = shape.hashes
	if len(shape.hashes) > 0 {
		sc.overlaps = pool.ix.Match(shape.hashes, sc.ids, sc.overlaps[:0])
	} else {
		sc.overlaps = sc.overlaps[:0]
		for range sc.ids {
			sc.overlaps = append(sc.overlaps, index.Overlap{})
		}
	}
	d.PromptTokens = shape.tokens

	// Allocate what the booking needs before taking the model's lock.
	d.Fallbacks = make([]string, 0, len(sc.ids)-1)
	var q *request
	if !req.DryRun {
		q = &request{id: req.RequestID, session: req.SessionID, pool: pool, decision: d,
			state: reqReserved, live: true, prompt: shape.tokens, cps: shape.checkpointList()}
		for _, c := range q.cps {
			q.hashed += int64(c.blocks)
		}
	}
	pool.mu.Lock()
	holder, err := r.decideLocked(pool, sc, &req, &shape, pol, d, q)
	pool.mu.Unlock()
	if err != nil {
		if holder != nil { // another pick took the id meanwhile
			return r.replay(holder, &req)
		}
		return nil, err
	}
	if req.DryRun {
		r.ctr.dryRuns.Add(1)
		return d, nil
	}
	r.ctr.picks.Add(1)
	if r.set.predict {
		r.predict(pool, d, &shape)
	}
	return d, nil
}

// predict inserts the prompt's blocks as predicted entries for the chosen replica: the index's
// default short TTL for token prompts (until the engine confirms), TextPredictedTTL for text,
// whose only source is the router's own decisions. Leading blocks the replica already holds
// confirmed on its device tier are skipped (confirmed state wins anyway); when some of its
// overlap is only predicted, the whole prompt is re-predicted to extend it.
func (r *Router) predict(pool *modelPool, d *Decision, shape *promptShape) {
	hashes := shape.hashes
	for i := range d.Candidates {
		if c := &d.Candidates[i]; c.Rank == 1 && c.Overlap.Predicted == 0 {
			hashes = hashes[min(c.Overlap.Device, len(hashes)):]
		}
	}
	if len(hashes) == 0 {
		return
	}
	ttl := time.Duration(0)
	if shape.text {
		ttl = TextPredictedTTL
	}
	pool.ix.Predict(d.ReplicaID, hashes, ttl)
}

// errTaken reports that a concurrent pick reserved the same request id first.
var errTaken = fmt.Errorf("%w: request id reserved concurrently", ErrConflict)

// decideLocked snapshots the candidates' loads, ranks them and books q (nil for a dry run) on
// the winner. Called with the model's lock held. On a lost race for the request id it returns
// the holder and errTaken.
func (r *Router) decideLocked(pool *modelPool, sc *pickScratch, req *PickRequest, shape *promptShape, pol Policy, d *Decision, q *request) (*request, error) {
	now := r.now()
	r.sweep(pool, now)
	if !req.DryRun {
		if q := r.reqs.get(req.RequestID); q != nil {
			return q, errTaken
		}
	}
	nowNano := now.UnixNano()
	window := int64(TextPredictedTTL)
	sc.cands = sc.cands[:0]
	for i, rp := range sc.reps {
		cs := &d.Candidates[sc.slots[i]]
		if rp.gone {
			cs.Ineligible = IneligibleNotRegistered
			continue
		}
		l := &rp.load
		cs.Overlap = sc.overlaps[i]
		cs.CachedTokens = shape.cachedTokens(cs.Overlap.Prefix)
		cs.PrefillTokens = l.prefill
		cs.HeldBlocks = l.decodeBlocks()
		remaining := float64(l.remaining) / float64(shape.blockSize)
		cs.DecodeBlocks = float64(cs.HeldBlocks) + remaining
		cs.ActiveRequests = l.active
		cs.NewBlocks = float64(shape.promptBlocks()) - l.heldPrefixBlocks(shape)
		if !rp.ready() {
			cs.Ineligible = IneligibleDraining
			if ReplicaState(rp.state.Load()) == stateQuarantined {
				cs.Ineligible = IneligibleUnhealthy
			}
			continue
		}
		sc.cands = append(sc.cands, Candidate{
			ReplicaID: rp.id, Overlap: cs.Overlap, CachedTokens: cs.CachedTokens,
			PrefillTokens: cs.PrefillTokens, HeldBlocks: cs.HeldBlocks,
			RemainingOutputBlocks: remaining, NewBlocks: cs.NewBlocks,
			ActiveRequests: cs.ActiveRequests, TreeSize: l.tree.value(nowNano, window),
			slot: i,
		})
	}
	if len(sc.cands) == 0 {
		r.ctr.noReplica.Add(1)
		return nil, fmt.Errorf("%w: no ready replica among %d candidates of model %q", ErrNoReplica, len(d.Candidates), req.Model)
	}
	expected, source := req.ExpectedOutputTokens, "hint"
	if expected == 0 {
		expected, source = 0, ""
		if r.set.learn {
			expected, source = pool.est.expected(req.SessionID)
		}
	}
	sc.in = PolicyInput{
		RequestID: req.RequestID, SessionID: req.SessionID, Model: req.Model, LoRA: req.LoRA,
		Priority: req.Priority, PromptTokens: shape.tokens, PromptUnits: len(shape.hashes),
		UnitTokens: shape.unitTokens, UnitSize: shape.unitSize, PromptSize: shape.size,
		BlockSize: shape.blockSize, ExpectedOutputTokens: expected, Rand: pool.rnd, model: pool,
	}
	pol.Rank(&sc.in, sc.cands)
	sc.in = PolicyInput{} // drop references to the pool and request strings

	for rank, c := range sc.cands {
		cs := &d.Candidates[sc.slots[c.slot]]
		cs.Cost, cs.Rank = c.Cost, rank+1
		if rank > 0 {
			d.Fallbacks = append(d.Fallbacks, c.ReplicaID)
		}
	}
	best := sc.cands[0]
	chosen := sc.reps[best.slot]
	d.ReplicaID, d.CachedTokens = chosen.id, best.CachedTokens
	d.ReplicaAddress = chosen.info.Address
	d.ExpectedOutputTokens, d.OutputSource = expected, source
	d.Time = now
	d.DecisionID = r.nextDecisionID()
	if q == nil {
		return nil, nil
	}
	q.rep, q.cached, q.expected, q.touched = chosen, best.CachedTokens, expected, now
	if old := r.reqs.putIfAbsent(q); old != nil {
		return old, errTaken
	}
	q.attach(shape.blockSize)
	pool.reqs.pushBack(q)
	matched := int64(best.Overlap.Prefix * shape.unitSize)
	chosen.load.tree.add(nowNano, int64(shape.size)-matched)
	return nil, nil
}

// replay answers a retried pick of a live request with its earlier decision.
func (r *Router) replay(q *request, req *PickRequest) (*Decision, error) {
	if q.pool.name != req.Model {
		return nil, fmt.Errorf("%w: request %q is live for model %q, not %q", ErrConflict, req.RequestID, q.pool.name, req.Model)
	}
	r.ctr.replays.Add(1)
	return q.decision, nil
}

// listCandidates builds the decision's candidate list (every listed id, or every replica of the
// model) and fills sc with the ones of the model to score.
func (r *Router) listCandidates(sc *pickScratch, req *PickRequest, reps []*replica) []CandidateScore {
	sc.ids, sc.reps, sc.slots = sc.ids[:0], sc.reps[:0], sc.slots[:0]
	add := func(rp *replica, slot int) {
		sc.ids = append(sc.ids, rp.id)
		sc.reps = append(sc.reps, rp)
		sc.slots = append(sc.slots, slot)
	}
	if len(req.Candidates) == 0 {
		out := make([]CandidateScore, len(reps))
		for i, rp := range reps {
			out[i].ReplicaID = rp.id
			add(rp, i)
		}
		return out
	}
	byID := r.fleet.Load().byID
	out := make([]CandidateScore, len(req.Candidates))
	for i, id := range req.Candidates {
		out[i].ReplicaID = id
		rp := byID[id]
		switch {
		case rp == nil:
			out[i].Ineligible = IneligibleNotRegistered
		case rp.model != req.Model:
			out[i].Ineligible = IneligibleWrongModel
		default:
			add(rp, i)
		}
	}
	return out
}

// policyFor resolves the request's policy (request, else model, else server default) and
// applies per-request parameter overrides.
func (r *Router) policyFor(req *PickRequest) (Policy, string, error) {
	name := req.Policy
	if name == "" {
		name = r.set.modelPolicies[req.Model]
	}
	if name == "" {
		name = r.set.defaultPolicy
	}
	p, ok := r.policies[name]
	if !ok {
		return nil, "", fmt.Errorf("%w: %q (have: %v)", ErrUnknownPolicy, name, r.names)
	}
	if len(req.Params) > 0 {
		var err error
		if p, err = p.WithParams(req.Params); err != nil {
			return nil, "", fmt.Errorf("params: %w", err)
		}
	}
	return p, name, nil
}

// validatePick checks every field of req; errors name the field.
func validatePick(req *PickRequest) error {
	switch {
	case req.Model == "":
		return fmt.Errorf("%w: model is empty", ErrInvalid)
	case req.RequestID == "" && !req.DryRun:
		return fmt.Errorf("%w: request_id is empty", ErrInvalid)
	case req.Prompt.kinds() != 1:
		return fmt.Errorf("%w: prompt: exactly one of token_ids, block_hashes, text must be set (got %d)", ErrInvalid, req.Prompt.kinds())
	case req.PromptTokens < 0:
		return fmt.Errorf("%w: prompt_tokens %d is negative", ErrInvalid, req.PromptTokens)
	case req.ExpectedOutputTokens < 0:
		return fmt.Errorf("%w: expected_output_tokens %d is negative", ErrInvalid, req.ExpectedOutputTokens)
	}
	return validateCandidates(req.Candidates)
}

// validateCandidates rejects empty and repeated ids without allocating for short lists.
func validateCandidates(ids []string) error {
	for i, id := range ids {
		if id == "" {
			return fmt.Errorf("%w: candidates[%d] is empty", ErrInvalid, i)
		}
	}
	if len(ids) > 64 {
		sorted := slices.Clone(ids)
		slices.Sort(sorted)
		for i := 1; i < len(sorted); i++ {
			if sorted[i] == sorted[i-1] {
				return fmt.Errorf("%w: candidates: %q is listed twice", ErrInvalid, sorted[i])
			}
		}
		return nil
	}
	for i, id := range ids {
		for j := 0; j < i; j++ {
			if ids[j] == id {
				return fmt.Errorf("%w: candidates: %q is listed twice", ErrInvalid, id)
			}
		}
	}
	return nil
}
