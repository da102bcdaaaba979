package scoring

import (
	"context"
	"fmt"
)

// stateQuarantined is the effective state of a replica that failed its liveness checks: it is
// not StateReady, so picks skip it (reported ineligible as "unhealthy"), while the
// registered state in Replica.State stays what the operator set.
const stateQuarantined ReplicaState = 3

// Quarantine takes a replica that stopped answering out of routing: it gets no new picks, its
// live requests are freed (the data plane retries them elsewhere), and its index entries are
// dropped on every tier and rank, since an engine that died lost its cache and one that is cut
// off can no longer be trusted to report evictions. It returns how many requests were freed.
// Quarantining a quarantined replica frees what was reserved on it since and drops its entries
// again. ErrUnknownReplica if it is not registered.
//
// A later Register (the engine announcing itself) or Restore puts it back; SetState while
// quarantined only records the state that Restore will apply.
func (r *Router) Quarantine(ctx context.Context, id string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r.mu.Lock()
	rp := r.fleet.Load().byID[id]
	if rp == nil {
		r.mu.Unlock()
		return 0, fmt.Errorf("%w: %q", ErrUnknownReplica, id)
	}
	p := rp.pool
	p.mu.Lock()
	rp.state.Store(uint32(stateQuarantined))
	freed := 0
	for q := p.reqs.head; q != nil; {
		next := q.next
		if q.rep == rp {
			r.free(q)
			freed++
		}
		q = next
	}
	p.mu.Unlock()
	r.mu.Unlock()
	p.ix.RemoveReplica(id)
	return freed, nil
}

// Restore returns a quarantined replica to its registered state, with an empty index: whatever
// it holds is learnt again from its KV events, so it starts clean. Restoring a replica that is
// not quarantined changes nothing and reports false. ErrUnknownReplica if it is not registered.
func (r *Router) Restore(ctx context.Context, id string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	r.mu.Lock()
	rp := r.fleet.Load().byID[id]
	if rp == nil {
		r.mu.Unlock()
		return false, fmt.Errorf("%w: %q", ErrUnknownReplica, id)
	}
	p := rp.pool
	p.mu.Lock()
	restored := ReplicaState(rp.state.Load()) == stateQuarantined
	if restored {
		rp.state.Store(uint32(rp.info.State))
	}
	p.mu.Unlock()
	r.mu.Unlock()
	if restored {
		p.ix.RemoveReplica(id)
	}
	return restored, nil
}

// Quarantined reports whether a replica is quarantined. ErrUnknownReplica if it is not
// registered.
func (r *Router) Quarantined(id string) (bool, error) {
	rp := r.fleet.Load().byID[id]
	if rp == nil {
		return false, fmt.Errorf("%w: %q", ErrUnknownReplica, id)
	}
	return ReplicaState(rp.state.Load()) == stateQuarantined, nil
}
