package bench

import (
	"context"
	"fmt"
	"io"
	"time"
)

// progress redraws one status line a second: the phase, picks/s with the last second's p99,
// errors, lifecycle and KV events/s, and the router's CPU and RSS when sampled.
type progress struct {
	w     io.Writer
	start time.Time
	r     *run
	drawn bool
	prev  counts
}

// counts are the running totals a progress line differentiates.
type counts struct {
	at                  time.Time
	picks, errs, lc, kv int64
	serverCPU           time.Duration
}

func (p *progress) loop(ctx context.Context) {
	if p.w == nil {
		return
	}
	p.prev = p.r.counts()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			if p.drawn {
				fmt.Fprintln(p.w)
			}
			return
		case <-tick.C:
			p.draw()
		}
	}
}

func (p *progress) draw() {
	c := p.r.counts()
	dt := c.at.Sub(p.prev.at).Seconds()
	h := p.r.d.win.Swap(new(Histogram))
	rate := func(a, b int64) float64 { return float64(a-b) / dt }
	phase := "warm-up"
	switch d := p.r.d; {
	case c.at.After(d.to):
		phase = "finishing"
	case !c.at.Before(d.from):
		phase = "measuring"
	}
	line := fmt.Sprintf("[%4.0fs %-9s] picks %6.0f/s p99 %-8s errors %d | lifecycle %6.0f/s | kv %7.0f block events/s",
		c.at.Sub(p.start).Seconds(), phase, rate(c.picks, p.prev.picks), us(micros(h.Quantile(0.99))),
		c.errs, rate(c.lc, p.prev.lc), rate(c.kv, p.prev.kv))
	if sv, _ := p.r.sampler.last(); sv.rss > 0 {
		line += fmt.Sprintf(" | server CPU %3.0f%% RSS %.0f MB", 100*(c.serverCPU-p.prev.serverCPU).Seconds()/dt, mb(sv.rss))
	}
	fmt.Fprintf(p.w, "\r%s\033[K", line)
	p.drawn = true
	p.prev = c
}
