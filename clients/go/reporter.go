package switchyard

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// Reporter streams lifecycle events to the router in batches over
// StreamLifecycle. Report never blocks; a background goroutine sends. Every
// reported event ends up delivered (on a stream the server confirmed),
// dropped (buffer overflow, or still queued when Close gave up) or rejected
// (the server refused the stream as invalid), and ReporterStats counts each:
// Reported == Delivered + Dropped + Rejected + Pending at all times.
//
// Delivery is at least once: the events of a stream that breaks before the
// server confirms it are sent again, and the router counts repeats as stale.
type Reporter struct {
	rpc     v1.RouterServiceClient
	cfg     reporterConfig
	timeout time.Duration // bounds each Send and CloseAndRecv
	log     *slog.Logger

	mu       sync.Mutex
	pending  *ring
	inflight []item // sent on the open stream, not yet confirmed
	lastSeq  uint64
	closed   bool          // Report refuses new events
	stopping bool          // the loop exits once nothing is held
	flushers int           // Flush calls waiting: send and confirm at once
	settled  chan struct{} // closed and replaced whenever events settle
	stats    ReporterStats

	wake   chan struct{}
	ctx    context.Context // cancelled to stop the loop at once
	cancel context.CancelFunc
	done   chan struct{}
}

// ReporterStats counts what a Reporter did with its events.
type ReporterStats struct {
	// Reported is the number of events Report accepted.
	Reported int64
	// Delivered counts events on streams the server confirmed.
	Delivered int64
	// Dropped counts events discarded unsent: the oldest when the buffer
	// overflowed, and those still queued when Close gave up.
	Dropped int64
	// Rejected counts events on streams the server refused as invalid.
	Rejected int64
	// Resent counts events sent again after their stream broke.
	Resent int64
	// Pending is the number of events held now (queued or unconfirmed).
	Pending int64
	// Streams counts streams the server confirmed.
	Streams int64
	// Failures counts streams that could not be opened or broke.
	Failures int64
	// Applied, UnknownRequest, UnknownReplica and Stale total the server's
	// counts over the confirmed streams.
	Applied, UnknownRequest, UnknownReplica, Stale int64
}

// NewReporter starts a reporter on c. Close it before closing c.
func (c *Client) NewReporter(opts ...ReporterOption) (*Reporter, error) {
	cfg, err := newReporterConfig(opts)
	if err != nil {
		return nil, err
	}
	timeout := c.timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Reporter{
		rpc: c.router, cfg: cfg, timeout: timeout, log: c.log,
		pending: newRing(cfg.buffer),
		settled: make(chan struct{}),
		wake:    make(chan struct{}, 1),
		ctx:     ctx, cancel: cancel,
		done: make(chan struct{}),
	}
	go r.run()
	return r, nil
}

// Report queues ev for sending and returns at once. It fails with
// ErrInvalidEvent for an event the server would refuse and with ErrClosed
// after Close. An unset ev.Time is set to now. The reporter owns ev
// afterwards: do not modify it.
func (r *Reporter) Report(ev *v1.LifecycleEvent) error {
	if err := checkEvent(ev); err != nil {
		return err
	}
	now := time.Now()
	if ev.Time == nil {
		ev.Time = timestamppb.New(now)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return ErrClosed
	}
	r.lastSeq++
	r.stats.Reported++
	if r.pending.pushBack(item{ev: ev, seq: r.lastSeq, at: now}) {
		r.stats.Dropped++
		r.notifyLocked()
	}
	r.mu.Unlock()
	r.poke()
	return nil
}

// Flush sends everything reported before the call and waits until the
// server has confirmed it (or it was dropped or rejected), or ctx ends.
func (r *Reporter) Flush(ctx context.Context) error {
	r.mu.Lock()
	target := r.lastSeq
	r.flushers++
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.flushers--
		r.mu.Unlock()
	}()
	r.poke()
	for {
		r.mu.Lock()
		done, ch := r.settledLocked(target), r.settled
		r.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("switchyard: flush: %w", ctx.Err())
		}
	}
}

// Close stops accepting events, sends and confirms what is queued, and stops
// the reporter. If ctx ends first the rest is dropped (and counted) and the
// error says so. Calls after the first return ErrClosed.
func (r *Reporter) Close(ctx context.Context) error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		<-r.done
		return ErrClosed
	}
	r.closed, r.stopping = true, true
	r.mu.Unlock()
	r.poke()
	var err error
	select {
	case <-r.done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	r.cancel()
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	if lost := r.pending.len() + len(r.inflight); lost > 0 {
		if err == nil {
			err = ErrClosed
		}
		for r.pending.len() > 0 {
			r.pending.popFront()
		}
		r.inflight = nil
		r.stats.Dropped += int64(lost)
		r.notifyLocked()
		return fmt.Errorf("switchyard: reporter closed with %d events undelivered: %w", lost, err)
	}
	return nil
}

// Stats returns the reporter's counters.
func (r *Reporter) Stats() ReporterStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.stats
	s.Pending = int64(r.pending.len() + len(r.inflight))
	return s
}

// poke wakes the loop without blocking.
func (r *Reporter) poke() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// notifyLocked wakes Flush callers after events settled.
func (r *Reporter) notifyLocked() {
	close(r.settled)
	r.settled = make(chan struct{})
}

// settledLocked reports whether every event up to seq has settled: held
// events are in report order (unconfirmed ones first), so it is enough that
// the oldest held one is newer.
func (r *Reporter) settledLocked(seq uint64) bool {
	if len(r.inflight) > 0 {
		return r.inflight[0].seq > seq
	}
	it, ok := r.pending.front()
	return !ok || it.seq > seq
}
