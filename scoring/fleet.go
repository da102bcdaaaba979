package scoring

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/switchyard-llm/switchyard/index"
)

// Register adds a replica, or updates one with the same id (address, capacity, labels, state).
// Re-registering an id under another model is ErrConflict; an empty ID or Model, a negative
// capacity or an invalid state is ErrInvalid. The zero State means StateReady.
func (r *Router) Register(ctx context.Context, rep Replica) (ReplicaStatus, error) {
	if err := ctx.Err(); err != nil {
		return ReplicaStatus{}, err
	}
	if err := validateReplica(&rep); err != nil {
		return ReplicaStatus{}, err
	}
	rep.Labels = maps.Clone(rep.Labels)
	r.mu.Lock()
	defer r.mu.Unlock()
	v := r.fleet.Load()
	if old := v.byID[rep.ID]; old != nil {
		if old.model != rep.Model {
			return ReplicaStatus{}, fmt.Errorf("%w: replica %q is registered for model %q, not %q", ErrConflict, rep.ID, old.model, rep.Model)
		}
		old.pool.mu.Lock()
		old.info = rep
		old.state.Store(uint32(rep.State))
		st := statusLocked(old)
		old.pool.mu.Unlock()
		st.CachedBlocks = old.pool.ix.Stats().Replicas[rep.ID]
		return st, nil
	}
	p := r.pools[rep.Model]
	if p == nil {
		p = newModelPool(rep.Model, &r.set)
		r.pools[rep.Model] = p
	}
	rp := &replica{id: rep.ID, model: rep.Model, pool: p, info: rep}
	rp.state.Store(uint32(rep.State))
	p.mu.Lock()
	p.addMember(rep.ID)
	st := statusLocked(rp)
	p.mu.Unlock()
	r.publish(v, rp, nil)
	return st, nil
}

func validateReplica(rep *Replica) error {
	switch {
	case rep.ID == "":
		return fmt.Errorf("%w: replica id is empty", ErrInvalid)
	case rep.Model == "":
		return fmt.Errorf("%w: replica %q: model is empty", ErrInvalid, rep.ID)
	case rep.KVBlocks < 0:
		return fmt.Errorf("%w: replica %q: kv_blocks %d is negative", ErrInvalid, rep.ID, rep.KVBlocks)
	case rep.MaxBatchedTokens < 0:
		return fmt.Errorf("%w: replica %q: max_batched_tokens %d is negative", ErrInvalid, rep.ID, rep.MaxBatchedTokens)
	}
	switch rep.State {
	case 0:
		rep.State = StateReady
	case StateReady, StateDraining:
	default:
		return fmt.Errorf("%w: replica %q: state %d", ErrInvalid, rep.ID, rep.State)
	}
	return nil
}

// publish swaps in a copy of v with add added and/or drop removed. Called with r.mu held.
func (r *Router) publish(v *fleetView, add, drop *replica) {
	nv := &fleetView{byID: maps.Clone(v.byID), models: maps.Clone(v.models)}
	if add != nil {
		nv.byID[add.id] = add
		reps := slices.Clone(nv.models[add.model])
		i, _ := slices.BinarySearchFunc(reps, add.id, byID)
		nv.models[add.model] = slices.Insert(reps, i, add)
	}
	if drop != nil {
		delete(nv.byID, drop.id)
		reps := slices.DeleteFunc(slices.Clone(nv.models[drop.model]), func(x *replica) bool { return x == drop })
		if len(reps) == 0 {
			delete(nv.models, drop.model)
		} else {
			nv.models[drop.model] = reps
		}
	}
	r.fleet.Store(nv)
}

func byID(rp *replica, id string) int { return strings.Compare(rp.id, id) }

// Deregister removes a replica: its index entries, its reservations (freed and counted in
// Counters.Deregistered) and its ring membership. ErrUnknownReplica if it is not registered.
func (r *Router) Deregister(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	v := r.fleet.Load()
	rp := v.byID[id]
	if rp == nil {
		r.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrUnknownReplica, id)
	}
	r.publish(v, nil, rp)
	p := rp.pool
	p.mu.Lock()
	rp.gone = true
	for q := p.reqs.head; q != nil; {
		next := q.next
		if q.rep == rp {
			r.free(q)
			r.ctr.deregistered.Add(1)
		}
		q = next
	}
	p.clampedGone += rp.load.clamped
	p.removeMember(id)
	p.mu.Unlock()
	r.mu.Unlock()
	p.ix.RemoveReplica(id)
	return nil
}

// SetState marks a replica ready or draining. Draining replicas take no new requests but keep
// their load until it completes. ErrUnknownReplica, or ErrInvalid for another state.
func (r *Router) SetState(ctx context.Context, id string, st ReplicaState) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if st != StateReady && st != StateDraining {
		return fmt.Errorf("%w: state %d", ErrInvalid, st)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rp := r.fleet.Load().byID[id]
	if rp == nil {
		return fmt.Errorf("%w: %q", ErrUnknownReplica, id)
	}
	rp.pool.mu.Lock()
	rp.info.State = st
	// A quarantined replica keeps out of routing; Restore applies the state.
	if ReplicaState(rp.state.Load()) != stateQuarantined {
		rp.state.Store(uint32(st))
	}
	rp.pool.mu.Unlock()
	return nil
}

// Replica returns one replica's status. ErrUnknownReplica if it is not registered.
func (r *Router) Replica(id string) (ReplicaStatus, error) {
	rp := r.fleet.Load().byID[id]
	if rp == nil {
		return ReplicaStatus{}, fmt.Errorf("%w: %q", ErrUnknownReplica, id)
	}
	p := rp.pool
	p.mu.Lock()
	r.sweep(p, r.now())
	st := statusLocked(rp)
	p.mu.Unlock()
	st.CachedBlocks = p.ix.ReplicaBlocks(id)
	return st, nil
}

// Replicas lists the replicas of model ("" = every model), sorted by id, with live load and
// the index's confirmed blocks per tier.
func (r *Router) Replicas(model string) []ReplicaStatus {
	v := r.fleet.Load()
	models := make([]string, 0, len(v.models))
	for m := range v.models {
		if model == "" || m == model {
			models = append(models, m)
		}
	}
	var out []ReplicaStatus
	now := r.now()
	for _, m := range models {
		reps := v.models[m]
		p := reps[0].pool
		stats := p.ix.Stats()
		p.mu.Lock()
		r.sweep(p, now)
		for _, rp := range reps {
			st := statusLocked(rp)
			st.CachedBlocks = stats.Replicas[rp.id]
			out = append(out, st)
		}
		p.mu.Unlock()
	}
	slices.SortFunc(out, func(a, b ReplicaStatus) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// statusLocked snapshots a replica; called with its model's lock held.
func statusLocked(rp *replica) ReplicaStatus {
	info := rp.info
	info.Labels = maps.Clone(info.Labels)
	return ReplicaStatus{
		Replica: info,
		Load: Load{
			PrefillTokens:  rp.load.prefill,
			DecodeBlocks:   rp.load.decodeBlocks(),
			ActiveRequests: rp.load.active,
		},
	}
}

// ApplyStored applies an engine's BlockStored event to the replica's model index.
// ErrUnknownReplica, ErrInvalid for a negative rank, or the index's error (wrapped).
func (r *Router) ApplyStored(replica string, rank int, ev index.Stored) error {
	ix, err := r.indexOf(replica, rank)
	if err != nil {
		return err
	}
	if err := ix.ApplyStored(replica, rank, ev); err != nil {
		return fmt.Errorf("replica %q rank %d: stored: %w", replica, rank, err)
	}
	return nil
}

// ApplyRemoved applies an engine's BlockRemoved event to the replica's model index.
func (r *Router) ApplyRemoved(replica string, rank int, ev index.Removed) error {
	ix, err := r.indexOf(replica, rank)
	if err != nil {
		return err
	}
	if err := ix.ApplyRemoved(replica, rank, ev); err != nil {
		return fmt.Errorf("replica %q rank %d: removed: %w", replica, rank, err)
	}
	return nil
}

// ClearKV applies an engine's AllBlocksCleared event: every entry of (replica, rank) is dropped.
func (r *Router) ClearKV(replica string, rank int) error {
	ix, err := r.indexOf(replica, rank)
	if err != nil {
		return err
	}
	ix.Clear(replica, rank)
	return nil
}

// Index returns the KV index of a model (nil if no replica of it was ever registered), for
// inspection and statistics.
func (r *Router) Index(model string) *index.Index {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.pools[model]; p != nil {
		return p.ix
	}
	return nil
}

func (r *Router) indexOf(replica string, rank int) (*index.Index, error) {
	if rank < 0 {
		return nil, fmt.Errorf("%w: replica %q: data parallel rank %d is negative", ErrInvalid, replica, rank)
	}
	rp := r.fleet.Load().byID[replica]
	if rp == nil {
		return nil, fmt.Errorf("%w: %q", ErrUnknownReplica, replica)
	}
	return rp.pool.ix, nil
}
