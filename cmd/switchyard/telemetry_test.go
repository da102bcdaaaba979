package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/switchyard-llm/switchyard/server"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTraceExporterSelection(t *testing.T) {
	cases := []struct {
		name string
		env  map[string]string
		want string // "" = none
		bad  bool
	}{
		{"none by default", nil, "", false},
		{"endpoint turns otlp on, http by default", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "http/protobuf", false},
		{"traces endpoint too", map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, "http/protobuf", false},
		{"explicit otlp grpc", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "grpc", false},
		{"traces protocol wins", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, "http/protobuf", false},
		{"none despite endpoint", map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, "", false},
		{"sdk disabled", map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, "", false},
		{"unsupported exporter", map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, "", true},
		{"unsupported protocol", map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := traceExporter(envOf(tc.env))
			if tc.bad {
				if !errors.Is(err, errOTEL) {
					t.Fatalf("err = %v, want errOTEL", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestPropagators(t *testing.T) {
	for _, tc := range []struct {
		env    string
		fields []string
		bad    bool
	}{
		{"", []string{"traceparent", "tracestate", "baggage"}, false},
		{"tracecontext", []string{"traceparent", "tracestate"}, false},
		{"none", nil, false},
		{"b3", nil, true},
	} {
		p, err := propagators(envOf(map[string]string{"OTEL_PROPAGATORS": tc.env}))
		if tc.bad {
			if !errors.Is(err, errOTEL) {
				t.Errorf("%q: err = %v, want errOTEL", tc.env, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.env, err)
			continue
		}
		got := p.Fields() // a set: its order is not defined
		slices.Sort(got)
		slices.Sort(tc.fields)
		if !slices.Equal(got, tc.fields) {
			t.Errorf("%q: fields %v, want %v", tc.env, got, tc.fields)
		}
	}
}

func TestNewResource(t *testing.T) {
	for _, tc := range []struct {
		name, serviceName, attrs string
		want                     map[string]string
	}{
		{"defaults", "", "", map[string]string{"service.name": "switchyard", "telemetry.sdk.language": "go"}},
		{"environment wins", "edge-router", "deployment.environment.name=prod,service.name=ignored",
			map[string]string{"service.name": "edge-router", "deployment.environment.name": "prod"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("OTEL_SERVICE_NAME", tc.serviceName)
			t.Setenv("OTEL_RESOURCE_ATTRIBUTES", tc.attrs)
			res, err := newResource(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.SchemaURL() != semconv.SchemaURL {
				t.Errorf("schema URL %q, want %q", res.SchemaURL(), semconv.SchemaURL)
			}
			got := map[string]string{}
			for _, kv := range res.Attributes() {
				got[string(kv.Key)] = kv.Value.Emit()
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
			if got["service.version"] == "" {
				t.Error("no service.version")
			}
			// The pitfall: a semconv version other than the SDK's fails here.
			if _, err := resource.Merge(resource.Default(), res); err != nil {
				t.Errorf("merging with resource.Default(): %v", err)
			}
		})
	}
}

func TestObservabilityOffAndAuditFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	c := obsConfig{spanCandidates: 7, shutdownTimeout: time.Second, auditFile: path, auditFileMaxBytes: 1 << 20, auditFileBackups: 2}
	if err := c.validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(&bytes.Buffer{}, nil))
	o, err := c.start(context.Background(), envOf(nil), log)
	if err != nil {
		t.Fatal(err)
	}
	var cfg server.Config
	o.apply(&cfg)
	if cfg.TracerProvider != nil || o.tracing != "off" {
		t.Errorf("tracing is on without OTEL_* settings: %v, %q", cfg.TracerProvider, o.tracing)
	}
	if cfg.AuditFile == nil || cfg.SpanCandidates != 7 || cfg.Resource == nil || cfg.Propagator == nil {
		t.Errorf("server config not filled: %+v", cfg)
	}
	o.close(log)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("audit file: %v", err)
	}

	bad := c
	bad.auditFile = t.TempDir() // a directory
	if _, err := bad.start(context.Background(), envOf(nil), log); err == nil || !strings.Contains(err.Error(), "-audit-file") {
		t.Errorf("audit file on a directory: err = %v", err)
	}
	for _, mutate := range []func(*obsConfig){
		func(c *obsConfig) { c.spanCandidates = 0 },
		func(c *obsConfig) { c.shutdownTimeout = 0 },
		func(c *obsConfig) { c.auditFileMaxBytes = -1 },
		func(c *obsConfig) { c.auditFileBackups = 0 },
	} {
		b := c
		mutate(&b)
		if b.validate() == nil {
			t.Errorf("invalid %+v accepted", b)
		}
	}
}

// With a collector that never answers, shutting the exporter down must end
// at the configured timeout and say so, not wait for the exporter's own
// timeout and retries.
func TestObservabilityShutdownIsBounded(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// A black hole: connections are accepted and never answered.
	var held []net.Conn
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-accepted
		for _, c := range held {
			c.Close()
		}
	})
	dead := ln.Addr().String()
	for _, proto := range []string{"grpc", "http/protobuf"} {
		t.Run(proto, func(t *testing.T) {
			t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+dead)
			t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			var logs syncBuffer // the batch processor may still log after its shutdown gave up
			log := slog.New(slog.NewTextHandler(&logs, nil))
			c := obsConfig{spanCandidates: 1, shutdownTimeout: 200 * time.Millisecond, auditFileMaxBytes: 1, auditFileBackups: 1}
			o, err := c.start(context.Background(), os.Getenv, log)
			if err != nil {
				t.Fatal(err)
			}
			if o.provider == nil || o.tracing != "otlp "+proto {
				t.Fatalf("tracing = %q, want otlp %s", o.tracing, proto)
			}
			_, span := o.provider.Tracer("test").Start(context.Background(), "lost")
			span.End()
			o.close(log)
			if !strings.Contains(logs.String(), "trace exporter shutdown failed") {
				t.Errorf("shutdown against a dead collector reported nothing: %q", logs.String())
			}
		})
	}
}

func TestObservabilitySettings(t *testing.T) {
	c, err := parseServe(t, []string{"-trace-candidates", "3"}, map[string]string{
		"SWITCHYARD_AUDIT_FILE": "/var/log/switchyard.jsonl", "SWITCHYARD_AUDIT_FILE_BACKUPS": "9",
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.obs.spanCandidates != 3 || c.obs.auditFile != "/var/log/switchyard.jsonl" || c.obs.auditFileBackups != 9 ||
		c.obs.auditFileMaxBytes != server.DefaultAuditFileMaxBytes || c.obs.shutdownTimeout != 5*time.Second {
		t.Errorf("obs settings = %+v", c.obs)
	}
}
