package bench

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// timerSlack is how late the dispatcher may release a fixed-rate pick before the delay counts
// against the latency: Go's timers wake about a millisecond late on Linux, so picks due within
// a millisecond of each other are released together. A pick released later than this (every
// caller was busy: the server did not keep up) counts from its schedule and is counted late.
const timerSlack = 2 * time.Millisecond

// driver issues the picks and records their outcome. A pick is measured when its due time
// (scheduled time in fixed mode, send time in closed mode) falls in the window [from, to).
type driver struct {
	cfg     *Config
	p       picker
	prompts *Prompts
	lc      *lifecycle // nil = no lifecycle
	prefix  string     // request id prefix, unique per run

	from, to time.Time       // measured window, set before the load starts
	calls    context.Context // for the calls themselves: ends only when the run is aborted

	lat, svc Histogram                 // measured: from due time / from send, to the answer
	win      atomic.Pointer[Histogram] // every pick since the last progress line
	issued   atomic.Int64              // every pick issued
	answered atomic.Int64              // every pick answered
	ok, sent atomic.Int64              // measured
	late     atomic.Int64              // measured fixed-rate picks sent late
	cached   atomic.Int64              // measured: cached tokens the router predicted
	tokens   atomic.Int64              // measured: prompt tokens

	mu   sync.Mutex
	errs map[string]int64 // measured errors by kind
	all  int64            // errors, measured or not
}

func newDriver(cfg *Config, p picker, prompts *Prompts, lc *lifecycle, prefix string) *driver {
	d := &driver{cfg: cfg, p: p, prompts: prompts, lc: lc, prefix: prefix, errs: map[string]int64{}}
	d.win.Store(new(Histogram))
	return d
}

func (d *driver) measured(due time.Time) bool { return !due.Before(d.from) && due.Before(d.to) }

// one sends pick n, due at due (counted for the window) and released at start (from which
// its latency counts).
func (d *driver) one(n int64, due, start time.Time) {
	req := &v1.PickReplicaRequest{
		RequestId: d.prefix + strconv.FormatInt(n, 10),
		Model:     d.cfg.Model,
		Policy:    d.cfg.Policy,
		DryRun:    d.cfg.DryRun,
	}
	cctx, cancel := context.WithTimeout(d.calls, d.cfg.Timeout)
	t0 := time.Now()
	resp, err := d.p.pick(cctx, req, int(n))
	t1 := time.Now()
	cancel()
	meas := d.measured(due)
	late := start.Equal(due) && t0.Sub(due) > timerSlack
	if err != nil {
		if d.calls.Err() != nil {
			return // the run was aborted under this call
		}
		d.mu.Lock()
		d.all++
		if meas {
			d.errs[d.p.kind(err)]++
		}
		d.mu.Unlock()
		return
	}
	d.answered.Add(1)
	if d.lc != nil && !req.DryRun {
		d.lc.started(t1, req.RequestId, resp.GetReplicaId(), resp.GetPromptTokens(), resp.GetCachedTokens())
	}
	d.win.Load().Record(t1.Sub(start))
	if !meas {
		return
	}
	d.lat.Record(t1.Sub(start))
	d.svc.Record(t1.Sub(t0))
	d.ok.Add(1)
	d.cached.Add(resp.GetCachedTokens())
	d.tokens.Add(resp.GetPromptTokens())
	if late {
		d.late.Add(1)
	}
}

// count notes a pick issued at due.
func (d *driver) count(due time.Time) int64 {
	if d.measured(due) {
		d.sent.Add(1)
	}
	return d.issued.Add(1) - 1
}

// fixed issues picks at cfg.Rate until ctx ends (calls in flight then finish): a dispatcher computes each pick's due time
// from its number (no drift), sends what is due to Workers callers and sleeps until the next
// is due. If every caller is busy the dispatcher waits, and the picks it then sends are late:
// their latency counts from their due time, so a slow server shows as latency, not as a lower
// rate of measured picks.
func (d *driver) fixed(ctx context.Context, start time.Time) {
	type job struct {
		n          int64
		due, start time.Time
	}
	jobs := make(chan job, d.cfg.Workers)
	var wg sync.WaitGroup
	for range d.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				start := j.start
				if time.Since(j.due) > timerSlack {
					start = j.due
				}
				d.one(j.n, j.due, start)
			}
		}()
	}
	interval := float64(time.Second) / d.cfg.Rate
	for i := int64(0); ctx.Err() == nil; i++ {
		due := start.Add(time.Duration(float64(i) * interval))
		if wait := time.Until(due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		rel := time.Now()
		if rel.Before(due) {
			rel = due
		}
		select {
		case <-ctx.Done():
		case jobs <- job{d.count(due), due, rel}:
		}
	}
	close(jobs)
	wg.Wait()
}

// closed runs Workers callers back to back until ctx ends (calls in flight then finish).
func (d *driver) closed(ctx context.Context) {
	var wg sync.WaitGroup
	for range d.cfg.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				now := time.Now()
				d.one(d.count(now), now, now)
			}
		}()
	}
	wg.Wait()
}

// errors returns the measured errors by kind and their total.
func (d *driver) errors() (map[string]int64, int64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[string]int64, len(d.errs))
	var n int64
	for k, v := range d.errs {
		out[k] = v
		n += v
	}
	return out, n
}
