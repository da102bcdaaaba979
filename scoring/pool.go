package scoring

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-llm/switchyard/index"
)

// replica is a registered replica. id, model and pool are immutable; state is atomic so picks
// can filter candidates without a lock; the rest is guarded by the model's lock.
type replica struct {
	id, model string
	pool      *modelPool
	state     atomic.Uint32 // ReplicaState

	info Replica
	gone bool
	load loadState
}

func (rp *replica) ready() bool { return ReplicaState(rp.state.Load()) == StateReady }

// modelPool is one model's index, requests and policy state, behind the model's lock: every
// pick of the model selects and reserves under it, so each sees the previous ones' bookings.
type modelPool struct {
	name string
	ix   *index.Index

	mu        sync.Mutex
	rnd       *rand.Rand
	cursor    uint64
	members   []string // ids of registered replicas, sorted
	ringCache *HashRing
	reqs      requestList
	est       estimator
	// clampedGone keeps the Clamped count of deregistered replicas.
	clampedGone uint64
}

func newModelPool(name string, s *settings) *modelPool {
	var h uint64 = 14695981039346656037
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	p := &modelPool{
		name: name,
		ix:   index.New(s.indexTemplate),
		rnd:  rand.New(rand.NewPCG(s.seed, h)),
	}
	p.est.max = s.maxSessions
	return p
}

// addMember and removeMember keep the ring's membership; the ring is rebuilt on next use.
func (p *modelPool) addMember(id string) {
	i, found := slices.BinarySearch(p.members, id)
	if !found {
		p.members = slices.Insert(p.members, i, id)
		p.ringCache = nil
	}
}

func (p *modelPool) removeMember(id string) {
	if i, found := slices.BinarySearch(p.members, id); found {
		p.members = slices.Delete(p.members, i, i+1)
		p.ringCache = nil
	}
}

func (p *modelPool) ring(virtualNodes int) *HashRing {
	if p.ringCache == nil || p.ringCache.virtualNodes != virtualNodes {
		p.ringCache = NewHashRing(p.members, virtualNodes)
	}
	return p.ringCache
}

// touch records an event for q: it moves to the back of the expiry order.
func (p *modelPool) touch(q *request, now time.Time) {
	q.touched = now
	p.reqs.moveToBack(q)
}

// fleetView is an immutable snapshot of the registry, swapped atomically on membership
// changes so that picks resolve candidates without a lock.
type fleetView struct {
	byID   map[string]*replica
	models map[string][]*replica // registered replicas per model, sorted by id
}
