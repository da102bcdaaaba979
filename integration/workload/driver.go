package workload

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// ReplayConfig says when requests are issued.
type ReplayConfig struct {
	// Speedup divides trace timestamps (open loop); 0 means 1.
	Speedup float64
	// Jitter adds a uniform offset in [0, Jitter) of trace time to every timestamp, to spread
	// requests whose timestamps were quantised (the Mooncake conversation trace's are ~3 s).
	Jitter time.Duration
	// Concurrency > 0 replays closed loop: at most this many sessions at a time, in order of
	// their first timestamp; a session starts as soon as a slot is free.
	Concurrency int
	// ThinkTime is the pause between turns of a session in closed loop when a row has no delay.
	ThinkTime time.Duration
	// Seed drives the jitter.
	Seed uint64
}

// Arrival is a request to issue at a time (offset from the start of the replay).
type Arrival struct {
	Request int
	At      time.Duration
}

// Driver decides when each request of a workload is issued. Open loop: a session's first turn
// and every turn without a delay go at their (sped-up, jittered) timestamps; a turn with a
// delay goes that long after the previous turn of its session completes. Closed loop: sessions
// start as concurrency slots free up; every turn after the first goes its delay (or ThinkTime)
// after the previous completes. A Driver is not safe for concurrent use.
type Driver struct {
	w        *Workload
	cfg      ReplayConfig
	sessions [][]int
	sessOf   []int32 // request -> session
	turnOf   []int32 // request -> position in its session
	started  int     // closed loop: sessions started so far
}

// NewDriver validates cfg for w (which must be finalized).
func NewDriver(w *Workload, cfg ReplayConfig) (*Driver, error) {
	switch {
	case !w.linked:
		return nil, fmt.Errorf("%w: workload %q is not finalized", ErrInvalid, w.Name)
	case cfg.Speedup < 0 || math.IsNaN(cfg.Speedup) || math.IsInf(cfg.Speedup, 0):
		return nil, fmt.Errorf("%w: speedup %v must be a positive number", ErrInvalid, cfg.Speedup)
	case cfg.Jitter < 0, cfg.ThinkTime < 0, cfg.Concurrency < 0:
		return nil, fmt.Errorf("%w: jitter, think time and concurrency must not be negative", ErrInvalid)
	}
	if cfg.Speedup == 0 {
		cfg.Speedup = 1
	}
	d := &Driver{w: w, cfg: cfg, sessions: w.Sessions()}
	d.sessOf = make([]int32, len(w.Requests))
	d.turnOf = make([]int32, len(w.Requests))
	for s, reqs := range d.sessions {
		for t, i := range reqs {
			d.sessOf[i], d.turnOf[i] = int32(s), int32(t)
		}
	}
	if cfg.Concurrency > 0 { // closed loop: sessions in order of first timestamp
		slices.SortStableFunc(d.sessions, func(a, b []int) int {
			return int(w.Requests[a[0]].Timestamp - w.Requests[b[0]].Timestamp)
		})
		for s, reqs := range d.sessions {
			for _, i := range reqs {
				d.sessOf[i] = int32(s)
			}
		}
	}
	return d, nil
}

// Closed reports whether the replay is closed loop.
func (d *Driver) Closed() bool { return d.cfg.Concurrency > 0 }

// Start returns the arrivals known before anything completes, ordered by time then request.
func (d *Driver) Start() []Arrival {
	var out []Arrival
	if d.Closed() {
		for d.started < min(d.cfg.Concurrency, len(d.sessions)) {
			out = append(out, Arrival{Request: d.sessions[d.started][0]})
			d.started++
		}
		return out
	}
	for _, reqs := range d.sessions {
		for t, i := range reqs {
			if t == 0 || !d.w.Requests[i].HasDelay {
				out = append(out, Arrival{Request: i, At: d.openTime(i)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b Arrival) int {
		if a.At != b.At {
			return int(a.At - b.At)
		}
		return a.Request - b.Request
	})
	return out
}

// openTime is request i's jittered, sped-up timestamp.
func (d *Driver) openTime(i int) time.Duration {
	ts := float64(d.w.Requests[i].Timestamp)
	if d.cfg.Jitter > 0 {
		u := float64(Mix64(d.cfg.Seed^Mix64(uint64(i)))>>11) / (1 << 53)
		ts += u * float64(d.cfg.Jitter)
	}
	return time.Duration(ts / d.cfg.Speedup)
}

// Done reports that request i finished (or was dropped) at t and returns the arrivals that
// this releases: the session's next turn when it waits for completion, and in closed loop the
// next session when this one is over.
func (d *Driver) Done(i int, t time.Duration) []Arrival {
	reqs := d.sessions[d.sessOf[i]]
	turn := int(d.turnOf[i])
	if turn+1 < len(reqs) {
		nx := reqs[turn+1]
		r := &d.w.Requests[nx]
		switch {
		case r.HasDelay:
			return []Arrival{{Request: nx, At: t + r.Delay}}
		case d.Closed():
			return []Arrival{{Request: nx, At: t + d.cfg.ThinkTime}}
		}
		return nil
	}
	if d.Closed() && d.started < len(d.sessions) {
		s := d.sessions[d.started]
		d.started++
		return []Arrival{{Request: s[0], At: t}}
	}
	return nil
}
