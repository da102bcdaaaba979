package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/switchyard-llm/switchyard/scoring"
)

// LivenessConfig configures replica liveness checks. With Interval 0 (the zero value) no
// check runs: heartbeats are accepted and recorded, and every replica stays eligible.
type LivenessConfig struct {
	// Interval is how often every replica's health_url is probed (HTTP GET, 2xx = alive) and
	// heartbeat deadlines are checked. 0 = liveness off.
	Interval time.Duration
	// Timeout bounds one probe. 0 = Interval.
	Timeout time.Duration
	// FailureThreshold is how many probes in a row must fail to take a replica out. 0 = 3.
	FailureThreshold int
	// HeartbeatTimeout takes out a replica that heartbeated once and then sent none for this
	// long. 0 = Interval × FailureThreshold.
	HeartbeatTimeout time.Duration
}

// DefaultLivenessFailureThreshold is LivenessConfig.FailureThreshold's default.
const DefaultLivenessFailureThreshold = 3

func (c LivenessConfig) withDefaults() LivenessConfig {
	if c.Interval <= 0 {
		return LivenessConfig{}
	}
	if c.Timeout <= 0 {
		c.Timeout = c.Interval
	}
	if c.FailureThreshold <= 0 {
		c.FailureThreshold = DefaultLivenessFailureThreshold
	}
	if c.HeartbeatTimeout <= 0 {
		c.HeartbeatTimeout = c.Interval * time.Duration(c.FailureThreshold)
	}
	return c
}

// Health is a replica's liveness as the server last concluded it.
type Health uint8

// Health values.
const (
	// HealthUnknown: not checked (no health URL, no heartbeat yet, or liveness off).
	HealthUnknown Health = iota
	// HealthHealthy: its probes pass and its heartbeats are on time.
	HealthHealthy
	// HealthUnhealthy: quarantined: no picks, index entries and reservations dropped.
	HealthUnhealthy
)

// String returns "unknown", "healthy" or "unhealthy".
func (h Health) String() string {
	switch h {
	case HealthHealthy:
		return "healthy"
	case HealthUnhealthy:
		return "unhealthy"
	}
	return "unknown"
}

// LivenessStats counts what the liveness checks did since the server started.
type LivenessStats struct {
	Probes, ProbeFailures uint64
	HeartbeatsReceived    uint64
	Quarantines, Restores uint64 // transitions to unhealthy and back
	// RequestsFreed is the live requests dropped from quarantined replicas (their data planes
	// retry them elsewhere; their late lifecycle events count as unknown requests).
	RequestsFreed uint64
}

// liveRecord is what the liveness checker knows of one replica.
type liveRecord struct {
	healthURL string
	beating   bool // heartbeated at least once
	lastBeat  time.Time
	failures  int // probes failed in a row
	probing   bool
	probeOK   bool // the last probe passed (or none ran)
	health    Health
	detail    string
}

// liveness runs the checks and moves replicas in and out of quarantine.
type liveness struct {
	cfg    LivenessConfig
	router *scoring.Router
	log    *slog.Logger
	client *http.Client
	now    func() time.Time
	// onRestore, when set, is told that a replica came back, after its index was cleared:
	// event ingestion can start that replica's stream afresh (catching up through replay).
	onRestore func(ctx context.Context, id string)

	transitions sync.Mutex // serialises health changes so the router sees them in order
	mu          sync.Mutex
	reps        map[string]*liveRecord
	stats       LivenessStats
	stop        context.CancelFunc
	done        chan struct{}
}

func newLiveness(cfg LivenessConfig, router *scoring.Router, log *slog.Logger) *liveness {
	cfg = cfg.withDefaults()
	return &liveness{
		cfg: cfg, router: router, log: log, now: time.Now,
		client: &http.Client{Timeout: cfg.Timeout},
		reps:   map[string]*liveRecord{},
	}
}

// start runs the checker until stopLoop; nothing runs when liveness is off.
func (l *liveness) start() {
	if l.cfg.Interval <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	if l.stop != nil {
		l.mu.Unlock()
		cancel()
		return
	}
	l.stop, l.done = cancel, make(chan struct{})
	l.mu.Unlock()
	go l.run(ctx)
}

// stopLoop stops the checker and waits for it.
func (l *liveness) stopLoop() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

func (l *liveness) run(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(l.cfg.Interval)
	defer t.Stop()
	var probes sync.WaitGroup
	defer probes.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		l.tick(ctx, &probes)
	}
}

// tick launches due probes and checks heartbeat deadlines.
func (l *liveness) tick(ctx context.Context, probes *sync.WaitGroup) {
	now := l.now()
	var late []string
	l.mu.Lock()
	for id, rec := range l.reps {
		if rec.healthURL != "" && !rec.probing {
			rec.probing = true
			url := rec.healthURL
			probes.Go(func() { l.probe(ctx, id, url) })
		}
		if rec.beating && now.Sub(rec.lastBeat) > l.cfg.HeartbeatTimeout && rec.health != HealthUnhealthy {
			late = append(late, id)
		}
	}
	l.mu.Unlock()
	for _, id := range late {
		l.evaluate(ctx, id)
	}
}

// probe GETs a replica's health URL once and records the outcome.
func (l *liveness) probe(ctx context.Context, id, url string) {
	err := l.get(ctx, url)
	if ctx.Err() != nil {
		return
	}
	l.mu.Lock()
	rec := l.reps[id]
	l.stats.Probes++
	if rec == nil || rec.healthURL != url {
		if rec != nil {
			rec.probing = false
		}
		l.mu.Unlock()
		return
	}
	rec.probing = false
	rec.probeOK = err == nil
	if err != nil {
		l.stats.ProbeFailures++
		rec.failures++
		rec.detail = fmt.Sprintf("health probe %s: %v", url, err)
	} else {
		rec.failures = 0
	}
	l.mu.Unlock()
	l.evaluate(ctx, id)
}

func (l *liveness) get(ctx context.Context, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

// evaluate decides a replica's health from its record and applies a change.
func (l *liveness) evaluate(ctx context.Context, id string) {
	l.transitions.Lock()
	defer l.transitions.Unlock()
	l.mu.Lock()
	rec := l.reps[id]
	if rec == nil {
		l.mu.Unlock()
		return
	}
	late := rec.beating && l.now().Sub(rec.lastBeat) > l.cfg.HeartbeatTimeout
	want := HealthHealthy
	switch {
	case rec.healthURL != "" && rec.failures >= l.cfg.FailureThreshold:
		want = HealthUnhealthy
	case late:
		want = HealthUnhealthy
		rec.detail = fmt.Sprintf("no heartbeat for %s", l.now().Sub(rec.lastBeat).Round(time.Millisecond))
	case rec.healthURL != "" && !rec.probeOK, rec.healthURL == "" && !rec.beating:
		want = rec.health // failing but under the threshold, or nothing to judge by
	}
	old := rec.health
	rec.health = want
	if want != HealthUnhealthy {
		rec.detail = ""
	}
	detail := rec.detail
	l.mu.Unlock()
	switch {
	case want == HealthUnhealthy && old != HealthUnhealthy:
		l.quarantine(ctx, id, detail)
	case want == HealthHealthy && old == HealthUnhealthy:
		l.restore(ctx, id)
	}
}

func (l *liveness) quarantine(ctx context.Context, id, detail string) {
	freed, err := l.router.Quarantine(ctx, id)
	if err != nil {
		l.log.Warn("liveness: quarantine failed", "replica", id, "err", err)
		return
	}
	l.mu.Lock()
	l.stats.Quarantines++
	l.stats.RequestsFreed += uint64(freed)
	l.mu.Unlock()
	l.log.Warn("liveness: replica unhealthy, taken out of routing", "replica", id, "reason", detail, "requests_freed", freed)
}

func (l *liveness) restore(ctx context.Context, id string) {
	if _, err := l.router.Restore(ctx, id); err != nil {
		l.log.Warn("liveness: restore failed", "replica", id, "err", err)
		return
	}
	l.mu.Lock()
	l.stats.Restores++
	l.mu.Unlock()
	l.log.Info("liveness: replica healthy again, routing to it with a clean index", "replica", id)
	if l.onRestore != nil {
		l.onRestore(ctx, id)
	}
}

// register applies a registration through apply. A registration is a sign of life: an
// unhealthy replica is restored first (index cleared) so that the registration, which resets
// its state, cannot bypass the clean start; if apply fails it goes back to quarantine.
func (l *liveness) register(ctx context.Context, id, healthURL string, apply func() error) error {
	l.transitions.Lock()
	defer l.transitions.Unlock()
	l.mu.Lock()
	rec := l.reps[id]
	down := rec != nil && rec.health == HealthUnhealthy
	l.mu.Unlock()
	if down {
		if _, err := l.router.Restore(ctx, id); err != nil {
			l.log.Debug("liveness: restore before register", "replica", id, "err", err)
		}
	}
	if err := apply(); err != nil {
		if down {
			_, _ = l.router.Quarantine(ctx, id)
		}
		return err
	}
	l.mu.Lock()
	if rec = l.reps[id]; rec == nil {
		rec = &liveRecord{probeOK: true}
		l.reps[id] = rec
	}
	if rec.healthURL != healthURL {
		rec.healthURL, rec.failures, rec.probeOK = healthURL, 0, true
	}
	if down {
		rec.health, rec.failures, rec.probeOK, rec.detail = HealthUnknown, 0, true, ""
		rec.lastBeat = l.now()
		l.stats.Restores++
	}
	l.mu.Unlock()
	if down {
		l.log.Info("liveness: unhealthy replica registered again, routing to it with a clean index", "replica", id)
		if l.onRestore != nil {
			l.onRestore(ctx, id)
		}
	}
	return nil
}

// heartbeat records a heartbeat and re-evaluates the replica at once.
func (l *liveness) heartbeat(ctx context.Context, id string) {
	l.mu.Lock()
	rec := l.reps[id]
	if rec == nil {
		rec = &liveRecord{probeOK: true}
		l.reps[id] = rec
	}
	rec.beating, rec.lastBeat = true, l.now()
	l.stats.HeartbeatsReceived++
	l.mu.Unlock()
	if l.cfg.Interval > 0 {
		l.evaluate(ctx, id)
	}
}

// forget drops a deregistered replica's record.
func (l *liveness) forget(id string) {
	l.mu.Lock()
	delete(l.reps, id)
	l.mu.Unlock()
}

// liveStatus is one replica's liveness as reported in ReplicaStatus.
type liveStatus struct {
	Health    Health
	Detail    string // why unhealthy
	HealthURL string
}

// status returns a replica's liveness; HealthUnknown when liveness is off.
func (l *liveness) status(id string) liveStatus {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := l.reps[id]
	if rec == nil {
		return liveStatus{}
	}
	st := liveStatus{HealthURL: rec.healthURL}
	if l.cfg.Interval > 0 {
		st.Health, st.Detail = rec.health, rec.detail
	}
	return st
}

// snapshot returns the counters.
func (l *liveness) snapshot() LivenessStats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stats
}
