package bench

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// startRouter serves a router on a loopback port for one test.
func startRouter(t *testing.T) (*scoring.Router, string) {
	t.Helper()
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := server.New(router, server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	})
	return router, ln.Addr().String()
}

// A short run of every kind of traffic against a real server: every figure the report gives
// must agree with what the server and the client's own streams accounted for.
func TestRunAgainstServer(t *testing.T) {
	cases := []struct {
		name string
		edit func(*Config)
	}{
		{"grpc fixed pre-encoded", func(c *Config) { c.Mode, c.Rate = ModeFixed, 400 }},
		{"connect closed encoded", func(c *Config) {
			c.Mode, c.Workers, c.Protocol, c.Premarshal = ModeClosed, 4, ProtocolConnect, false
		}},
		{"grpc closed encoded", func(c *Config) { c.Mode, c.Workers, c.Premarshal = ModeClosed, 4, false }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			router, addr := startRouter(t)
			cfg := DefaultConfig()
			cfg.Addr, cfg.Model, cfg.Replicas = addr, "m", 3
			cfg.Warmup, cfg.Duration = 100*time.Millisecond, 400*time.Millisecond
			cfg.Prompts = PromptConfig{Tokens: 256, SharedTokens: 64, Pool: 8, Seed: 1}
			cfg.TTFT, cfg.Decode = 5*time.Millisecond, 20*time.Millisecond
			cfg.KVRate, cfg.PreloadBlocks = 5000, 2000
			cfg.ServerPID = os.Getpid() // the router runs in this process
			tc.edit(&cfg)
			res, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			p, l, k := res.Picks, res.Lifecycle, res.KV
			if p.OK == 0 || p.Errors != 0 || p.Sent != p.OK || p.Latency.Count != uint64(p.OK) || p.Service.Count != uint64(p.OK) {
				t.Errorf("picks %+v", p)
			}
			if l == nil || l.Reported == 0 || l.Delivered != l.Reported || l.Applied != l.Delivered || l.Dropped != 0 || l.Stale != 0 {
				t.Errorf("lifecycle %+v", l)
			}
			if k.BlockEvents == 0 || k.Events == 0 || k.Applied != k.Events || k.Rejected != 0 || k.Failures != 0 {
				t.Errorf("kv %+v", k)
			}
			if res.Server == nil || res.Server.Error != "" || res.Server.PID != os.Getpid() || res.Client == nil {
				t.Errorf("processes: server %+v client %+v", res.Server, res.Client)
			}
			if len(router.Replicas("m")) != 0 {
				t.Error("replicas left registered after the run")
			}
			var b strings.Builder
			if err := res.WriteText(&b); err != nil || !strings.Contains(b.String(), "picks ") {
				t.Errorf("text report: %v\n%s", err, b.String())
			}
		})
	}
}

func TestRunSetupErrors(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Replicas = 0
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrConfig) {
		t.Errorf("bad config: %v", err)
	}
	_, addr := startRouter(t)
	cfg = DefaultConfig()
	cfg.Addr, cfg.Model = addr, strings.Repeat("m", 300) // longer than the server's id limit
	cfg.Duration = 100 * time.Millisecond
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrSetup) {
		t.Errorf("refused registration: %v", err)
	}
}
