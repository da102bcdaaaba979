package scoring

import (
	"sync"
	"time"
)

// reqState is where a tracked request is in its life.
type reqState uint8

const (
	reqReserved   reqState = iota + 1 // picked, not yet admitted by the engine
	reqPrefilling                     // admitted, first token not yet out
	reqDecoding                       // first token out, generating
)

// request is a live (reserved, not done or expired) request. The identity fields and decision
// are immutable; the rest is guarded by the model's lock.
type request struct {
	id, session string
	pool        *modelPool
	decision    *Decision

	rep       *replica
	state     reqState
	live      bool
	prompt    int // prompt tokens
	cached    int // cached prompt tokens (predicted, then engine-reported)
	generated int
	expected  int // expected output tokens (hint or estimate; 0 = unknown)
	cps       []checkpoint
	hashed    int64 // prompt blocks covered by cps
	touched   time.Time

	prev, next *request // the model's list, least recently touched first
}

// prefillTokens is the request's contribution to its replica's prefill load.
func (q *request) prefillTokens() int64 {
	if q.state >= reqDecoding {
		return 0
	}
	return int64(max(0, q.prompt-q.cached))
}

// privateBlocks is the request's prompt blocks not covered by checkpoints.
func (q *request) privateBlocks(blockSize int) int64 {
	return max(0, int64((q.prompt+blockSize-1)/blockSize)-q.hashed)
}

func (q *request) outputBlocks(blockSize int) int64 {
	return int64((q.generated + blockSize - 1) / blockSize)
}

func (q *request) remainingTokens() int64 {
	return int64(max(0, q.expected-q.generated))
}

// addScalars adds (sign=+1) or removes (sign=-1) the request's scalar load terms on its replica.
func (q *request) addScalars(sign int64, blockSize int) {
	l := &q.rep.load
	d := [...]int64{1, q.prefillTokens(), q.privateBlocks(blockSize), q.outputBlocks(blockSize), q.remainingTokens()}
	terms := [...]*int64{nil, &l.prefill, &l.private, &l.output, &l.remaining}
	if sign > 0 {
		l.active++
		for i := 1; i < len(d); i++ {
			*terms[i] += d[i]
		}
		return
	}
	if l.active == 0 {
		l.clamped++
	} else {
		l.active--
	}
	for i := 1; i < len(d); i++ {
		*terms[i] = l.sub(*terms[i], d[i])
	}
}

// attach books the whole request on its replica; detach removes it.
func (q *request) attach(blockSize int) {
	q.rep.load.hold(q.cps)
	q.addScalars(+1, blockSize)
}

func (q *request) detach(blockSize int) {
	q.rep.load.release(q.cps)
	q.addScalars(-1, blockSize)
}

// requestTable maps live request ids to requests across all models, sharded to keep the
// idempotency check off any global lock.
type requestTable struct {
	shards [64]requestShard
}

type requestShard struct {
	mu sync.Mutex
	m  map[string]*request
	_  [40]byte // keep shards on separate cache lines
}

func (t *requestTable) shard(id string) *requestShard {
	h := uint32(2166136261)
	for i := 0; i < len(id); i++ {
		h = (h ^ uint32(id[i])) * 16777619
	}
	return &t.shards[h%uint32(len(t.shards))]
}

func (t *requestTable) get(id string) *request {
	s := t.shard(id)
	s.mu.Lock()
	q := s.m[id]
	s.mu.Unlock()
	return q
}

// putIfAbsent stores q unless id is taken, returning the holder in that case.
func (t *requestTable) putIfAbsent(q *request) *request {
	s := t.shard(q.id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.m[q.id]; old != nil {
		return old
	}
	if s.m == nil {
		s.m = make(map[string]*request)
	}
	s.m[q.id] = q
	return nil
}

// remove deletes id if it still maps to q.
func (t *requestTable) remove(q *request) {
	s := t.shard(q.id)
	s.mu.Lock()
	if s.m[q.id] == q {
		delete(s.m, q.id)
	}
	s.mu.Unlock()
}

// requestList is a model's live requests ordered by last touch, oldest first, so expiry only
// looks at the head.
type requestList struct {
	head, tail *request
	n          int
}

func (l *requestList) pushBack(q *request) {
	q.prev, q.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = q
	} else {
		l.head = q
	}
	l.tail = q
	l.n++
}

func (l *requestList) unlink(q *request) {
	if q.prev != nil {
		q.prev.next = q.next
	} else {
		l.head = q.next
	}
	if q.next != nil {
		q.next.prev = q.prev
	} else {
		l.tail = q.prev
	}
	q.prev, q.next = nil, nil
	l.n--
}

func (l *requestList) moveToBack(q *request) {
	if l.tail == q {
		return
	}
	l.unlink(q)
	l.pushBack(q)
}
