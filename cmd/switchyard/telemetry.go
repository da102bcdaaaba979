package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/switchyard-llm/switchyard/server"
)

// obsConfig is what `serve` can be told about observability. Trace export
// itself is configured by the standard OTEL_* environment variables.
type obsConfig struct {
	spanCandidates    int
	shutdownTimeout   time.Duration
	auditFile         string
	auditFileMaxBytes int64
	auditFileBackups  int
}

func (c *obsConfig) flags(fs *flag.FlagSet) {
	fs.IntVar(&c.spanCandidates, "trace-candidates", server.DefaultSpanCandidates, "most candidate events on one decision span (best ranked first)")
	fs.DurationVar(&c.shutdownTimeout, "telemetry-shutdown-timeout", 5*time.Second, "at exit, how long flushing buffered spans may take")
	fs.StringVar(&c.auditFile, "audit-file", "", "append every decision as a JSON line to this file (empty = off)")
	fs.Int64Var(&c.auditFileMaxBytes, "audit-file-max-bytes", server.DefaultAuditFileMaxBytes, "rotate the audit file past this size")
	fs.IntVar(&c.auditFileBackups, "audit-file-backups", server.DefaultAuditFileBackups, "rotated audit files kept (FILE.1 newest)")
}

func (c *obsConfig) validate() error {
	switch {
	case c.spanCandidates <= 0:
		return fmt.Errorf("-trace-candidates: must be positive, got %d", c.spanCandidates)
	case c.shutdownTimeout <= 0:
		return fmt.Errorf("-telemetry-shutdown-timeout: must be positive, got %s", c.shutdownTimeout)
	case c.auditFileMaxBytes <= 0:
		return fmt.Errorf("-audit-file-max-bytes: must be positive, got %d", c.auditFileMaxBytes)
	case c.auditFileBackups <= 0:
		return fmt.Errorf("-audit-file-backups: must be positive, got %d", c.auditFileBackups)
	}
	return nil
}

// errOTEL classifies a bad OTEL_* setting.
var errOTEL = errors.New("unsupported OpenTelemetry setting")

// observability is what serve runs beside the server: the process resource,
// the trace pipeline (nil provider when off) and the audit file.
type observability struct {
	resource   *resource.Resource
	provider   *sdktrace.TracerProvider
	propagator propagation.TextMapPropagator
	tracing    string // the exporter, for the start-up log
	audit      *server.AuditFile
	timeout    time.Duration
	cfg        obsConfig
}

// start builds the observability pipeline. getenv reads the OTEL_*
// selection variables; the OTLP exporters read their own OTEL_EXPORTER_OTLP_*
// settings (endpoint, headers, TLS, timeout) and the SDK its OTEL_TRACES_SAMPLER
// and OTEL_BSP_* ones from the process environment.
func (c *obsConfig) start(ctx context.Context, getenv func(string) string, log *slog.Logger) (*observability, error) {
	o := &observability{timeout: c.shutdownTimeout, tracing: "off", cfg: *c}
	// The SDK reports export failures through its process-wide handler;
	// send them to our log rather than the standard logger.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("opentelemetry", "err", err) }))
	var err error
	if o.resource, err = newResource(ctx); err != nil {
		return nil, err
	}
	if o.propagator, err = propagators(getenv); err != nil {
		return nil, err
	}
	kind, err := traceExporter(getenv)
	if err != nil {
		return nil, err
	}
	var exp sdktrace.SpanExporter
	switch kind {
	case "grpc":
		exp, err = otlptracegrpc.New(ctx)
	case "http/protobuf":
		exp, err = otlptracehttp.New(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	if exp != nil {
		o.provider = sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(o.resource))
		o.tracing = "otlp " + kind
	}
	if c.auditFile != "" {
		o.audit, err = server.OpenAuditFile(server.AuditFileConfig{
			Path: c.auditFile, MaxBytes: c.auditFileMaxBytes, Backups: c.auditFileBackups,
		}, log)
		if err != nil {
			o.close(log)
			return nil, fmt.Errorf("-audit-file: %w", err)
		}
	}
	return o, nil
}

// apply sets the server's telemetry fields.
func (o *observability) apply(cfg *server.Config) {
	if o.provider != nil { // a nil *TracerProvider in the interface would not mean "off"
		cfg.TracerProvider = o.provider
	}
	cfg.Propagator = o.propagator
	cfg.Resource = o.resource
	cfg.SpanCandidates = o.cfg.spanCandidates
	cfg.AuditFile = o.audit
}

// close flushes spans, bounded by the shutdown timeout (an unreachable
// collector would otherwise hold the exit for its whole retry period), and
// closes the audit file. Call it after the server's Shutdown.
func (o *observability) close(log *slog.Logger) {
	if o.provider != nil {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		defer cancel()
		if err := o.provider.Shutdown(ctx); err != nil {
			log.Warn("spans may be lost: trace exporter shutdown failed", "err", err)
		}
	}
	if o.audit != nil {
		if err := o.audit.Close(); err != nil {
			log.Warn("audit file close failed", "err", err)
		}
	}
}

// traceExporter picks the trace exporter from OTEL_SDK_DISABLED,
// OTEL_TRACES_EXPORTER and the OTLP protocol variables: "" (none),
// "grpc" or "http/protobuf". With OTEL_TRACES_EXPORTER unset, tracing is on
// only when an OTLP endpoint is set: none by default.
func traceExporter(getenv func(string) string) (string, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return "", nil
	}
	otlp := false
	if v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); v != "" {
		for _, e := range strings.Split(v, ",") {
			switch strings.TrimSpace(e) {
			case "otlp":
				otlp = true
			case "none":
			default:
				return "", fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%q: want otlp or none", errOTEL, v)
			}
		}
	} else {
		otlp = getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	}
	if !otlp {
		return "", nil
	}
	name, proto := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		name, proto = "OTEL_EXPORTER_OTLP_PROTOCOL", getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return "http/protobuf", nil
	case "grpc":
		return "grpc", nil
	}
	return "", fmt.Errorf("%w: %s=%q: want grpc or http/protobuf", errOTEL, name, proto)
}

// propagators reads OTEL_PROPAGATORS (default tracecontext,baggage).
func propagators(getenv func(string) string) (propagation.TextMapPropagator, error) {
	v := strings.TrimSpace(getenv("OTEL_PROPAGATORS"))
	if v == "" {
		v = "tracecontext,baggage"
	}
	var ps []propagation.TextMapPropagator
	for _, p := range strings.Split(v, ",") {
		switch strings.TrimSpace(p) {
		case "tracecontext":
			ps = append(ps, propagation.TraceContext{})
		case "baggage":
			ps = append(ps, propagation.Baggage{})
		case "none":
		default:
			return nil, fmt.Errorf("%w: OTEL_PROPAGATORS=%q: want tracecontext, baggage or none", errOTEL, v)
		}
	}
	return propagation.NewCompositeTextMapPropagator(ps...), nil
}

// newResource describes this process: the SDK's defaults, then
// service.name=switchyard and its version, then OTEL_RESOURCE_ATTRIBUTES and
// OTEL_SERVICE_NAME, which win. The semconv package must be the SDK's own
// version (v1.43.0 for v1.47.0), or merging with resource.Default() fails on
// conflicting schema URLs.
func newResource(ctx context.Context) (*resource.Resource, error) {
	ours, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName("switchyard"), semconv.ServiceVersion(serviceVersion())),
		resource.WithFromEnv(),
	)
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	res, err := resource.Merge(resource.Default(), ours)
	if err != nil {
		return nil, fmt.Errorf("telemetry resource: %w", err)
	}
	return res, nil
}

// serviceVersion is the version word of versionString.
func serviceVersion() string {
	if f := strings.Fields(versionString()); len(f) > 1 {
		return f[1]
	}
	return "unknown"
}
