package switchyard

import (
	"context"
	"errors"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// lifecycleStream is the reporter's open StreamLifecycle call.
type lifecycleStream struct {
	s        v1.RouterService_StreamLifecycleClient
	cancel   context.CancelFunc
	opened   time.Time
	lastSend time.Time
	sent     int
}

// action is what the loop does next.
type action int

const (
	actSend    action = iota // send a batch (opening a stream if needed)
	actConfirm               // close the stream and take the server's counts
	actStop                  // exit
)

// run is the reporter's goroutine: it alone touches the stream.
func (r *Reporter) run() {
	defer close(r.done)
	var st *lifecycleStream
	fails := 0
	for {
		var err error
		switch r.next(st) {
		case actStop:
			if st != nil {
				st.cancel()
			}
			return
		case actSend:
			if st == nil {
				if st, err = r.open(); err != nil {
					break
				}
			}
			if err = r.send(st); err == nil && r.confirmDue(st) {
				err = r.confirm(st)
				st = nil
			}
		case actConfirm:
			err = r.confirm(st)
			st = nil
		}
		if err == nil {
			fails = 0
			continue
		}
		fails++
		r.failed(st, err, fails)
		st = nil
	}
}

// next waits until there is something to do.
func (r *Reporter) next(st *lifecycleStream) action {
	for {
		if r.ctx.Err() != nil {
			return actStop
		}
		r.mu.Lock()
		n := r.pending.len()
		oldest, _ := r.pending.front()
		urgent, stopping := r.flushers > 0 || r.stopping, r.stopping
		r.mu.Unlock()
		var linger, idle <-chan time.Time
		switch {
		case n >= r.cfg.batch || (n > 0 && urgent):
			return actSend
		case n > 0:
			wait := time.Until(oldest.at.Add(r.cfg.flush))
			if wait <= 0 {
				return actSend
			}
			linger = time.After(wait)
		case st != nil && (urgent || r.confirmDue(st)):
			return actConfirm
		case st != nil:
			idle = time.After(time.Until(st.lastSend.Add(IdleClose)))
		case stopping:
			return actStop
		}
		select {
		case <-r.wake:
		case <-linger:
			return actSend
		case <-idle:
			return actConfirm
		case <-r.ctx.Done():
			return actStop
		}
	}
}

func (r *Reporter) confirmDue(st *lifecycleStream) bool {
	return st.sent >= r.cfg.confirmEvents || time.Since(st.opened) >= r.cfg.confirmAge
}

func (r *Reporter) open() (*lifecycleStream, error) {
	ctx, cancel := context.WithCancel(r.ctx)
	s, err := r.rpc.StreamLifecycle(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	now := time.Now()
	return &lifecycleStream{s: s, cancel: cancel, opened: now, lastSend: now}, nil
}

// send moves one batch from the queue to the stream.
func (r *Reporter) send(st *lifecycleStream) error {
	r.mu.Lock()
	k := min(r.pending.len(), r.cfg.batch)
	batch := make([]*v1.LifecycleEvent, k)
	for i := range batch {
		it := r.pending.popFront()
		r.inflight = append(r.inflight, it)
		batch[i] = it.ev
	}
	r.mu.Unlock()
	err := r.guard(st, func() error { return st.s.Send(&v1.StreamLifecycleRequest{Events: batch}) })
	if err != nil {
		return err
	}
	st.sent += k
	st.lastSend = time.Now()
	return nil
}

// confirm closes the stream; on success its events are delivered.
func (r *Reporter) confirm(st *lifecycleStream) error {
	var resp *v1.StreamLifecycleResponse
	err := r.guard(st, func() (err error) {
		resp, err = st.s.CloseAndRecv()
		return err
	})
	st.cancel()
	if err != nil {
		return err
	}
	c := resp.GetCounts()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stats.Delivered += int64(len(r.inflight))
	r.stats.Streams++
	r.stats.Applied += c.GetApplied()
	r.stats.UnknownRequest += c.GetUnknownRequest()
	r.stats.UnknownReplica += c.GetUnknownReplica()
	r.stats.Stale += c.GetStale()
	r.inflight = nil
	r.notifyLocked()
	return nil
}

// guard runs one stream operation, cancelling the stream if it takes longer
// than the call timeout (a server that stopped reading must not wedge the
// reporter).
func (r *Reporter) guard(st *lifecycleStream, op func() error) error {
	return guarded(r.ctx, r.timeout, st.cancel, op)
}

// failed handles a stream that could not be opened (st nil) or broke: its
// unconfirmed events go back to the front of the queue, or are rejected if
// the server called them invalid; then the loop backs off.
func (r *Reporter) failed(st *lifecycleStream, err error, fails int) {
	if st != nil {
		if errors.Is(err, io.EOF) { // Send saw the stream end; the status says why
			_ = r.guard(st, func() error { _, err = st.s.CloseAndRecv(); return nil })
			if err == nil {
				err = errors.New("stream ended before the client closed it")
			}
		}
		st.cancel()
	}
	if r.ctx.Err() != nil {
		return // stopping: Close counts what is left
	}
	code := status.Code(err)
	r.mu.Lock()
	n := len(r.inflight)
	r.stats.Failures++
	if code == codes.InvalidArgument {
		r.stats.Rejected += int64(n)
	} else {
		for i := n - 1; i >= 0; i-- {
			if !r.pending.pushFront(r.inflight[i]) {
				r.stats.Dropped += int64(i + 1) // the oldest ones: no room left
				break
			}
			r.stats.Resent++
		}
	}
	r.inflight = nil
	r.notifyLocked()
	r.mu.Unlock()
	if code == codes.InvalidArgument {
		r.log.Error("switchyard: lifecycle stream rejected; its events are dropped", "events", n, "err", err)
		return
	}
	delay := backoffDelay(r.cfg.backoffMin, r.cfg.backoffMax, fails)
	r.log.Warn("switchyard: lifecycle stream failed; retrying", "err", err, "requeued", n, "retry_in", delay)
	select {
	case <-time.After(delay):
	case <-r.ctx.Done():
	}
}
