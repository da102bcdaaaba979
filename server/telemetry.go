package server

import (
	"context"
	"strings"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/otelconnect"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc/filters"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// instrumentationName names the tracer and meter of this package.
const instrumentationName = "github.com/switchyard-llm/switchyard/server"

// tracedPrefix selects the RPCs that get server spans: switchyard's own
// services, not health checks or reflection.
const tracedPrefix = "switchyard."

// telemetry is the server's tracing and metrics. A nil *telemetry (services
// built without a Server, as in unit tests) records nothing.
type telemetry struct {
	// tracer makes decision spans; nil when tracing is off, so that a pick
	// then starts no span at all.
	tracer     trace.Tracer
	tp         trace.TracerProvider
	propagator propagation.TextMapPropagator
	spanCands  int
	metrics    *metrics
	// connect are the Connect handler options that make RPC spans.
	connect []connect.HandlerOption
}

// newTelemetry builds the server's metrics and tracing hooks and subscribes
// the audit file. What fails is logged and left off: telemetry never stops
// the server from serving.
func (s *Server) newTelemetry() *telemetry {
	cfg := s.cfg
	t := &telemetry{spanCands: cfg.SpanCandidates, propagator: cfg.Propagator}
	var err error
	if t.metrics, err = newMetrics(s); err != nil {
		s.log.Error("metrics are off: building them failed", "err", err)
	}
	if t.propagator == nil {
		t.propagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	}
	if cfg.TracerProvider != nil {
		t.tp = cfg.TracerProvider
		t.tracer = cfg.TracerProvider.Tracer(instrumentationName)
		if t.connect, err = t.connectOptions(); err != nil {
			s.log.Error("Connect RPC spans are off: building the interceptor failed", "err", err)
		}
	}
	if cfg.AuditFile != nil {
		if err := cfg.AuditFile.attach(s.audit); err != nil {
			s.log.Error("the audit file receives no decisions", "err", err)
		}
	}
	return t
}

// grpcOptions instrument grpc-go: a server span per switchyard RPC, parented
// to the caller's propagated trace context. None when tracing is off.
func (t *telemetry) grpcOptions() []grpc.ServerOption {
	if t.tracer == nil {
		return nil
	}
	return []grpc.ServerOption{grpc.StatsHandler(otelgrpc.NewServerHandler(
		otelgrpc.WithTracerProvider(t.tp),
		otelgrpc.WithPropagators(t.propagator),
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelgrpc.WithFilter(filters.ServicePrefix(tracedPrefix)),
	))}
}

// connectOptions instrument connect-go the same way. otelconnect links
// rather than parents remote spans by default; a data plane's span is the
// caller here, so it is trusted as the parent.
func (t *telemetry) connectOptions() ([]connect.HandlerOption, error) {
	ic, err := otelconnect.NewInterceptor(
		otelconnect.WithTracerProvider(t.tp),
		otelconnect.WithPropagator(t.propagator),
		otelconnect.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelconnect.WithTrustRemote(),
		otelconnect.WithFilter(func(_ context.Context, spec connect.Spec) bool {
			return strings.HasPrefix(spec.Procedure, "/"+tracedPrefix)
		}),
	)
	if err != nil {
		return nil, err
	}
	return []connect.HandlerOption{connect.WithInterceptors(ic)}, nil
}

// pickProbe follows one PickReplica from start to end.
type pickProbe struct {
	start time.Time
	span  trace.Span // nil when tracing is off
}

// startPick starts timing a pick and, with tracing on, its decision span.
func (t *telemetry) startPick(ctx context.Context) (context.Context, pickProbe) {
	if t == nil {
		return ctx, pickProbe{}
	}
	p := pickProbe{start: time.Now()}
	if t.tracer != nil {
		ctx, p.span = t.tracer.Start(ctx, decisionSpanName)
	}
	return ctx, p
}

// endPick records a finished pick: its metrics always, its span's
// attributes and candidate events only when the span records.
func (t *telemetry) endPick(p pickProbe, req *v1.PickReplicaRequest, d *scoring.Decision, err error) {
	if t == nil {
		return
	}
	t.metrics.pick(req, d, err, time.Since(p.start))
	if p.span == nil {
		return
	}
	if p.span.IsRecording() {
		t.annotate(p.span, req, d, err)
	}
	p.span.End()
}

// lifecycle counts validated lifecycle events by kind.
func (t *telemetry) lifecycle(evs []scoring.LifecycleEvent) {
	if t == nil {
		return
	}
	t.metrics.lifecycle(evs)
}
