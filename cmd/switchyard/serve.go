package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"time"

	"github.com/switchyard-llm/switchyard/index"
	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// serveConfig is everything `switchyard serve` can be told. Its defaults
// run a complete router with in-memory state and no external service.
type serveConfig struct {
	config          string
	listen          string
	logLevel        string
	logFormat       string
	shutdownTimeout time.Duration

	policy          string
	modelPolicies   keyValues
	blockSize       int
	textChunkBytes  int
	requestExpiry   time.Duration
	outputEstimate  bool
	seed            uint64
	indexMaxEntries int
	predictedTTL    time.Duration

	maxPromptTokens int
	maxCandidates   int
	maxBatchEvents  int
	maxMessageBytes int
	auditCapacity   int
	pprof           bool

	vllmEvents vllmEndpoints

	liveness livenessFlags
	demo     demoFlags
	obs      obsConfig
}

func (c *serveConfig) flags(fs *flag.FlagSet) {
	fs.StringVar(&c.config, "config", "", "YAML config file; its keys are these flags' names (env SWITCHYARD_CONFIG)")
	fs.StringVar(&c.listen, "listen", ":50051", "address to serve gRPC, Connect, gRPC-Web and JSON on (one port)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.DurationVar(&c.shutdownTimeout, "shutdown-timeout", 30*time.Second, "on SIGTERM, how long in-flight RPCs may take to finish")

	fs.StringVar(&c.policy, "policy", "token_load", "default routing policy")
	c.modelPolicies = keyValues{}
	fs.Var(c.modelPolicies, "model-policy", "per-model default policy, model=policy (repeatable, or comma-separated)")
	fs.IntVar(&c.blockSize, "block-size", index.DefaultBlockSize, "router KV block size in tokens (engines' block size must be a multiple)")
	fs.IntVar(&c.textChunkBytes, "text-chunk-bytes", index.DefaultTextChunkBytes, "approximate text mode: bytes per pseudo-block")
	fs.DurationVar(&c.requestExpiry, "request-expiry", 300*time.Second, "free a request's load when no lifecycle event came for this long")
	fs.BoolVar(&c.outputEstimate, "output-estimate", true, "learn per-model and per-session output lengths from done events")
	fs.Uint64Var(&c.seed, "seed", 0, "seed for randomised policies (0 = time-based)")
	fs.IntVar(&c.indexMaxEntries, "index-max-entries", 4<<20, "cap on KV index entries per model; least recently used beyond it are dropped (counted)")
	fs.DurationVar(&c.predictedTTL, "predicted-ttl", 2*time.Second, "lifetime of predicted index entries recorded after a decision")

	fs.IntVar(&c.maxPromptTokens, "max-prompt-tokens", server.DefaultMaxPromptTokens, "largest prompt accepted, in tokens")
	fs.IntVar(&c.maxCandidates, "max-candidates", server.DefaultMaxCandidates, "most candidates one PickReplica may list")
	fs.IntVar(&c.maxBatchEvents, "max-batch-events", server.DefaultMaxBatchEvents, "most events in one lifecycle or KV batch")
	fs.IntVar(&c.maxMessageBytes, "max-message-bytes", server.DefaultMaxMessageBytes, "largest incoming message, in bytes")
	fs.IntVar(&c.auditCapacity, "audit-capacity", server.DefaultAuditCapacity, "recent decisions kept for the audit API")
	fs.BoolVar(&c.pprof, "pprof", false, "serve Go profiles (CPU, heap, trace, ...) under /debug/pprof/ on the same port")
	c.liveness.flags(fs)
	c.demo.flags(fs)
	c.obs.flags(fs)
	fs.Var(&c.vllmEvents, "vllm-events", "subscribe to a vLLM engine's ZMQ KV events (repeatable): replica=tcp://host:5557[,replay=tcp://host:5558][,topic=T][,bind][,ranks=N]")
}

func (c *serveConfig) validate() error {
	if err := errors.Join(c.liveness.validate(), c.demo.validate(), c.obs.validate()); err != nil {
		return err
	}
	if _, err := parseLevel(c.logLevel); err != nil {
		return err
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return fmt.Errorf("-log-format: want text or json, got %q", c.logFormat)
	}
	for name, v := range map[string]int{
		"block-size": c.blockSize, "text-chunk-bytes": c.textChunkBytes, "index-max-entries": c.indexMaxEntries,
		"max-prompt-tokens": c.maxPromptTokens, "max-candidates": c.maxCandidates, "max-batch-events": c.maxBatchEvents,
		"max-message-bytes": c.maxMessageBytes, "audit-capacity": c.auditCapacity,
	} {
		if v <= 0 {
			return fmt.Errorf("-%s: must be positive, got %d", name, v)
		}
	}
	for name, d := range map[string]time.Duration{
		"shutdown-timeout": c.shutdownTimeout, "request-expiry": c.requestExpiry, "predicted-ttl": c.predictedTTL,
	} {
		if d <= 0 {
			return fmt.Errorf("-%s: must be positive, got %s", name, d)
		}
	}
	return nil
}

func parseLevel(s string) (slog.Level, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("-log-level: want debug, info, warn or error, got %q", s)
	}
	return l, nil
}

func (c *serveConfig) logger(w io.Writer) *slog.Logger {
	level, _ := parseLevel(c.logLevel)
	opts := &slog.HandlerOptions{Level: level}
	if c.logFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

func (c *serveConfig) router() (*scoring.Router, error) {
	outputEstimate := c.outputEstimate
	return scoring.NewRouter(scoring.Config{
		DefaultPolicy:  c.policy,
		ModelPolicies:  c.modelPolicies,
		BlockSize:      c.blockSize,
		TextChunkBytes: c.textChunkBytes,
		Index:          index.Config{MaxEntries: c.indexMaxEntries, PredictedTTL: c.predictedTTL},
		RequestExpiry:  c.requestExpiry,
		OutputEstimate: &outputEstimate,
		Seed:           c.seed,
	})
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg.flags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchyard serve [flags]\n\nEvery flag can also be set as SWITCHYARD_<FLAG> (e.g. SWITCHYARD_LISTEN) or as a key of the -config file.\nPrecedence: flag > environment > config file > default.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := loadSettings(fs, args, os.Getenv); err != nil {
		return err
	}
	if err := cfg.validate(); err != nil {
		return err
	}
	log := cfg.logger(stderr)
	obs, err := cfg.obs.start(ctx, os.Getenv, log)
	if err != nil {
		return err
	}
	defer obs.close(log)

	router, err := cfg.router()
	if err != nil {
		return err
	}
	defer router.Close()
	scfg := server.Config{
		MaxPromptTokens: cfg.maxPromptTokens,
		MaxCandidates:   cfg.maxCandidates,
		MaxBatchEvents:  cfg.maxBatchEvents,
		MaxMessageBytes: cfg.maxMessageBytes,
		AuditCapacity:   cfg.auditCapacity,
		Logger:          log,
		Liveness:        cfg.liveness.config(),
		Pprof:           cfg.pprof,
	}
	obs.apply(&scfg)
	srv := server.New(router, scfg)
	for _, ep := range cfg.vllmEvents {
		if err := srv.AddKVSource(ep); err != nil {
			return fmt.Errorf("-vllm-events %s: %w", ep, err)
		}
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		return err
	}
	effective := []any{"addr", ln.Addr().String(), "version", versionString(), "tracing", obs.tracing}
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name != "listen" {
			effective = append(effective, strings.ReplaceAll(f.Name, "-", "_"), f.Value.String())
		}
	})
	log.Info("switchyard serving", effective...)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	if cfg.demo.enabled {
		stopDemo, err := startDemo(ctx, ln.Addr().String(), cfg.demo, stdout, log)
		if err != nil {
			return err
		}
		defer stopDemo()
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		log.Warn("shutdown was not clean", "err", err)
	}
	if err := <-served; err != nil {
		return err
	}
	log.Info("stopped")
	return nil
}
