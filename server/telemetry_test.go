package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/gen/go/switchyard/v1/switchyardv1connect"
	"github.com/switchyard-llm/switchyard/scoring"
)

// callerSpan is the trace context a data plane (a Ray or gateway span)
// would send: a fixed remote span, sampled or not.
func callerSpan(sampled bool) trace.SpanContext {
	cfg := trace.SpanContextConfig{
		TraceID: trace.TraceID{0x5e, 0x1e, 0xc7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13},
		SpanID:  trace.SpanID{0xca, 0x11, 0xe4, 1, 2, 3, 4, 5},
		Remote:  true,
	}
	if sampled {
		cfg.TraceFlags = trace.FlagsSampled
	}
	return trace.NewSpanContext(cfg)
}

// traceHeaders renders a span context as W3C trace context headers.
func traceHeaders(sc trace.SpanContext) http.Header {
	h := http.Header{}
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), sc)
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(h))
	return h
}

// pickOver calls PickReplica over one transport, sending the caller's trace
// context in the request headers.
type pickOver func(t *testing.T, l *liveServer, h http.Header, req *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error)

func pickGRPC(t *testing.T, l *liveServer, h http.Header, req *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for k, vs := range h {
		for _, v := range vs {
			ctx = metadata.AppendToOutgoingContext(ctx, k, v)
		}
	}
	return l.pick.PickReplica(ctx, req)
}

func pickConnectJSON(t *testing.T, l *liveServer, h http.Header, req *v1.PickReplicaRequest) (*v1.PickReplicaResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := switchyardv1connect.NewRouterServiceClient(http.DefaultClient, "http://"+l.addr, connect.WithProtoJSON())
	ctx, info := connect.NewClientContext(ctx)
	for k, vs := range h {
		for _, v := range vs {
			info.RequestHeader().Add(k, v)
		}
	}
	return c.PickReplica(ctx, req)
}

func spanAttrs(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := make(map[attribute.Key]attribute.Value, len(kvs))
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

func findSpan(spans tracetest.SpanStubs, name string) (tracetest.SpanStub, bool) {
	for _, s := range spans {
		if s.Name == name {
			return s, true
		}
	}
	return tracetest.SpanStub{}, false
}

const pickProcedure = "switchyard.v1.RouterService/PickReplica"

func TestDecisionSpanOverTransports(t *testing.T) {
	for _, tc := range []struct {
		name string
		call pickOver
	}{
		{"grpc", pickGRPC},
		{"connect-json", pickConnectJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			l := startLive(t, Config{TracerProvider: tp, SpanCandidates: 2}, "a", "b", "c")
			caller := callerSpan(true)

			resp, err := tc.call(t, l, traceHeaders(caller), tokenPick("span-"+tc.name, 1, 64))
			if err != nil {
				t.Fatal(err)
			}
			spans := exp.GetSpans()
			server, ok := findSpan(spans, pickProcedure)
			if !ok {
				t.Fatalf("no %s server span among %d spans", pickProcedure, len(spans))
			}
			decision, ok := findSpan(spans, decisionSpanName)
			if !ok {
				t.Fatalf("no decision span among %d spans", len(spans))
			}
			if server.SpanKind != trace.SpanKindServer {
				t.Errorf("server span kind = %v", server.SpanKind)
			}
			if server.SpanContext.TraceID() != caller.TraceID() || server.Parent.SpanID() != caller.SpanID() {
				t.Errorf("server span trace %s parent %s, want the caller's %s / %s",
					server.SpanContext.TraceID(), server.Parent.SpanID(), caller.TraceID(), caller.SpanID())
			}
			if decision.Parent.SpanID() != server.SpanContext.SpanID() || decision.SpanContext.TraceID() != caller.TraceID() {
				t.Errorf("decision span parent %s, want the server span %s", decision.Parent.SpanID(), server.SpanContext.SpanID())
			}

			got := spanAttrs(decision.Attributes)
			for key, want := range map[attribute.Key]attribute.Value{
				attrModel:          attribute.StringValue("m"),
				attrPolicy:         attribute.StringValue(resp.GetPolicy()),
				attrReplica:        attribute.StringValue(resp.GetReplicaId()),
				attrDecisionID:     attribute.StringValue(resp.GetDecisionId()),
				attrPromptTokens:   attribute.Int64Value(resp.GetPromptTokens()),
				attrCachedTokens:   attribute.Int64Value(resp.GetCachedTokens()),
				attrCandidateCount: attribute.IntValue(3),
				attrDryRun:         attribute.BoolValue(false),
				attrCandidatesCut:  attribute.IntValue(1),
			} {
				if got[key] != want {
					t.Errorf("decision span %s = %v, want %v", key, got[key].Emit(), want.Emit())
				}
			}

			if len(decision.Events) != 2 {
				t.Fatalf("decision span has %d events, want 2 (capped)", len(decision.Events))
			}
			for i, ev := range decision.Events {
				a := spanAttrs(ev.Attributes)
				if ev.Name != candidateEventName || a[attrRank].AsInt64() != int64(i+1) {
					t.Errorf("event %d: %s rank %d, want %s rank %d", i, ev.Name, a[attrRank].AsInt64(), candidateEventName, i+1)
				}
				want := resp.GetCandidates()
				var match *v1.CandidateScore
				for _, c := range want {
					if c.GetReplicaId() == a[attrReplica].AsString() {
						match = c
					}
				}
				if match == nil || match.GetRank() != int32(i+1) || match.GetCost() != a[attrCost].AsFloat64() ||
					match.GetActiveRequests() != a[attrActiveRequests].AsInt64() {
					t.Errorf("event %d terms %v do not match the response's candidate %v", i, a, match)
				}
			}
			if a := spanAttrs(decision.Events[0].Attributes); a[attrReplica].AsString() != resp.GetReplicaId() {
				t.Errorf("first candidate event is %s, want the chosen %s", a[attrReplica].AsString(), resp.GetReplicaId())
			}
		})
	}
}

func TestDecisionSpanSampling(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	l := startLive(t, Config{TracerProvider: tp}, "a")

	// An unsampled caller: the parent-based sampler records nothing.
	if _, err := pickGRPC(t, l, traceHeaders(callerSpan(false)), tokenPick("unsampled", 1, 32)); err != nil {
		t.Fatal(err)
	}
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("unsampled caller produced %d spans", n)
	}

	// A failed pick marks its decision span as an error.
	bad := tokenPick("bad-model", 1, 32)
	bad.Model = "nope"
	if _, err := pickGRPC(t, l, traceHeaders(callerSpan(true)), bad); err == nil {
		t.Fatal("pick of an unknown model succeeded")
	}
	decision, ok := findSpan(exp.GetSpans(), decisionSpanName)
	if !ok {
		t.Fatal("no decision span for the failed pick")
	}
	if decision.Status.Code != codes.Error {
		t.Errorf("failed decision span status = %v, want Error", decision.Status)
	}
	if got := spanAttrs(decision.Attributes)[attrModel].AsString(); got != "nope" {
		t.Errorf("failed decision span model = %q", got)
	}
}

func TestTracingOffStartsNoSpan(t *testing.T) {
	// With no TracerProvider a pick starts no span: the caller's span stays
	// the current one in the handler's context.
	router, err := scoring.NewRouter(scoring.Config{})
	if err != nil {
		t.Fatal(err)
	}
	tel := New(router, Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).tel
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), callerSpan(true))
	got, probe := tel.startPick(ctx)
	if probe.span != nil || !trace.SpanContextFromContext(got).Equal(callerSpan(true)) {
		t.Fatalf("tracing off: probe span %v, context span %v", probe.span, trace.SpanContextFromContext(got))
	}
	if len(tel.grpcOptions()) != 0 || len(tel.connect) != 0 {
		t.Fatal("tracing off installs RPC instrumentation")
	}
}
