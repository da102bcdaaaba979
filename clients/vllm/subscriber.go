package vllm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Subscriber follows the KV-event streams of many vLLM engines and feeds a
// Sink. Every (replica, rank) stream runs in its own goroutine, so a slow or
// dead engine never delays the others.
type Subscriber struct {
	sink Sink
	opts options
	c    counters

	mu      sync.Mutex
	runCtx  context.Context // set by Run
	closed  bool
	entries map[string]*entry
}

// entry is one subscribed Endpoint and its streams (one per rank).
type entry struct {
	ep      Endpoint
	streams []*stream
	cancel  context.CancelFunc // nil until started
	done    chan struct{}      // closed when every stream has returned
}

// New returns a Subscriber feeding sink. Endpoints are added with Add, before
// or after Run.
func New(sink Sink, opts ...Option) (*Subscriber, error) {
	if sink == nil {
		return nil, fmt.Errorf("%w: nil sink", ErrInvalidConfig)
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	return &Subscriber{sink: sink, opts: o, entries: make(map[string]*entry)}, nil
}

// Add subscribes to ep's engine; if Run is active the streams start at once,
// otherwise when Run starts. It fails for an invalid endpoint, a replica
// already subscribed, or after Run returned.
func (s *Subscriber) Add(ep Endpoint) error {
	ep, err := ep.normalize()
	if err != nil {
		return err
	}
	e := &entry{ep: ep, done: make(chan struct{})}
	for r := range ep.Ranks {
		st, err := newStream(s, ep, r)
		if err != nil {
			return err
		}
		e.streams = append(e.streams, st)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if _, dup := s.entries[ep.Replica]; dup {
		return fmt.Errorf("%w: %q", ErrDuplicateReplica, ep.Replica)
	}
	s.entries[ep.Replica] = e
	if s.runCtx != nil {
		s.start(e)
	}
	return nil
}

// start launches e's streams under Run's context; s.mu must be held.
func (s *Subscriber) start(e *entry) {
	ctx, cancel := context.WithCancel(s.runCtx)
	e.cancel = cancel
	var wg sync.WaitGroup
	for _, st := range e.streams {
		wg.Go(func() { st.run(ctx) })
	}
	go func() {
		wg.Wait()
		close(e.done)
	}()
}

// Remove stops following replica, waits for its streams to stop, and resets
// the ranks it had fed to the Sink, since their entries are no longer kept
// current. It reports whether the replica was subscribed.
func (s *Subscriber) Remove(ctx context.Context, replica string) bool {
	s.mu.Lock()
	e, ok := s.entries[replica]
	delete(s.entries, replica)
	s.mu.Unlock()
	if !ok {
		return false
	}
	if e.cancel != nil {
		e.cancel()
		select {
		case <-e.done:
		case <-ctx.Done():
			return true
		}
	}
	for _, st := range e.streams {
		if st.dirty {
			st.reset(ctx, ResetRemoved)
		}
	}
	return true
}

// Run starts every stream and blocks until ctx is done, then stops them and
// waits for them to return. It returns nil after a cancellation; a
// Subscriber runs once.
func (s *Subscriber) Run(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.runCtx != nil:
		s.mu.Unlock()
		return ErrRunning
	}
	s.runCtx = ctx
	for _, e := range s.entries {
		s.start(e)
	}
	s.mu.Unlock()

	<-ctx.Done()

	s.mu.Lock()
	s.closed = true
	running := make([]*entry, 0, len(s.entries))
	for _, e := range s.entries {
		running = append(running, e)
	}
	s.mu.Unlock()
	for _, e := range running {
		<-e.done
	}
	return nil
}

// Replicas returns the subscribed endpoints, normalized.
func (s *Subscriber) Replicas() []Endpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Endpoint, 0, len(s.entries))
	for _, e := range s.entries {
		out = append(out, e.ep)
	}
	slices.SortFunc(out, func(a, b Endpoint) int { return strings.Compare(a.Replica, b.Replica) })
	return out
}

// Stats returns a snapshot of the counters.
func (s *Subscriber) Stats() Counters {
	return s.c.snapshot()
}
