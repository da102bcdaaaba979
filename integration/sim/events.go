package sim

// Event kinds.
const (
	evArrival uint8 = iota + 1 // a request is issued (idx = workload request)
	evStep                     // an engine's step ends (idx = engine)
)

// event is a scheduled simulation event. Events at the same time run in the order they were
// scheduled (seq), which makes the simulation deterministic.
type event struct {
	at   int64 // ns
	seq  uint64
	kind uint8
	idx  int32
}

// eventQueue is a binary min-heap of events by (at, seq).
type eventQueue struct {
	h   []event
	seq uint64
}

func (q *eventQueue) less(i, j int) bool {
	a, b := &q.h[i], &q.h[j]
	return a.at < b.at || (a.at == b.at && a.seq < b.seq)
}

func (q *eventQueue) push(at int64, kind uint8, idx int) {
	q.h = append(q.h, event{at: at, seq: q.seq, kind: kind, idx: int32(idx)})
	q.seq++
	for i := len(q.h) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

func (q *eventQueue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && q.less(l, m) {
			m = l
		}
		if r < n && q.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}

func (q *eventQueue) len() int { return len(q.h) }
