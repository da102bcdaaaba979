package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A short smoke run of `switchyard bench` against a router in this process: the text summary
// and the JSON file must report the picks, lifecycle and KV events it drove.
func TestBenchSmoke(t *testing.T) {
	addr, _ := auditServer(t)
	out := filepath.Join(t.TempDir(), "bench.json")
	code, stdout, stderr := runCLI("bench", "-addr", addr, "-model", "smoke", "-replicas", "2",
		"-rate", "300", "-warmup", "100ms", "-duration", "300ms", "-prompt-tokens", "256", "-shared-tokens", "32",
		"-prompts", "8", "-ttft", "5ms", "-decode", "10ms", "-kv-rate", "2000", "-preload-blocks", "500",
		"-server-pid", "-1", "-json", out, "-quiet")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range []string{"picks ", "latency ", "lifecycle ", "kv "} {
		if !strings.Contains(stdout, s) {
			t.Errorf("summary lacks %q:\n%s", s, stdout)
		}
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Picks struct {
			OK, Errors int64
			Latency    struct {
				P99 float64 `json:"p99_us"`
			} `json:"latency"`
		} `json:"picks"`
		Lifecycle struct{ Applied int64 } `json:"lifecycle"`
		KV        struct {
			Applied int64 `json:"events_applied"`
		} `json:"kv"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Picks.OK == 0 || res.Picks.Errors != 0 || res.Picks.Latency.P99 <= 0 || res.Lifecycle.Applied == 0 || res.KV.Applied == 0 {
		t.Fatalf("result %+v\n%s", res, b)
	}
}

func TestBenchUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "-mode", "sometimes"},
		{"bench", "-replicas", "0"},
		{"bench", "extra"},
	} {
		if code, _, stderr := runCLI(args...); code != 2 || !strings.Contains(stderr, "usage: switchyard bench") {
			t.Errorf("%v: exit %d\n%s", args, code, stderr)
		}
	}
}
