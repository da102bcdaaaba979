package scoring

import "sync/atomic"

// Counters are the Router's running totals, for metrics.
type Counters struct {
	Picks            uint64 // decisions that reserved a request
	DryRuns          uint64 // decisions made with DryRun
	Replays          uint64 // picks answered from a live request's earlier decision
	NoReplica        uint64 // picks that found no eligible candidate
	Expired          uint64 // requests freed by expiry
	UnknownLifecycle uint64 // lifecycle events for unknown (or already finished) request ids
	UnknownReplica   uint64 // lifecycle events naming an unregistered replica (dropped)
	StaleLifecycle   uint64 // duplicate or out-of-order lifecycle events (harmless, no effect)
	InvalidLifecycle uint64 // lifecycle events with no request id or an unknown kind (dropped)
	Moved            uint64 // requests moved to another replica by a lifecycle event
	Deregistered     uint64 // live requests freed because their replica was deregistered
	SessionsDropped  uint64 // per-session output estimates dropped by the MaxSessions bound
	Clamped          uint64 // load terms that would have gone negative (a bug if ever non-zero)
}

type counters struct {
	picks, dryRuns, replays, noReplica, expired                           atomic.Uint64
	unknownLifecycle, unknownReplica, stale, invalid, moved, deregistered atomic.Uint64
}

// Counters returns a snapshot of the running totals.
func (r *Router) Counters() Counters {
	c := Counters{
		Picks:            r.ctr.picks.Load(),
		DryRuns:          r.ctr.dryRuns.Load(),
		Replays:          r.ctr.replays.Load(),
		NoReplica:        r.ctr.noReplica.Load(),
		Expired:          r.ctr.expired.Load(),
		UnknownLifecycle: r.ctr.unknownLifecycle.Load(),
		UnknownReplica:   r.ctr.unknownReplica.Load(),
		StaleLifecycle:   r.ctr.stale.Load(),
		InvalidLifecycle: r.ctr.invalid.Load(),
		Moved:            r.ctr.moved.Load(),
		Deregistered:     r.ctr.deregistered.Load(),
	}
	r.mu.Lock()
	pools := make([]*modelPool, 0, len(r.pools))
	for _, p := range r.pools {
		pools = append(pools, p)
	}
	r.mu.Unlock()
	v := r.fleet.Load()
	for _, p := range pools {
		p.mu.Lock()
		c.SessionsDropped += p.est.dropped
		c.Clamped += p.clampedGone
		for _, rp := range v.models[p.name] {
			c.Clamped += rp.load.clamped
		}
		p.mu.Unlock()
	}
	return c
}
