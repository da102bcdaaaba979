package scoring

import (
	"context"
	"sync/atomic"
	"time"
)

// EventKind is the kind of a request lifecycle event.
type EventKind uint8

const (
	// EventAdmitted: the engine accepted the request; may correct the replica and cached tokens.
	EventAdmitted EventKind = iota + 1
	// EventFirstToken: prefill is over; the request's prefill load is released.
	EventFirstToken
	// EventProgress: the request has generated GeneratedTokens (cumulative); output blocks grow.
	EventProgress
	// EventDone: the request finished; all its load is released and its output length learned.
	EventDone
)

// String returns "admitted", "first_token", "progress" or "done".
func (k EventKind) String() string {
	switch k {
	case EventAdmitted:
		return "admitted"
	case EventFirstToken:
		return "first_token"
	case EventProgress:
		return "progress"
	case EventDone:
		return "done"
	}
	return "unknown"
}

// LifecycleEvent moves a request through its states. ReplicaID, when set and different from the
// request's replica, moves the request there (the data plane overrode the choice).
type LifecycleEvent struct {
	RequestID, ReplicaID             string
	Time                             time.Time // zero = now (informational: expiry uses the router clock)
	Kind                             EventKind
	PromptTokens, CachedTokens       int    // admitted: the engine's counts (0 = unchanged)
	GeneratedTokens                  int    // progress (cumulative)
	OutputTokens, CachedPromptTokens int    // done
	Status                           string // done: "ok","error","cancelled"
}

// LifecycleResult counts what happened to a batch of events.
type LifecycleResult struct {
	Applied        int // events that changed a request's state or load
	UnknownRequest int // events for request ids that are not live (never picked, done or expired)
	UnknownReplica int // events naming an unregistered replica or one of another model (dropped)
	Stale          int // duplicates and out-of-order events that had nothing left to change
	Invalid        int // events with no request id or an unknown kind (dropped)
}

// lifecycleHold bounds how many consecutive events of one model are applied under one hold of
// its lock, so that a long batch does not stall that model's picks.
const lifecycleHold = 64

// ApplyLifecycle applies events in order. Events are never fatal: unknown ids, duplicates and
// out-of-order events are counted and otherwise harmless, and no load ever goes negative.
// Consecutive events of one model are applied under one hold of its lock. Applying never
// blocks on I/O, so the whole batch is applied even if ctx is cancelled meanwhile (a partly
// applied batch would drop events uncounted).
func (r *Router) ApplyLifecycle(_ context.Context, evs []LifecycleEvent) LifecycleResult {
	var res LifecycleResult
	var held *modelPool // the model whose lock is held
	n := 0
	unlock := func() {
		if held != nil {
			held.mu.Unlock()
			held, n = nil, 0
		}
	}
	defer unlock()
	for i := range evs {
		ev := &evs[i]
		q, to, bad := r.resolveEvent(ev)
		if bad != outApplied {
			r.count(&res, bad)
			continue
		}
		if held != q.pool || n >= lifecycleHold {
			unlock()
			held = q.pool
			held.mu.Lock()
		}
		n++
		r.count(&res, r.applyLocked(q, ev, to))
	}
	return res
}

// resolveEvent finds the event's request and, when it names one, replica; the outcome is
// outApplied when both resolve.
func (r *Router) resolveEvent(ev *LifecycleEvent) (*request, *replica, outcome) {
	if ev.RequestID == "" || ev.Kind < EventAdmitted || ev.Kind > EventDone ||
		ev.PromptTokens < 0 || ev.CachedTokens < 0 || ev.GeneratedTokens < 0 || ev.OutputTokens < 0 {
		return nil, nil, outInvalid
	}
	q := r.reqs.get(ev.RequestID)
	if q == nil {
		return nil, nil, outUnknownRequest
	}
	var to *replica
	if ev.ReplicaID != "" {
		if to = r.fleet.Load().byID[ev.ReplicaID]; to == nil {
			return nil, nil, outUnknownReplica
		}
	}
	return q, to, outApplied
}

// count adds one event's outcome to res and the Router's counters.
func (r *Router) count(res *LifecycleResult, o outcome) {
	field := [...]*int{&res.Applied, &res.Stale, &res.UnknownRequest, &res.UnknownReplica, &res.Invalid}
	ctr := [...]*atomic.Uint64{nil, &r.ctr.stale, &r.ctr.unknownLifecycle, &r.ctr.unknownReplica, &r.ctr.invalid}
	*field[o]++
	if ctr[o] != nil {
		ctr[o].Add(1)
	}
}

type outcome uint8

const (
	outApplied outcome = iota
	outStale
	outUnknownRequest
	outUnknownReplica
	outInvalid
)

// applyLocked applies one event to q; called with q's model lock held.
func (r *Router) applyLocked(q *request, ev *LifecycleEvent, to *replica) outcome {
	now := r.now()
	r.sweep(q.pool, now)
	if !q.live {
		return outUnknownRequest
	}
	if to != nil && (to.pool != q.pool || to.gone) {
		return outUnknownReplica
	}
	bs := r.set.blockSize
	changed := false
	if to != nil && to != q.rep {
		q.detach(bs)
		q.rep = to
		q.attach(bs)
		r.ctr.moved.Add(1)
		changed = true
	}
	q.pool.touch(q, now)
	if ev.Kind == EventDone {
		if r.set.learn && ev.Status != "error" && ev.Status != "cancelled" {
			if n := max(ev.OutputTokens, q.generated); n > 0 {
				q.pool.est.observe(q.session, n)
			}
		}
		r.free(q)
		return outApplied
	}
	q.addScalars(-1, bs)
	switch ev.Kind {
	case EventAdmitted:
		if q.state < reqPrefilling {
			q.state = reqPrefilling
			changed = true
		}
		if ev.PromptTokens > 0 && ev.PromptTokens != q.prompt {
			q.prompt = ev.PromptTokens
			changed = true
		}
		if c := min(ev.CachedTokens, q.prompt); c > 0 && c != q.cached {
			q.cached = c
			changed = true
		}
	case EventFirstToken:
		if q.state < reqDecoding {
			q.state = reqDecoding
			changed = true
		}
	case EventProgress:
		if q.state < reqDecoding { // generating implies the first token came
			q.state = reqDecoding
			changed = true
		}
		if ev.GeneratedTokens > q.generated {
			q.generated = ev.GeneratedTokens
			changed = true
		}
	}
	q.addScalars(+1, bs)
	if !changed {
		return outStale
	}
	return outApplied
}
