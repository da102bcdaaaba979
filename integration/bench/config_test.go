package bench

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"
)

func TestValidateNamesTheField(t *testing.T) {
	cases := []struct {
		field string
		edit  func(*Config)
	}{
		{"addr", func(c *Config) { c.Addr = "" }},
		{"protocol", func(c *Config) { c.Protocol = "http" }},
		{"model", func(c *Config) { c.Model = "" }},
		{"replicas", func(c *Config) { c.Replicas = 0 }},
		{"mode", func(c *Config) { c.Mode = "burst" }},
		{"rate", func(c *Config) { c.Rate = 0 }},
		{"workers", func(c *Config) { c.Workers = 0 }},
		{"warmup", func(c *Config) { c.Warmup = -time.Second }},
		{"duration", func(c *Config) { c.Duration = 0 }},
		{"timeout", func(c *Config) { c.Timeout = 0 }},
		{"prompts", func(c *Config) { c.Prompts.Pool = 0 }},
		{"prompt-tokens", func(c *Config) { c.Prompts.Tokens = 0 }},
		{"shared-tokens", func(c *Config) { c.Prompts.SharedTokens = c.Prompts.Tokens + 1 }},
		{"ttft", func(c *Config) { c.TTFT = -1 }},
		{"kv-rate", func(c *Config) { c.KVRate = -5 }},
		{"preload-blocks", func(c *Config) { c.PreloadBlocks = -1 }},
		{"server-pid", func(c *Config) { c.ServerPID = -2 }},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: %v", tc.field, err)
		}
	}
	ok := DefaultConfig()
	ok.Mode, ok.Rate = ModeClosed, 0 // the rate only matters in fixed mode
	ok.Prompts = PromptConfig{Workload: "x.jsonl", Pool: 1}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
}

func TestRegisterFlags(t *testing.T) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var c Config
	c.RegisterFlags(fs)
	if c.Rate != DefaultConfig().Rate || c.Prompts != DefaultConfig().Prompts {
		t.Fatalf("defaults not applied: %+v", c)
	}
	err := fs.Parse([]string{"-mode", "closed", "-workers", "8", "-prompt-tokens", "2048", "-kv-rate", "50000",
		"-protocol", "connect", "-premarshal=false", "-lifecycle=false", "-duration", "2m"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Mode != ModeClosed || c.Workers != 8 || c.Prompts.Tokens != 2048 || c.KVRate != 50000 ||
		c.Protocol != ProtocolConnect || c.Premarshal || c.Lifecycle || c.Duration != 2*time.Minute {
		t.Fatalf("flags not applied: %+v", c)
	}
}

func TestLifecycleQueueOrder(t *testing.T) {
	t0 := time.Unix(0, 0)
	var q fifo
	for i := range 10 {
		q.push(pendingEvent{due: t0.Add(time.Duration(i) * time.Millisecond), id: string(rune('a' + i))})
	}
	got := q.popDue(nil, t0.Add(3*time.Millisecond))
	if len(got) != 4 || got[0].id != "a" || got[3].id != "d" {
		t.Fatalf("due by 3 ms: %+v", got)
	}
	if got := q.popDue(nil, t0.Add(3*time.Millisecond)); len(got) != 0 {
		t.Fatalf("popped twice: %+v", got)
	}
	got = q.popDue(nil, time.Time{}) // everything
	if len(got) != 6 || got[0].id != "e" || got[5].id != "j" || len(q.items) != 0 {
		t.Fatalf("rest: %+v, %d left", got, len(q.items))
	}
}

func TestScheduledIn(t *testing.T) {
	t0 := time.Unix(100, 0)
	cases := []struct {
		from, to time.Duration
		rate     float64
		want     int64
	}{
		{0, time.Second, 1000, 1000},
		{5 * time.Second, 20 * time.Second, 5000, 75_000},
		{1500 * time.Microsecond, 2500 * time.Microsecond, 1000, 1}, // only the pick due at 2 ms
		{time.Second, time.Second, 1000, 0},
	}
	for _, tc := range cases {
		if got := scheduledIn(t0, t0.Add(tc.from), t0.Add(tc.to), tc.rate); got != tc.want {
			t.Errorf("%v..%v at %v/s: %d, want %d", tc.from, tc.to, tc.rate, got, tc.want)
		}
	}
}
