package server

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// benchTracing is one tracing setup of the PickReplica benchmark.
type benchTracing struct {
	name    string
	tp      func() *sdktrace.TracerProvider // nil = tracing off
	blocked bool                            // add a decision watcher that never reads
	bare    bool                            // no telemetry at all, not even metrics (handler only)
}

var benchTracings = []benchTracing{
	{name: "off"},
	{name: "no_telemetry", bare: true},
	{name: "off_blocked_watcher", blocked: true},
	{name: "unsampled", tp: func() *sdktrace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.NeverSample()))
	}},
	{name: "sampled_noop_exporter", tp: func() *sdktrace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	}},
	{name: "sampled_batch_exporter", tp: func() *sdktrace.TracerProvider {
		return sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()), sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	}},
}

// benchReplicas is the fleet size: every candidate becomes a span event.
var benchReplicas = []string{"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7"}

// BenchmarkPickReplica measures PickReplica with tracing off (metrics on, as
// always), with no telemetry at all (handler only), with a watcher that
// never reads, with tracing on but unsampled, on with 100% sampling to a
// no-op exporter (synchronous), and on with a batching exporter; in the
// handler alone and over a loopback gRPC connection.
//
// Each setup runs against its own floor: a second server with tracing off,
// picked from in alternating chunks within the same benchmark, so machine
// noise hits both alike. ns/op and allocs/op are the setup's; floor_ns/op is
// the floor's and x_off the ratio (the "off" setup's x_off shows the noise).
func BenchmarkPickReplica(b *testing.B) {
	b.Run("handler", func(b *testing.B) { benchPickModes(b, benchHandler) })
	b.Run("grpc", func(b *testing.B) { benchPickModes(b, benchGRPC) })
}

// benchSetup builds a server with cfg and returns how to call its PickReplica.
type benchSetup func(b *testing.B, cfg Config, bare bool) (pick func(*v1.PickReplicaRequest) error, srv *Server)

// benchChunk is how many picks run on one side before switching.
const benchChunk = 256

func benchPickModes(b *testing.B, setup benchSetup) {
	for _, mode := range benchTracings {
		b.Run(mode.name, func(b *testing.B) {
			cfg := Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			floorPick, floorSrv := setup(b, cfg, false)
			if mode.tp != nil {
				tp := mode.tp()
				b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
				cfg.TracerProvider = tp
			}
			pick, srv := setup(b, cfg, mode.bare)
			if mode.blocked {
				_, cancel := srv.audit.watch(DecisionFilter{})
				b.Cleanup(cancel)
			}
			req := tokenPick("", 1, 256)
			done := make([]scoring.LifecycleEvent, 0, benchChunk)
			var floor time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += benchChunk {
				n := min(benchChunk, b.N-i)
				b.StopTimer()
				done = done[:0]
				for j := range n {
					req.RequestId = "bench-" + strconv.Itoa(i+j)
					done = append(done, scoring.LifecycleEvent{RequestID: req.RequestId, Kind: scoring.EventDone, Status: "ok"})
				}
				start := time.Now()
				for j := range n {
					req.RequestId = done[j].RequestID
					if err := floorPick(req); err != nil {
						b.Fatal(err)
					}
				}
				floor += time.Since(start)
				b.StartTimer()
				for j := range n {
					req.RequestId = done[j].RequestID
					if err := pick(req); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				// Free the chunk's requests so the routers stay the same size.
				floorSrv.router.ApplyLifecycle(context.Background(), done)
				srv.router.ApplyLifecycle(context.Background(), done)
				b.StartTimer()
			}
			b.StopTimer()
			floorPerOp := float64(floor.Nanoseconds()) / float64(b.N)
			b.ReportMetric(floorPerOp, "floor_ns/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/floorPerOp, "x_off")
		})
	}
}

func benchHandler(b *testing.B, cfg Config, bare bool) (func(*v1.PickReplicaRequest) error, *Server) {
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, id := range benchReplicas {
		if _, err := router.Register(context.Background(), scoring.Replica{ID: id, Model: "m"}); err != nil {
			b.Fatal(err)
		}
	}
	srv := New(router, cfg)
	rs := &routerService{router: router, audit: srv.audit, limits: limits{srv.cfg}, tel: srv.tel}
	if bare {
		rs.tel = nil
	}
	ctx := context.Background()
	return func(req *v1.PickReplicaRequest) error {
		_, err := rs.PickReplica(ctx, req)
		return err
	}, srv
}

func benchGRPC(b *testing.B, cfg Config, bare bool) (func(*v1.PickReplicaRequest) error, *Server) {
	if bare {
		b.Skip("metrics are always on in a served server")
	}
	l := startLive(b, cfg, benchReplicas...)
	ctx := context.Background()
	return func(req *v1.PickReplicaRequest) error {
		_, err := l.pick.PickReplica(ctx, req)
		return err
	}, l.srv
}
