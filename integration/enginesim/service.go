package enginesim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// Config is one engine-sim process: the engine, its HTTP API, its KV-event sockets and,
// optionally, its registration with a router.
type Config struct {
	// Model is the served model name (required).
	Model string
	// ReplicaID names the replica when registering (required with RouterAddr).
	ReplicaID string
	// Listen is the HTTP address, e.g. ":8000" or "127.0.0.1:0".
	Listen string
	// Engine configures the simulated engine.
	Engine EngineConfig
	// KVEvents configures the KV-event sockets; an empty Endpoint publishes none.
	KVEvents PublisherConfig
	// Encoding is the event layout (EncodingArray when empty).
	Encoding Encoding
	// DataParallelRank is sent in every batch when >= 0; -1 omits it.
	DataParallelRank int
	// RouterAddr, when set, is the router's gRPC address to register with and heartbeat.
	RouterAddr string
	// AdvertiseHost is the host name or address the router and data plane reach this process
	// at (its HTTP port, health URL and KV-event ports are combined with it). "" = 127.0.0.1.
	AdvertiseHost string
	// AdvertiseReplay registers the replay endpoint with the router (default true via
	// NewConfig). Off, the router cannot replay: gaps and returns clear the replica instead.
	AdvertiseReplay bool
	// Heartbeat is the heartbeat period; 0 = 1s.
	Heartbeat time.Duration
	// Logger receives the process's logs; nil = slog.Default().
	Logger *slog.Logger
}

// NewConfig returns a Config with the defaults of `switchyard engine-sim`.
func NewConfig() Config {
	return Config{Listen: ":8000", Encoding: EncodingArray, DataParallelRank: -1, AdvertiseReplay: true}
}

// Service is a running engine-sim.
type Service struct {
	cfg      Config
	Engine   *Engine
	Pub      *Publisher // nil without KV events
	httpAddr string
	http     *http.Server
	cancel   context.CancelFunc
	wg       sync.WaitGroup
	errs     chan error
}

// Start opens the sockets and starts the engine, the HTTP API and the registration loop.
// Close stops them.
func Start(cfg Config) (*Service, error) {
	if cfg.Model == "" {
		return nil, fmt.Errorf("%w: model is required", ErrInvalid)
	}
	if cfg.RouterAddr != "" && cfg.ReplicaID == "" {
		return nil, fmt.Errorf("%w: registering with a router needs a replica id", ErrInvalid)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Encoding == "" {
		cfg.Encoding = EncodingArray
	}
	cfg.Engine.Logger = cfg.Logger
	cfg.KVEvents.Logger = cfg.Logger
	s := &Service{cfg: cfg, errs: make(chan error, 2)}
	var enc *Encoder
	if cfg.KVEvents.Endpoint != "" {
		var err error
		if enc, err = NewEncoder(cfg.Encoding, cfg.DataParallelRank); err != nil {
			return nil, err
		}
		if s.Pub, err = NewPublisher(cfg.KVEvents); err != nil {
			return nil, err
		}
	}
	eng, err := NewEngine(cfg.Engine, s.Pub, enc)
	if err != nil {
		s.closePub()
		return nil, err
	}
	s.Engine = eng
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		s.closePub()
		return nil, fmt.Errorf("engine-sim: listen %s: %w", cfg.Listen, err)
	}
	s.httpAddr = ln.Addr().String()
	s.http = &http.Server{Handler: NewHandler(eng, cfg.Model), ReadHeaderTimeout: 10 * time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Go(func() { _ = eng.Run(ctx) })
	s.wg.Go(func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.errs <- err
		}
	})
	if cfg.RouterAddr != "" {
		rc := RegistrationConfig{Router: cfg.RouterAddr, Replica: s.Replica(), Interval: cfg.Heartbeat, Logger: cfg.Logger}
		s.wg.Go(func() {
			if err := RunRegistration(ctx, rc); err != nil {
				s.errs <- err
			}
		})
	}
	return s, nil
}

// HTTPAddr is the bound HTTP address.
func (s *Service) HTTPAddr() string { return s.httpAddr }

// Errors delivers a failure of the HTTP server or the registration loop.
func (s *Service) Errors() <-chan error { return s.errs }

// advertised joins the advertised host with the port of a bound address.
func (s *Service) advertised(addr string) string {
	host := s.cfg.AdvertiseHost
	if host == "" {
		host = "127.0.0.1"
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return ""
	}
	return net.JoinHostPort(host, port)
}

// Replica is the registration this process announces: its data-plane address, health URL,
// capacity and, with KV events, the endpoints the router subscribes to.
func (s *Service) Replica() *v1.Replica {
	ec := s.Engine.cfg.Engine
	r := &v1.Replica{
		Id: s.cfg.ReplicaID, Model: s.cfg.Model,
		Address:   "http://" + s.advertised(s.httpAddr),
		HealthUrl: "http://" + s.advertised(s.httpAddr) + "/health",
		Capacity:  &v1.ReplicaCapacity{KvBlocks: int64(ec.NumBlocks), MaxBatchedTokens: int64(ec.MaxBatchedTokens)},
		Labels:    map[string]string{"engine": "switchyard-engine-sim", "block_size": strconv.Itoa(ec.BlockSize)},
	}
	if s.Pub == nil {
		return r
	}
	kv := &v1.KVEventSource{Topic: s.cfg.KVEvents.Topic}
	if a := s.Pub.LiveAddr(); a != "" {
		kv.Endpoint = "tcp://" + s.advertised(trimScheme(a))
	} else {
		// The engine connects to a router-side listener: the router binds that port.
		kv.Endpoint, kv.Bind = bindAll(s.cfg.KVEvents.Endpoint), true
	}
	if a := s.Pub.ReplayAddr(); a != "" && s.cfg.AdvertiseReplay {
		kv.ReplayEndpoint = "tcp://" + s.advertised(trimScheme(a))
	}
	r.KvEvents = kv
	return r
}

func trimScheme(a string) string {
	if _, rest, ok := strings.Cut(a, "://"); ok {
		return rest
	}
	return a
}

// bindAll turns "tcp://host:port" into "tcp://*:port", the listener for an endpoint.
func bindAll(ep string) string {
	scheme, rest, _ := strings.Cut(ep, "://")
	if _, port, err := net.SplitHostPort(rest); err == nil {
		return scheme + "://*:" + port
	}
	return ep
}

// Close stops the HTTP server (cutting open streams), the engine and the registration loop,
// and closes the sockets.
func (s *Service) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s.cancel()
	err := s.http.Shutdown(ctx)
	if err != nil {
		err = s.http.Close()
	}
	s.wg.Wait()
	s.closePub()
	return err
}

func (s *Service) closePub() {
	if s.Pub != nil {
		_ = s.Pub.Close()
	}
}
