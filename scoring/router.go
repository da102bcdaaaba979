package scoring

import (
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Router is switchyard's routing brain for every model: fleet, load tracker, KV indexes and
// policies. It is safe for concurrent use; picks of one model serialise only on that model's
// select-and-reserve step.
type Router struct {
	set      settings
	policies map[string]Policy
	names    []string

	mu    sync.Mutex // serialises fleet changes
	pools map[string]*modelPool
	fleet atomic.Pointer[fleetView]

	reqs    requestTable
	scratch sync.Pool
	ctr     counters

	idPrefix string
	seq      atomic.Uint64
}

// NewRouter validates cfg, builds every policy with its server-level parameters and returns an
// empty Router. Unknown policy names are ErrUnknownPolicy; bad parameters are ErrInvalid.
func NewRouter(cfg Config) (*Router, error) {
	s, err := resolveConfig(cfg)
	if err != nil {
		return nil, err
	}
	pols, err := buildPolicies(cfg.Extra, cfg.PolicyParams)
	if err != nil {
		return nil, err
	}
	r := &Router{
		set:      s,
		policies: pols,
		pools:    make(map[string]*modelPool),
		idPrefix: strconv.FormatUint(s.seed^uint64(time.Now().UnixNano()), 36),
	}
	for name := range pols {
		r.names = append(r.names, name)
	}
	slices.Sort(r.names)
	if _, ok := pols[s.defaultPolicy]; !ok {
		return nil, fmt.Errorf("%w: default policy %q (have: %v)", ErrUnknownPolicy, s.defaultPolicy, r.names)
	}
	for m, p := range s.modelPolicies {
		if _, ok := pols[p]; !ok {
			return nil, fmt.Errorf("%w: policy %q for model %q (have: %v)", ErrUnknownPolicy, p, m, r.names)
		}
	}
	r.fleet.Store(&fleetView{byID: map[string]*replica{}, models: map[string][]*replica{}})
	r.scratch.New = func() any { return new(pickScratch) }
	return r, nil
}

// Policies returns the configured policy names, sorted.
func (r *Router) Policies() []string { return slices.Clone(r.names) }

// Policy returns the configured policy of that name (with server-level parameters), so that
// callers can list its parameters.
func (r *Router) Policy(name string) (Policy, error) {
	p, ok := r.policies[name]
	if !ok {
		return nil, fmt.Errorf("%w: %q (have: %v)", ErrUnknownPolicy, name, r.names)
	}
	return p, nil
}

// Close releases the Router. Expiry is lazy (done by the operations that touch a model), so
// there is no goroutine to stop; Close exists so callers need not know that.
func (r *Router) Close() {}

func (r *Router) now() time.Time { return r.set.now() }

// nextDecisionID returns a process-unique decision id.
func (r *Router) nextDecisionID() string {
	return r.idPrefix + "-" + strconv.FormatUint(r.seq.Add(1), 36)
}

// sweep frees the model's requests that have seen no event for the expiry period.
// Called with p.mu held; O(expired) since the list is ordered by last touch.
func (r *Router) sweep(p *modelPool, now time.Time) {
	for q := p.reqs.head; q != nil && now.Sub(q.touched) >= r.set.expiry; q = p.reqs.head {
		r.free(q)
		r.ctr.expired.Add(1)
	}
}

// free removes a live request from its replica, the model's list and the table.
// Called with the model's lock held.
func (r *Router) free(q *request) {
	if !q.live {
		return
	}
	q.detach(r.set.blockSize)
	q.live = false
	q.pool.reqs.unlink(q)
	r.reqs.remove(q)
}

// Sweep frees every request, of every model, that has seen no event for the expiry period, and
// returns how many. Expiry also happens lazily whenever a model is picked from or receives
// events; Sweep is for callers that want it on a timer.
func (r *Router) Sweep() int {
	before := r.ctr.expired.Load()
	r.mu.Lock()
	pools := make([]*modelPool, 0, len(r.pools))
	for _, p := range r.pools {
		pools = append(pools, p)
	}
	r.mu.Unlock()
	now := r.now()
	for _, p := range pools {
		p.mu.Lock()
		r.sweep(p, now)
		p.mu.Unlock()
	}
	return int(r.ctr.expired.Load() - before)
}
