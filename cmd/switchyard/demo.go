package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/integration/enginesim"
	"github.com/switchyard-llm/switchyard/integration/sim"
)

// demoModel is the model the demo's engines serve.
const demoModel = "demo"

// demoFlags are serve's --demo settings.
type demoFlags struct {
	enabled  bool
	replicas int
	sessions int
	speedup  float64
	report   time.Duration
}

func (c *demoFlags) flags(fs *flag.FlagSet) {
	fs.BoolVar(&c.enabled, "demo", false, "also run a few engine-sims and a traffic driver in this process, printing a live per-replica summary")
	fs.IntVar(&c.replicas, "demo-replicas", 3, "engine-sims the demo starts")
	fs.IntVar(&c.sessions, "demo-sessions", 6, "concurrent multi-turn sessions the demo drives")
	fs.Float64Var(&c.speedup, "demo-speedup", 5, "the demo engines' speed-up over the step-time model")
	fs.DurationVar(&c.report, "demo-report", 2*time.Second, "how often the demo prints its summary")
}

func (c *demoFlags) validate() error {
	if !c.enabled {
		return nil
	}
	switch {
	case c.replicas < 1 || c.replicas > 64:
		return fmt.Errorf("-demo-replicas: want 1..64, got %d", c.replicas)
	case c.sessions < 1 || c.sessions > 1024:
		return fmt.Errorf("-demo-sessions: want 1..1024, got %d", c.sessions)
	case c.speedup <= 0:
		return fmt.Errorf("-demo-speedup: must be positive, got %g", c.speedup)
	case c.report <= 0:
		return fmt.Errorf("-demo-report: must be positive, got %s", c.report)
	}
	return nil
}

// demo is a running demo: engines, driver and sessions.
type demo struct {
	cfg     demoFlags
	out     io.Writer
	log     *slog.Logger
	engines []*enginesim.Service
	driver  *enginesim.Driver
	start   time.Time

	mu    sync.Mutex
	stats map[string]*demoReplicaStats
	turns int
	fails int
}

// demoReplicaStats is what the driver saw of one replica.
type demoReplicaStats struct {
	requests             int
	promptTokens, cached int64
}

// dialable turns a listener address into one a client can dial (an unspecified host is
// this machine).
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// startDemo starts the demo against the router at routerAddr and returns the function that
// stops it (waiting for its goroutines).
func startDemo(ctx context.Context, routerAddr string, cfg demoFlags, out io.Writer, log *slog.Logger) (func(), error) {
	routerAddr = dialable(routerAddr)
	d := &demo{cfg: cfg, out: out, log: log, stats: map[string]*demoReplicaStats{}, start: time.Now()}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for i := range cfg.replicas {
		ec := enginesim.NewConfig()
		ec.Model, ec.ReplicaID, ec.Listen, ec.Logger = demoModel, fmt.Sprintf("engine-%d", i), "127.0.0.1:0", quiet
		ec.Engine = enginesim.EngineConfig{
			Engine:  sim.EngineConfig{BlockSize: 16, NumBlocks: 2048, MaxBatchedTokens: 2048, MaxSeqs: 64},
			Speedup: cfg.speedup,
		}
		ec.KVEvents = enginesim.PublisherConfig{Endpoint: "tcp://127.0.0.1:0", Bind: true, ReplayEndpoint: "tcp://127.0.0.1:0"}
		ec.RouterAddr, ec.AdvertiseHost, ec.Heartbeat = routerAddr, "127.0.0.1", time.Second
		svc, err := enginesim.Start(ec)
		if err != nil {
			d.closeEngines()
			return nil, fmt.Errorf("demo engine %d: %w", i, err)
		}
		d.engines = append(d.engines, svc)
	}
	drv, err := enginesim.NewDriver(enginesim.DriverConfig{Router: routerAddr, Model: demoModel, RequestTimeout: 60 * time.Second, IDPrefix: "demo"})
	if err != nil {
		d.closeEngines()
		return nil, err
	}
	d.driver = drv
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { d.run(ctx) })
	return func() {
		cancel()
		wg.Wait()
		_ = d.driver.Close()
		d.closeEngines()
	}, nil
}

func (d *demo) closeEngines() {
	for _, e := range d.engines {
		_ = e.Close()
	}
}

// run waits for the engines to register, then drives sessions and prints summaries.
func (d *demo) run(ctx context.Context) {
	fmt.Fprintf(d.out, "switchyard demo: %d engine-sims (speed-up %gx), %d concurrent multi-turn sessions; Ctrl-C stops\n",
		len(d.engines), d.cfg.speedup, d.cfg.sessions)
	for ctx.Err() == nil {
		reps, err := d.driver.Client().ListReplicas(ctx, demoModel)
		if err == nil && len(reps) == len(d.engines) {
			break
		}
		if !sleepCtx(ctx, 100*time.Millisecond) {
			return
		}
	}
	var wg sync.WaitGroup
	for i := range d.cfg.sessions {
		wg.Go(func() { d.session(ctx, i) })
	}
	t := time.NewTicker(d.cfg.report)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case <-t.C:
			d.summary(ctx)
		}
	}
}

// session drives conversations of a few turns, one after another. Sessions share one of two
// system prompts, so the router sees both shared and private prefixes.
func (d *demo) session(ctx context.Context, worker int) {
	for n := 0; ctx.Err() == nil; n++ {
		s := enginesim.NewSession(fmt.Sprintf("s%d-%d", worker, n), enginesim.SystemPrompt(worker%2, 256), uint64(worker)<<32|uint64(n))
		for turn := 0; turn < 6 && ctx.Err() == nil; turn++ {
			t := d.driver.Do(ctx, s.ID, s.Prompt(48), 32)
			if ctx.Err() != nil {
				return
			}
			d.record(&t, s.Len())
			if t.Err != nil {
				d.log.Warn("demo request failed", "session", s.ID, "err", t.Err)
				break
			}
			s.Reply(t.Output)
		}
	}
}

func (d *demo) record(t *enginesim.Turn, prompt int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.turns++
	if t.Err != nil {
		d.fails++
		return
	}
	st := d.stats[t.Replica()]
	if st == nil {
		st = &demoReplicaStats{}
		d.stats[t.Replica()] = st
	}
	st.requests++
	st.promptTokens += int64(prompt)
	st.cached += int64(t.EngineCached)
}

// summary prints one table of the replicas as the router and the driver see them.
func (d *demo) summary(ctx context.Context) {
	reps, err := d.driver.Client().ListReplicas(ctx, demoModel)
	if err != nil {
		if ctx.Err() == nil {
			fmt.Fprintf(d.out, "demo: list replicas: %v\n", err)
		}
		return
	}
	fmt.Fprint(d.out, formatSummary(time.Since(d.start), reps, d.snapshot()))
}

// snapshot copies the driver's counts.
func (d *demo) snapshot() demoSnapshot {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := demoSnapshot{turns: d.turns, fails: d.fails, byReplica: map[string]demoReplicaStats{}}
	for id, st := range d.stats {
		s.byReplica[id] = *st
	}
	return s
}

// demoSnapshot is the driver's counts at one moment.
type demoSnapshot struct {
	turns, fails int
	byReplica    map[string]demoReplicaStats
}

// formatSummary renders the per-replica table.
func formatSummary(elapsed time.Duration, reps []*v1.ReplicaStatus, s demoSnapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n[%s] %d requests, %d failed\n", elapsed.Round(time.Second), s.turns, s.fails)
	fmt.Fprintf(&b, "%-10s %-9s %8s %7s %13s %14s %9s\n", "replica", "health", "requests", "active", "decode-blocks", "indexed-blocks", "hit-rate")
	slices.SortFunc(reps, func(a, b *v1.ReplicaStatus) int {
		return strings.Compare(a.GetReplica().GetId(), b.GetReplica().GetId())
	})
	for _, r := range reps {
		id := r.GetReplica().GetId()
		st := s.byReplica[id]
		hit := 0.0
		if st.promptTokens > 0 {
			hit = float64(st.cached) / float64(st.promptTokens)
		}
		health := strings.ToLower(strings.TrimPrefix(r.GetHealth().String(), "REPLICA_HEALTH_"))
		fmt.Fprintf(&b, "%-10s %-9s %8d %7d %13d %14d %9.2f\n", id, health, st.requests,
			r.GetLoad().GetActiveRequests(), r.GetLoad().GetDecodeBlocks(), r.GetCache().GetDeviceBlocks(), hit)
	}
	return b.String()
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
