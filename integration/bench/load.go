package bench

import (
	"context"
	"fmt"
	"math"
	"os"
	"strconv"
	"sync"
	"time"
)

// snapshot is the running totals at one end of the measured window.
type snapshot struct {
	lcReported, kvBlocks int64
	taken                bool
}

// load runs the warm-up and the measured window: picks, lifecycle events and KV events at
// once, with the sampler and the progress line.
func (r *run) load(ctx context.Context) error {
	cfg := r.cfg
	if cfg.KVRate > 0 {
		if err := r.publishers(); err != nil {
			return err
		}
	}
	var lc *lifecycle
	if cfg.Lifecycle {
		rep, err := r.c.NewReporter()
		if err != nil {
			return fmt.Errorf("%w: %w", ErrSetup, err)
		}
		r.rep = rep
		lc = newLifecycle(rep, cfg)
	}
	p, release, err := pickerFor(cfg, r.c, r.prompts)
	if err != nil {
		return err
	}
	defer release()
	r.d = newDriver(cfg, p, r.prompts, lc, "bench-"+strconv.FormatInt(time.Now().UnixNano(), 36)+"-")
	r.d.calls = ctx

	start := time.Now()
	r.start = start
	r.d.from = start.Add(cfg.Warmup)
	r.d.to = r.d.from.Add(cfg.Duration)
	bg, stopBG := context.WithCancel(ctx) // sampler, engines, progress
	var wg sync.WaitGroup
	spawn := func(f func()) {
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
	}
	spawn(func() { r.sampler.run(bg) })
	for _, e := range r.engines {
		if cfg.KVRate > 0 {
			// A failed publish is counted in the publisher's stats; the engine goes on.
			spawn(func() { e.steady(bg, cfg.KVRate/float64(len(r.engines)), r.kvFailed) })
		}
	}
	lcCtx, stopLC := context.WithCancel(ctx)
	lcDone := make(chan struct{})
	go func() {
		defer close(lcDone)
		if lc != nil {
			lc.run(lcCtx)
		}
	}()
	var snaps [2]snapshot
	spawn(func() { r.snapshotAt(bg, r.d.from, &snaps[0]) })
	spawn(func() { r.snapshotAt(bg, r.d.to, &snaps[1]) })
	prog := &progress{w: cfg.Progress, start: start, r: r}
	spawn(func() { prog.loop(bg) })

	issue, stopIssue := context.WithDeadline(ctx, r.d.to)
	if cfg.Mode == ModeFixed {
		r.d.fixed(issue, start)
	} else {
		r.d.closed(issue)
	}
	stopIssue()
	stopLC() // the requests still in flight complete now
	<-lcDone
	stopBG()
	wg.Wait()
	r.summarise(snaps)
	return ctx.Err()
}

// scheduledIn counts the fixed-rate due times start + i/rate that fall in [from, to).
func scheduledIn(start, from, to time.Time, rate float64) int64 {
	first := math.Ceil(from.Sub(start).Seconds() * rate)
	end := math.Ceil(to.Sub(start).Seconds() * rate)
	return int64(max(0, end-max(0, first)))
}

// snapshotAt records the running totals at time at.
func (r *run) snapshotAt(ctx context.Context, at time.Time, s *snapshot) {
	t := time.NewTimer(time.Until(at))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return
	case <-t.C:
	}
	if r.rep != nil {
		s.lcReported = r.rep.Stats().Reported
	}
	s.kvBlocks = r.kvBlocks()
	s.taken = true
}

func (r *run) kvBlocks() int64 {
	var n int64
	for _, e := range r.engines {
		n += e.blocks.Load()
	}
	return n
}

// counts are the running totals for the progress line.
func (r *run) counts() counts {
	c := counts{at: time.Now(), picks: r.d.answered.Load(), kv: r.kvBlocks()}
	r.d.mu.Lock()
	c.errs = r.d.all
	r.d.mu.Unlock()
	if r.rep != nil {
		c.lc = r.rep.Stats().Reported
	}
	sv, _ := r.sampler.last()
	c.serverCPU = sv.cpu
	return c
}

// summarise fills the result's setup and measured figures.
func (r *run) summarise(snaps [2]snapshot) {
	cfg, d, res := r.cfg, r.d, r.res
	secs := cfg.Duration.Seconds()
	res.Setup = Setup{
		Addr: cfg.Addr, Protocol: cfg.Protocol, Mode: cfg.Mode, Workers: cfg.Workers, Premarshal: cfg.Premarshal, Replicas: cfg.Replicas,
		Policy: cfg.Policy, DryRun: cfg.DryRun, Prompts: r.prompts.Source, MeanPromptTokens: r.prompts.MeanTokens(),
		Lifecycle: cfg.Lifecycle, KVRate: cfg.KVRate, PreloadBlocks: cfg.PreloadBlocks,
		PreloadSeconds: res.Setup.PreloadSeconds, WarmupSeconds: cfg.Warmup.Seconds(), DurationSeconds: secs,
	}
	if cfg.Mode == ModeFixed {
		res.Setup.Rate = cfg.Rate
	}
	byKind, nerr := d.errors()
	res.Picks = Picks{
		Sent: d.sent.Load(), OK: d.ok.Load(), Errors: nerr, ByKind: byKind,
		PerSecond: float64(d.ok.Load()) / secs, Late: d.late.Load(),
		Latency: d.lat.Summary(), Service: d.svc.Summary(),
	}
	if t := d.tokens.Load(); t > 0 {
		res.Picks.CachedShare = float64(d.cached.Load()) / float64(t)
	}
	if cfg.Mode == ModeFixed {
		res.Picks.Scheduled = scheduledIn(r.start, d.from, d.to, cfg.Rate)
		res.Picks.Unsent = res.Picks.Scheduled - res.Picks.Sent
	}
	if snaps[0].taken && snaps[1].taken {
		res.KV.BlockEventsPerSecond = float64(snaps[1].kvBlocks-snaps[0].kvBlocks) / secs
		if r.rep != nil {
			res.Lifecycle = &Lifecycle{ReportedPerSecond: float64(snaps[1].lcReported-snaps[0].lcReported) / secs}
		}
	}
	if r.sampler.serverPID > 0 {
		r.sampler.mu.Lock()
		res.Server = window(r.sampler.serverPID, r.sampler.server, d.from, d.to)
		if r.sampler.err != nil && res.Server.Error == "" {
			res.Server.Error = r.sampler.err.Error()
		}
		r.sampler.mu.Unlock()
	}
	r.sampler.mu.Lock()
	res.Client = window(os.Getpid(), r.sampler.client, d.from, d.to)
	r.sampler.mu.Unlock()
}

// finish closes the reporter and the KV streams, so the server confirms what it applied, and
// adds those totals to the result.
func (r *run) finish() {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	if r.rep != nil {
		_ = r.rep.Close(ctx) // what it could not deliver is counted in its stats
		st := r.rep.Stats()
		if r.res.Lifecycle == nil {
			r.res.Lifecycle = &Lifecycle{}
		}
		l := r.res.Lifecycle
		l.Reported, l.Delivered, l.Dropped, l.Rejected = st.Reported, st.Delivered, st.Dropped, st.Rejected
		l.Applied, l.UnknownRequest, l.Stale, l.Failures = st.Applied, st.UnknownRequest, st.Stale, st.Failures
		if r.d != nil && r.d.lc != nil {
			l.Dropped += r.d.lc.refused()
		}
	}
	r.closePublishers(ctx)
	k := &r.res.KV
	k.BlockEvents, k.Events, k.Failures = r.kvBlocks(), r.kvEvents, r.kvFail
	for _, resp := range r.kvResp {
		k.Applied += resp.GetEventsApplied()
		k.Rejected += resp.GetEventsRejected()
	}
	if r.kvErr != nil {
		k.FirstError = r.kvErr.Error()
	}
	r.res.Machine.LoadAfter = loadavg()
}
