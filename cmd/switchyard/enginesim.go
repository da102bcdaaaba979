package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/switchyard-llm/switchyard/integration/enginesim"
	"github.com/switchyard-llm/switchyard/integration/sim"
)

// engineSimConfig is everything `switchyard engine-sim` can be told.
type engineSimConfig struct {
	model, replicaID, listen  string
	logLevel, logFormat       string
	blockSize, numBlocks      int
	maxBatchedTokens, maxSeqs int
	speedup                   float64
	seed                      uint64
	kvEndpoint, kvReplay      string
	topic, encoding           string
	bufferSteps               int
	router, advertise         string
	advertiseReplay           bool
	heartbeat                 time.Duration
}

func (c *engineSimConfig) flags(fs *flag.FlagSet) {
	def := sim.DefaultEngine()
	fs.StringVar(&c.model, "model", "sim", "model name served")
	fs.StringVar(&c.replicaID, "replica-id", "", "replica id to register with the router (default: the host name)")
	fs.StringVar(&c.listen, "listen", ":8000", "HTTP address: /v1/completions, /health, /metrics, /debug/cache")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	fs.StringVar(&c.logFormat, "log-format", "text", "log format: text or json")
	fs.IntVar(&c.blockSize, "block-size", 16, "KV block size in tokens (vLLM default 16)")
	fs.IntVar(&c.numBlocks, "num-blocks", 4096, "KV cache capacity in blocks")
	fs.IntVar(&c.maxBatchedTokens, "max-batched-tokens", def.MaxBatchedTokens, "token budget per engine step")
	fs.IntVar(&c.maxSeqs, "max-seqs", def.MaxSeqs, "most running sequences")
	fs.Float64Var(&c.speedup, "speedup", 1, "divide every step's simulated duration by this factor")
	fs.Uint64Var(&c.seed, "seed", 0, "engine hash seed (0 = new per process, as vLLM's)")
	fs.StringVar(&c.kvEndpoint, "kv-events", "tcp://*:5557", `KV-event PUB endpoint: bound when it contains "*", connected otherwise; "" = no events`)
	fs.StringVar(&c.kvReplay, "kv-replay", "tcp://*:5558", `KV-event replay ROUTER endpoint (bound); "" = no replay`)
	fs.StringVar(&c.topic, "kv-topic", "", "topic frame of every KV-event message")
	fs.StringVar(&c.encoding, "kv-encoding", string(enginesim.EncodingArray), "event layout: array (vLLM <= 0.23) or map (vLLM >= 0.26)")
	fs.IntVar(&c.bufferSteps, "kv-buffer-steps", enginesim.DefaultBufferSteps, "batches kept for replay")
	fs.StringVar(&c.router, "router", "", "switchyard gRPC address to register with and heartbeat (empty = do not register)")
	fs.StringVar(&c.advertise, "advertise-host", "", "host the router and data plane reach this engine at (default: the host name)")
	fs.BoolVar(&c.advertiseReplay, "advertise-replay", true, "register the replay endpoint (off: the router clears the replica on gaps instead of replaying)")
	fs.DurationVar(&c.heartbeat, "heartbeat", time.Second, "heartbeat period when registered")
}

// service builds the enginesim configuration.
func (c *engineSimConfig) service(log *slog.Logger) (enginesim.Config, error) {
	enc, err := enginesim.ParseEncoding(c.encoding)
	if err != nil {
		return enginesim.Config{}, err
	}
	host, _ := os.Hostname()
	cfg := enginesim.NewConfig()
	cfg.Model, cfg.ReplicaID, cfg.Listen, cfg.Encoding, cfg.Logger = c.model, c.replicaID, c.listen, enc, log
	if cfg.ReplicaID == "" {
		cfg.ReplicaID = host
	}
	cfg.Engine = enginesim.EngineConfig{
		Engine:  sim.EngineConfig{BlockSize: c.blockSize, NumBlocks: c.numBlocks, MaxBatchedTokens: c.maxBatchedTokens, MaxSeqs: c.maxSeqs},
		Speedup: c.speedup, Seed: c.seed,
	}
	if c.speedup <= 0 {
		return cfg, fmt.Errorf("-speedup: must be positive, got %g", c.speedup)
	}
	if c.kvEndpoint != "" {
		cfg.KVEvents = enginesim.PublisherConfig{Endpoint: c.kvEndpoint, ReplayEndpoint: c.kvReplay, Topic: c.topic, BufferSteps: c.bufferSteps}
	}
	cfg.RouterAddr, cfg.AdvertiseHost, cfg.AdvertiseReplay, cfg.Heartbeat = c.router, c.advertise, c.advertiseReplay, c.heartbeat
	if cfg.AdvertiseHost == "" {
		cfg.AdvertiseHost = host
	}
	return cfg, nil
}

func runEngineSim(ctx context.Context, args []string, _, stderr io.Writer) error {
	var c engineSimConfig
	fs := flag.NewFlagSet("engine-sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c.flags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchyard engine-sim [flags]\n\nRuns one simulated vLLM replica: OpenAI-style streaming completions, vLLM's KV events on ZMQ\n(PUB + replay ROUTER), vLLM metrics and /health. Flags can also be set as SWITCHYARD_<FLAG>.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := loadSettings(fs, args, os.Getenv); err != nil {
		return err
	}
	logs := serveConfig{logLevel: c.logLevel, logFormat: c.logFormat}
	if _, err := parseLevel(c.logLevel); err != nil {
		return err
	}
	if c.logFormat != "text" && c.logFormat != "json" {
		return fmt.Errorf("-log-format: want text or json, got %q", c.logFormat)
	}
	cfg, err := c.service(logs.logger(stderr))
	if err != nil {
		return err
	}
	svc, err := enginesim.Start(cfg)
	if err != nil {
		return err
	}
	log := cfg.Logger
	log.Info("engine-sim serving", "http", svc.HTTPAddr(), "kv_events", svc.Replica().GetKvEvents().GetEndpoint(),
		"kv_replay", svc.Replica().GetKvEvents().GetReplayEndpoint(), "model", cfg.Model, "replica", cfg.ReplicaID,
		"router", cfg.RouterAddr, "speedup", c.speedup, "version", versionString())
	select {
	case <-ctx.Done():
	case err = <-svc.Errors():
	}
	if cerr := svc.Close(); err == nil && cerr != nil {
		log.Debug("engine-sim close", "err", cerr)
	}
	return err
}
