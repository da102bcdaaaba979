package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/otlptranslator"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// metrics is the server's OpenTelemetry meter, exported for Prometheus on
// GET /metrics. Hot-path instruments use attribute sets built once (per
// policy and outcome, per lifecycle kind, per replica): building attributes
// on every call allocates.
type metrics struct {
	provider *sdkmetric.MeterProvider
	handler  http.Handler

	picks        metric.Int64Counter
	pickDuration metric.Float64Histogram
	replicaPicks metric.Int64Counter
	lcEvents     metric.Int64Counter

	policies    map[string]bool
	pickOpts    map[pickKey][]metric.AddOption
	latencyOpts map[string][]metric.RecordOption
	kindOpts    [scoring.EventDone + 1][]metric.AddOption

	rmu         sync.RWMutex
	replicaOpts map[string]replicaOpts // by replica id
}

type pickKey struct{ policy, outcome string }

type replicaOpts struct {
	model string
	opts  []metric.AddOption
}

// Pick outcomes, the "outcome" label of switchyard_picks_total.
const (
	outcomePicked       = "picked"        // a replica was chosen and reserved (or a retry replayed)
	outcomeDryRun       = "dry_run"       // scored without reserving
	outcomeInvalid      = "invalid"       // the request was rejected (InvalidArgument)
	outcomeNoReplica    = "no_replica"    // no eligible candidate (Unavailable)
	outcomeUnknownModel = "unknown_model" // no replica of the model was ever registered (NotFound)
	outcomeConflict     = "conflict"      // the request id is live for another model
	outcomeCanceled     = "canceled"      // the caller gave up first
	outcomeError        = "error"         // anything else
)

var pickOutcomes = []string{
	outcomePicked, outcomeDryRun, outcomeInvalid, outcomeNoReplica,
	outcomeUnknownModel, outcomeConflict, outcomeCanceled, outcomeError,
}

// Policy label values for picks that never reached a policy.
const (
	policyDefault = "default" // the request named none: the model's or server's default
	policyUnknown = "unknown" // the request named one that is not configured
)

// pickBuckets are the pick latency histogram's bounds, in seconds: a pick
// takes microseconds, a slow one milliseconds.
var pickBuckets = []float64{
	10e-6, 25e-6, 50e-6, 100e-6, 250e-6, 500e-6,
	1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1,
}

func newMetrics(s *Server) (*metrics, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithTranslationStrategy(otlptranslator.UnderscoreEscapingWithSuffixes),
		otelprom.WithoutScopeInfo(),
	)
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, fmt.Errorf("go collector: %w", err)
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, fmt.Errorf("process collector: %w", err)
	}
	opts := []sdkmetric.Option{sdkmetric.WithReader(exp)}
	if s.cfg.Resource != nil {
		opts = append(opts, sdkmetric.WithResource(s.cfg.Resource))
	}
	m := &metrics{
		provider: sdkmetric.NewMeterProvider(opts...),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{
			ErrorLog: promLogger{s.log}, ErrorHandling: promhttp.ContinueOnError,
		}),
		policies:    map[string]bool{},
		pickOpts:    map[pickKey][]metric.AddOption{},
		latencyOpts: map[string][]metric.RecordOption{},
		replicaOpts: map[string]replicaOpts{},
	}
	meter := m.provider.Meter(instrumentationName)
	if err := m.instruments(meter); err != nil {
		return nil, err
	}
	for _, p := range append(s.router.Policies(), policyDefault, policyUnknown) {
		m.policies[p] = true
		set := attribute.NewSet(attribute.String("policy", p))
		m.latencyOpts[p] = []metric.RecordOption{metric.WithAttributeSet(set)}
		for _, o := range pickOutcomes {
			set := attribute.NewSet(attribute.String("policy", p), attribute.String("outcome", o))
			m.pickOpts[pickKey{p, o}] = []metric.AddOption{metric.WithAttributeSet(set)}
		}
	}
	for k := scoring.EventAdmitted; k <= scoring.EventDone; k++ {
		m.kindOpts[k] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", k.String())))}
	}
	if err := m.observe(meter, s); err != nil {
		return nil, err
	}
	return m, nil
}

func (m *metrics) instruments(meter metric.Meter) error {
	var err error
	if m.picks, err = meter.Int64Counter("switchyard.picks", metric.WithUnit("{pick}"),
		metric.WithDescription("PickReplica calls by policy and outcome.")); err != nil {
		return err
	}
	if m.pickDuration, err = meter.Float64Histogram("switchyard.pick.duration", metric.WithUnit("s"),
		metric.WithDescription("Time to answer a successful PickReplica in the handler (validation, decision, audit), by policy."),
		metric.WithExplicitBucketBoundaries(pickBuckets...)); err != nil {
		return err
	}
	if m.replicaPicks, err = meter.Int64Counter("switchyard.replica.picks", metric.WithUnit("{pick}"),
		metric.WithDescription("Requests reserved on each replica (dry runs excluded).")); err != nil {
		return err
	}
	m.lcEvents, err = meter.Int64Counter("switchyard.lifecycle.events", metric.WithUnit("{event}"),
		metric.WithDescription("Lifecycle events received and validated, by kind."))
	return err
}

// pick records one finished PickReplica.
func (m *metrics) pick(req *v1.PickReplicaRequest, d *scoring.Decision, err error, took time.Duration) {
	if m == nil {
		return
	}
	ctx := context.Background()
	outcome := pickOutcome(d, err)
	policy := m.policyLabel(req, d)
	m.picks.Add(ctx, 1, m.pickOpts[pickKey{policy, outcome}]...)
	if err != nil {
		return
	}
	m.pickDuration.Record(ctx, took.Seconds(), m.latencyOpts[policy]...)
	if !d.DryRun {
		m.replicaPicks.Add(ctx, 1, m.replicaAttrs(d.Model, d.ReplicaID)...)
	}
}

// policyLabel bounds the policy label to the configured policies.
func (m *metrics) policyLabel(req *v1.PickReplicaRequest, d *scoring.Decision) string {
	p := req.GetPolicy()
	if d != nil {
		p = d.Policy
	}
	switch {
	case m.policies[p]:
		return p
	case p == "":
		return policyDefault
	}
	return policyUnknown
}

func pickOutcome(d *scoring.Decision, err error) string {
	if err == nil {
		if d.DryRun {
			return outcomeDryRun
		}
		return outcomePicked
	}
	switch connect.CodeOf(err) {
	case connect.CodeInvalidArgument:
		return outcomeInvalid
	case connect.CodeUnavailable:
		return outcomeNoReplica
	case connect.CodeNotFound:
		return outcomeUnknownModel
	case connect.CodeFailedPrecondition:
		return outcomeConflict
	case connect.CodeCanceled, connect.CodeDeadlineExceeded:
		return outcomeCanceled
	}
	return outcomeError
}

// replicaAttrs returns the cached attribute option of a replica, building it
// on its first pick.
func (m *metrics) replicaAttrs(model, replica string) []metric.AddOption {
	m.rmu.RLock()
	ro, ok := m.replicaOpts[replica]
	m.rmu.RUnlock()
	if ok && ro.model == model {
		return ro.opts
	}
	set := attribute.NewSet(attribute.String("model", model), attribute.String("replica", replica))
	ro = replicaOpts{model: model, opts: []metric.AddOption{metric.WithAttributeSet(set)}}
	m.rmu.Lock()
	m.replicaOpts[replica] = ro
	m.rmu.Unlock()
	return ro.opts
}

// forgetReplicas drops the cached attributes of replicas no longer
// registered, so the cache follows the fleet.
func (m *metrics) forgetReplicas(live map[string]bool) {
	m.rmu.Lock()
	defer m.rmu.Unlock()
	for id := range m.replicaOpts {
		if !live[id] {
			delete(m.replicaOpts, id)
		}
	}
}

// lifecycle counts validated lifecycle events by kind.
func (m *metrics) lifecycle(evs []scoring.LifecycleEvent) {
	if m == nil {
		return
	}
	var n [scoring.EventDone + 1]int64
	for i := range evs {
		if k := evs[i].Kind; k >= scoring.EventAdmitted && k <= scoring.EventDone {
			n[k]++
		}
	}
	for k := scoring.EventAdmitted; k <= scoring.EventDone; k++ {
		if n[k] > 0 {
			m.lcEvents.Add(context.Background(), n[k], m.kindOpts[k]...)
		}
	}
}

// ServeHTTP serves the Prometheus text exposition.
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if m == nil {
		http.Error(w, "metrics are unavailable (see the server's start-up log)", http.StatusServiceUnavailable)
		return
	}
	m.handler.ServeHTTP(w, r)
}

// promLogger sends promhttp's errors to slog.
type promLogger struct {
	log interface{ Error(string, ...any) }
}

func (l promLogger) Println(v ...any) { l.log.Error("metrics: " + fmt.Sprint(v...)) }
