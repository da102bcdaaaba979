package server

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard-llm/switchyard/scoring"
)

// AuditLog keeps the most recent decisions in memory, by request id, and
// fans new ones out to watchers. Recording never blocks on a watcher: a
// watcher whose buffer is full skips decisions, and the skips are counted.
type AuditLog struct {
	mu        sync.RWMutex
	ring      []*scoring.Decision
	next      int
	byRequest map[string]*scoring.Decision

	wmu      sync.RWMutex
	watchers map[*auditWatcher]struct{}
	skipped  atomic.Int64
}

// DecisionFilter selects decisions; empty fields and zero times match all.
type DecisionFilter struct {
	Model, ReplicaID, Policy string
	Since, Until             time.Time
}

func (f DecisionFilter) match(d *scoring.Decision) bool {
	return (f.Model == "" || f.Model == d.Model) &&
		(f.ReplicaID == "" || f.ReplicaID == d.ReplicaID) &&
		(f.Policy == "" || f.Policy == d.Policy) &&
		(f.Since.IsZero() || !d.Time.Before(f.Since)) &&
		(f.Until.IsZero() || d.Time.Before(f.Until))
}

// watcherBuffer is how many decisions a watcher may fall behind before it
// starts skipping.
const watcherBuffer = 256

// NewAuditLog returns a log keeping the last capacity decisions
// (DefaultAuditCapacity when capacity <= 0).
func NewAuditLog(capacity int) *AuditLog {
	if capacity <= 0 {
		capacity = DefaultAuditCapacity
	}
	return &AuditLog{
		ring:      make([]*scoring.Decision, capacity),
		byRequest: make(map[string]*scoring.Decision, capacity),
		watchers:  map[*auditWatcher]struct{}{},
	}
}

// Record stores a decision and offers it to the watchers. Recording the same
// decision again (an idempotent retry) is a no-op.
func (a *AuditLog) Record(d *scoring.Decision) {
	a.mu.Lock()
	if prev, ok := a.byRequest[d.RequestID]; ok && prev.DecisionID == d.DecisionID {
		a.mu.Unlock()
		return
	}
	if old := a.ring[a.next]; old != nil && a.byRequest[old.RequestID] == old {
		delete(a.byRequest, old.RequestID)
	}
	a.ring[a.next] = d
	a.next = (a.next + 1) % len(a.ring)
	a.byRequest[d.RequestID] = d
	a.mu.Unlock()

	a.wmu.RLock()
	for w := range a.watchers {
		w.offer(d, &a.skipped)
	}
	a.wmu.RUnlock()
}

// Get returns the latest decision for a request id.
func (a *AuditLog) Get(requestID string) (*scoring.Decision, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	d, ok := a.byRequest[requestID]
	return d, ok
}

// List returns up to limit decisions matching f, newest first.
func (a *AuditLog) List(f DecisionFilter, limit int) []*scoring.Decision {
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []*scoring.Decision
	for i := 1; i <= len(a.ring) && len(out) < limit; i++ {
		d := a.ring[(a.next-i+len(a.ring))%len(a.ring)]
		if d == nil {
			break
		}
		if f.match(d) {
			out = append(out, d)
		}
	}
	return out
}

// Skipped is the total number of decisions watchers skipped because they
// fell behind.
func (a *AuditLog) Skipped() int64 { return a.skipped.Load() }

// Watchers is the number of current subscribers to new decisions.
func (a *AuditLog) Watchers() int {
	a.wmu.RLock()
	defer a.wmu.RUnlock()
	return len(a.watchers)
}

// auditWatcher is one subscriber to new decisions.
type auditWatcher struct {
	filter  DecisionFilter
	ch      chan *scoring.Decision
	skipped atomic.Int64 // skips not yet reported to the watcher
}

func (w *auditWatcher) offer(d *scoring.Decision, total *atomic.Int64) {
	if !w.filter.match(d) {
		return
	}
	select {
	case w.ch <- d:
	default:
		w.skipped.Add(1)
		total.Add(1)
	}
}

// watch registers a watcher; cancel unregisters it.
func (a *AuditLog) watch(f DecisionFilter) (w *auditWatcher, cancel func()) {
	return a.watchBuffered(f, watcherBuffer)
}

// watchBuffered registers a watcher that may fall buffer decisions behind.
func (a *AuditLog) watchBuffered(f DecisionFilter, buffer int) (w *auditWatcher, cancel func()) {
	w = &auditWatcher{filter: f, ch: make(chan *scoring.Decision, buffer)}
	a.wmu.Lock()
	a.watchers[w] = struct{}{}
	a.wmu.Unlock()
	return w, func() {
		a.wmu.Lock()
		delete(a.watchers, w)
		a.wmu.Unlock()
	}
}
