package bench

import (
	"context"
	"sync"
	"time"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// lifecycle plays a data plane's part for every successful pick: admitted at once, first token
// after ttft, progress halfway through decode, done after decode, all reported through one
// batching Reporter. Each event kind has a constant delay, so pending events of a kind are due
// in the order they were queued and three FIFOs replace a timer per request.
type lifecycle struct {
	rep          *switchyard.Reporter
	ttft, decode time.Duration
	output       int64

	mu      sync.Mutex
	pending [3]fifo // first token, progress, done
	dropped int64   // events the reporter refused (counted, never fatal)
}

type pendingEvent struct {
	due         time.Time
	id, replica string
}

// fifo is a queue of pending events: popped from head, compacted when half is dead.
type fifo struct {
	items []pendingEvent
	head  int
}

func (q *fifo) push(e pendingEvent) { q.items = append(q.items, e) }

// popDue appends to dst the events due by now (all when now is zero) and removes them.
func (q *fifo) popDue(dst []pendingEvent, now time.Time) []pendingEvent {
	for q.head < len(q.items) && (now.IsZero() || !q.items[q.head].due.After(now)) {
		dst = append(dst, q.items[q.head])
		q.items[q.head] = pendingEvent{}
		q.head++
	}
	if q.head > len(q.items)/2 {
		q.items = q.items[:copy(q.items, q.items[q.head:])]
		q.head = 0
	}
	return dst
}

const (
	evFirst = iota
	evProgress
	evDone
)

func newLifecycle(rep *switchyard.Reporter, c *Config) *lifecycle {
	return &lifecycle{rep: rep, ttft: c.TTFT, decode: c.Decode, output: int64(c.OutputTokens)}
}

// started reports the admission of a picked request and schedules the rest of its events.
func (l *lifecycle) started(now time.Time, id, replica string, prompt, cached int64) {
	l.report(switchyard.Admitted(id, replica, prompt, cached))
	l.mu.Lock()
	l.pending[evFirst].push(pendingEvent{now.Add(l.ttft), id, replica})
	l.pending[evProgress].push(pendingEvent{now.Add(l.ttft + l.decode/2), id, replica})
	l.pending[evDone].push(pendingEvent{now.Add(l.ttft + l.decode), id, replica})
	l.mu.Unlock()
}

func (l *lifecycle) report(ev *v1.LifecycleEvent) {
	if l.rep.Report(ev) != nil {
		l.mu.Lock()
		l.dropped++
		l.mu.Unlock()
	}
}

// run sends the due events every millisecond until ctx ends, then sends every pending event
// at once (the run is over; the requests complete early rather than leak load).
func (l *lifecycle) run(ctx context.Context) {
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			l.flushDue(time.Time{})
			return
		case now := <-tick.C:
			l.flushDue(now)
		}
	}
}

// flushDue reports the events due by now (every pending one when now is zero).
func (l *lifecycle) flushDue(now time.Time) {
	var due [3][]pendingEvent
	l.mu.Lock()
	for k := range l.pending {
		due[k] = l.pending[k].popDue(nil, now)
	}
	l.mu.Unlock()
	for _, p := range due[evFirst] {
		l.report(switchyard.FirstToken(p.id, p.replica))
	}
	for _, p := range due[evProgress] {
		l.report(switchyard.Progress(p.id, p.replica, l.output/2))
	}
	for _, p := range due[evDone] {
		l.report(switchyard.Done(p.id, p.replica, l.output, v1.CompletionStatus_COMPLETION_STATUS_OK))
	}
}

// refused is the number of events the reporter refused.
func (l *lifecycle) refused() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.dropped
}
