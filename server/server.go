package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/switchyard-llm/switchyard/clients/vllm"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/gen/go/switchyard/v1/switchyardv1connect"
	"github.com/switchyard-llm/switchyard/scoring"
)

// Server serves the switchyard.v1 API for one scoring.Router on one port.
type Server struct {
	cfg    Config
	log    *slog.Logger
	router *scoring.Router
	audit  *AuditLog
	kv     *KVCounters
	zmq    *kvSources // subscriptions to engines' native vLLM event streams
	zmqErr error      // why zmq could not be built, reported by Serve
	tel    *telemetry // metrics, tracing, audit file
	live   *liveness  // replica heartbeats and health probes

	grpc       *grpc.Server
	http       *http.Server
	grpcHealth *health.Server
	httpHealth *grpchealth.StaticChecker

	mu    sync.Mutex
	split *splitListener
}

// serviceNames are the services reported by the health checkers.
var serviceNames = []string{
	switchyardv1connect.RouterServiceName,
	switchyardv1connect.KVEventServiceName,
	switchyardv1connect.ReplicaServiceName,
	switchyardv1connect.AuditServiceName,
}

// New builds a server around router. Serve starts it.
func New(router *scoring.Router, cfg Config) *Server {
	cfg = cfg.withDefaults()
	s := &Server{
		cfg:        cfg,
		log:        cfg.Logger,
		router:     router,
		audit:      NewAuditLog(cfg.AuditCapacity),
		kv:         &KVCounters{},
		grpcHealth: health.NewServer(),
		httpHealth: grpchealth.NewStaticChecker(serviceNames...),
	}
	s.tel = s.newTelemetry()
	lim := limits{cfg}
	rs := &routerService{router: router, audit: s.audit, limits: lim, tel: s.tel}
	ks := &kvService{router: router, limits: lim, counters: s.kv}
	s.zmq, s.zmqErr = newKVSources(&vllmSink{router: router, counters: s.kv, log: s.log}, s.log)
	if s.zmqErr == nil {
		s.kv.zmq = s.zmq.sub.Stats
	}
	replicas := &replicaService{router: router, limits: lim, kv: ks, sources: s.zmq}
	s.live = newLiveness(cfg.Liveness, router, s.log)
	s.live.onRestore = s.restartKVSource
	ps := livenessReplicas{replicaService: replicas, live: s.live}
	as := &auditService{audit: s.audit, limits: lim}

	opts := append(grpcErrors(),
		grpc.MaxRecvMsgSize(cfg.MaxMessageBytes),
		grpc.MaxSendMsgSize(cfg.MaxMessageBytes),
		grpc.ForceServerCodecV2(grpcPickCodec{}), // fast token ids (pickcodec.go)
	)
	s.grpc = grpc.NewServer(append(opts, s.tel.grpcOptions()...)...)
	v1.RegisterRouterServiceServer(s.grpc, grpcRouter{svc: rs})
	v1.RegisterKVEventServiceServer(s.grpc, grpcKV{svc: ks})
	v1.RegisterReplicaServiceServer(s.grpc, ps)
	v1.RegisterAuditServiceServer(s.grpc, grpcAudit{svc: as})
	healthpb.RegisterHealthServer(s.grpc, s.grpcHealth)
	reflection.Register(s.grpc)
	for _, name := range serviceNames {
		s.grpcHealth.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}

	copts := append([]connect.HandlerOption{connect.WithReadMaxBytes(cfg.MaxMessageBytes), connect.WithCodec(pickCodec{})}, s.tel.connect...)
	mux := http.NewServeMux()
	mux.Handle(switchyardv1connect.NewRouterServiceHandler(connectRouter{rs}, copts...))
	mux.Handle(switchyardv1connect.NewKVEventServiceHandler(connectKV{ks}, copts...))
	mux.Handle(switchyardv1connect.NewReplicaServiceHandler(ps, copts...))
	mux.Handle(switchyardv1connect.NewAuditServiceHandler(connectAudit{as}, copts...))
	mux.Handle(grpchealth.NewHandler(s.httpHealth, copts...))
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.Handle("GET /metrics", s.tel.metrics)
	if cfg.Pprof {
		registerPprof(mux)
	}

	protocols := new(http.Protocols)
	protocols.SetHTTP1(true)
	protocols.SetUnencryptedHTTP2(true)
	s.http = &http.Server{
		Handler:           mux,
		Protocols:         protocols,
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
	}
	return s
}

// Audit returns the server's decision log.
func (s *Server) Audit() *AuditLog { return s.audit }

// KVCounters returns the server's KV-event ingestion counters.
func (s *Server) KVCounters() *KVCounters { return s.kv }

// AddKVSource subscribes to an engine's native vLLM KV-event stream (ZMQ).
// Its replica should be registered: events of unregistered replicas are
// counted and dropped. Call it before or after Serve.
func (s *Server) AddKVSource(ep vllm.Endpoint) error {
	if s.zmqErr != nil {
		return s.zmqErr
	}
	return s.zmq.add(ep)
}

// Serve accepts connections on ln until Shutdown. It returns nil after a
// Shutdown, or the error that stopped it.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.split != nil {
		s.mu.Unlock()
		return errors.New("server: Serve called twice")
	}
	if s.zmqErr != nil {
		s.mu.Unlock()
		return s.zmqErr
	}
	s.split = newSplitListener(ln)
	s.mu.Unlock()
	s.zmq.start()
	defer s.zmq.stop()
	s.live.start()
	defer s.live.stopLoop()

	errs := make(chan error, 2)
	go func() { errs <- s.grpc.Serve(s.split.grpc) }()
	go func() { errs <- s.http.Serve(s.split.http) }()
	s.split.run() // returns when ln is closed
	var first error
	for range 2 {
		if err := <-errs; err != nil && !errors.Is(err, http.ErrServerClosed) &&
			!errors.Is(err, grpc.ErrServerStopped) && !errors.Is(err, net.ErrClosed) && first == nil {
			first = err
		}
	}
	return first
}

// Shutdown stops accepting connections, reports NOT_SERVING, and waits for
// in-flight RPCs to finish until ctx ends; then it cuts the rest (long-lived
// streams, for instance).
func (s *Server) Shutdown(ctx context.Context) error {
	s.grpcHealth.Shutdown()
	for _, name := range append([]string{""}, serviceNames...) {
		s.httpHealth.SetStatus(name, grpchealth.StatusNotServing)
	}
	s.mu.Lock()
	split := s.split
	s.mu.Unlock()
	if split != nil {
		split.root.Close()
	}
	done := make(chan struct{})
	go func() {
		s.grpc.GracefulStop()
		close(done)
	}()
	httpErr := s.http.Shutdown(ctx)
	select {
	case <-done:
	case <-ctx.Done():
		s.grpc.Stop()
		<-done
	}
	if httpErr != nil {
		s.http.Close()
		return fmt.Errorf("server: shutdown cut in-flight calls: %w", httpErr)
	}
	if ctx.Err() != nil {
		return fmt.Errorf("server: shutdown cut in-flight calls: %w", ctx.Err())
	}
	return nil
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	_, _ = w.Write([]byte("ok\n"))
}
