package switchyard

import (
	"time"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// item is one queued lifecycle event with its report order (which Flush
// waits on) and the time it was queued (which the batching linger uses).
type item struct {
	ev  *v1.LifecycleEvent
	seq uint64
	at  time.Time
}

// ring is a bounded FIFO of items.
type ring struct {
	buf  []item
	head int
	n    int
}

func newRing(capacity int) *ring { return &ring{buf: make([]item, capacity)} }

func (r *ring) len() int   { return r.n }
func (r *ring) full() bool { return r.n == len(r.buf) }

// front returns the oldest item; ok is false when the ring is empty.
func (r *ring) front() (it item, ok bool) {
	if r.n == 0 {
		return item{}, false
	}
	return r.buf[r.head], true
}

// popFront removes and returns the oldest item; the ring must not be empty.
func (r *ring) popFront() item {
	it := r.buf[r.head]
	r.buf[r.head] = item{}
	r.head = (r.head + 1) % len(r.buf)
	r.n--
	return it
}

// pushBack appends it, first dropping the oldest item when the ring is full;
// it reports whether one was dropped.
func (r *ring) pushBack(it item) (dropped bool) {
	if r.full() {
		r.popFront()
		dropped = true
	}
	r.buf[(r.head+r.n)%len(r.buf)] = it
	r.n++
	return dropped
}

// pushFront puts it before the oldest item. It reports false, storing
// nothing, when the ring is full: it would be the oldest, the one to drop.
func (r *ring) pushFront(it item) bool {
	if r.full() {
		return false
	}
	r.head = (r.head - 1 + len(r.buf)) % len(r.buf)
	r.buf[r.head] = it
	r.n++
	return true
}
