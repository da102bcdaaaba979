package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"
)

func parseServe(t *testing.T, args []string, env map[string]string) (*serveConfig, error) {
	t.Helper()
	var cfg serveConfig
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.flags(fs)
	err := loadSettings(fs, args, func(k string) string { return env[k] })
	return &cfg, err
}

func TestSettingsPrecedence(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		check func(t *testing.T, c *serveConfig)
	}{
		{"defaults", nil, nil, func(t *testing.T, c *serveConfig) {
			if c.listen != ":50051" || c.maxCandidates != 256 || c.policy != "token_load" || c.requestExpiry != 300*time.Second {
				t.Errorf("defaults = %+v", c)
			}
		}},
		{"file", []string{"--config", "testdata/serve.yaml"}, nil, func(t *testing.T, c *serveConfig) {
			if c.listen != "127.0.0.1:7000" || c.maxCandidates != 64 || c.blockSize != 32 || c.requestExpiry != 90*time.Second {
				t.Errorf("from file = %+v", c)
			}
			if c.modelPolicies["llama"] != "round_robin" || c.modelPolicies["qwen"] != "least_requests" {
				t.Errorf("model policies from file = %v", c.modelPolicies)
			}
		}},
		{"config from env", nil, map[string]string{"SWITCHYARD_CONFIG": "testdata/serve.yaml"}, func(t *testing.T, c *serveConfig) {
			if c.maxCandidates != 64 {
				t.Errorf("max candidates = %d, want 64 from the file named by SWITCHYARD_CONFIG", c.maxCandidates)
			}
		}},
		{"env beats file", []string{"--config", "testdata/serve.yaml"}, map[string]string{"SWITCHYARD_MAX_CANDIDATES": "16"}, func(t *testing.T, c *serveConfig) {
			if c.maxCandidates != 16 || c.blockSize != 32 {
				t.Errorf("max candidates %d block size %d, want 16 (env) and 32 (file)", c.maxCandidates, c.blockSize)
			}
		}},
		{"flag beats env", []string{"--config", "testdata/serve.yaml", "--max-candidates", "8"}, map[string]string{"SWITCHYARD_MAX_CANDIDATES": "16"}, func(t *testing.T, c *serveConfig) {
			if c.maxCandidates != 8 {
				t.Errorf("max candidates = %d, want 8 from the flag", c.maxCandidates)
			}
		}},
		{"vllm events", []string{"--vllm-events", "a=tcp://127.0.0.1:5557,replay=tcp://127.0.0.1:5558", "--vllm-events", "b=tcp://*:6000"}, nil, func(t *testing.T, c *serveConfig) {
			if len(c.vllmEvents) != 2 || c.vllmEvents[0].Replica != "a" || c.vllmEvents[0].Replay != "tcp://127.0.0.1:5558" || !c.vllmEvents[1].Bind {
				t.Errorf("vllm events = %+v", c.vllmEvents)
			}
		}},
		{"repeatable flag", []string{"--model-policy", "a=random", "--model-policy", "b=kv_affinity,c=token_load"}, nil, func(t *testing.T, c *serveConfig) {
			if len(c.modelPolicies) != 3 || c.modelPolicies["b"] != "kv_affinity" {
				t.Errorf("model policies = %v", c.modelPolicies)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseServe(t, tc.args, tc.env)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.validate(); err != nil {
				t.Fatal(err)
			}
			tc.check(t, c)
		})
	}
}

func TestSettingsErrors(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"missing file", []string{"--config", "testdata/none.yaml"}, nil, "none.yaml"},
		{"bad env", nil, map[string]string{"SWITCHYARD_SEED": "-3"}, "SWITCHYARD_SEED"},
		{"bad model policy", []string{"--model-policy", "llama"}, nil, "key=value"},
		{"bad vllm events", []string{"--vllm-events", "tcp://127.0.0.1:5557"}, nil, "vllm-events"},
		{"stray argument", []string{"extra"}, nil, "unexpected arguments"},
		{"bad log level", []string{"--log-level", "loud"}, nil, "log-level"},
		{"zero expiry", []string{"--request-expiry", "0s"}, nil, "request-expiry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parseServe(t, tc.args, tc.env)
			if err == nil {
				err = c.validate()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one naming %q", err, tc.want)
			}
		})
	}
}
