package main

import (
	"context"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestServeDemo runs `serve --demo` until it printed two summaries, and checks every replica
// served requests, none failed, and the engines' prefix caches are hit.
func TestServeDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs engines for a few seconds")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- runServe(ctx, []string{"--listen", "127.0.0.1:0", "--demo", "--demo-report", "1s", "--demo-sessions", "4", "--log-level", "error"}, &out, io.Discard)
	}()
	row := regexp.MustCompile(`(?m)^(engine-\d)\s+(\w+)\s+(\d+)\s+\d+\s+\d+\s+(\d+)\s+([0-9.]+)$`)
	deadline := time.Now().Add(60 * time.Second)
	for strings.Count(out.String(), "replica ") < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("no two summaries in 60s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve --demo: %v", err)
	}
	text := out.String()
	last := text[strings.LastIndex(text, "requests,"):]
	if !strings.Contains(last, " 0 failed") {
		t.Errorf("failed requests in the last summary:\n%s", last)
	}
	rows := row.FindAllStringSubmatch(last, -1)
	if len(rows) != 3 {
		t.Fatalf("last summary has %d replica rows, want 3:\n%s", len(rows), last)
	}
	hits := 0.0
	for _, r := range rows {
		if r[2] != "healthy" {
			t.Errorf("%s is %s", r[1], r[2])
		}
		if n, _ := strconv.Atoi(r[3]); n == 0 {
			t.Errorf("%s served no request:\n%s", r[1], last)
		}
		h, _ := strconv.ParseFloat(r[5], 64)
		hits += h
	}
	if hits == 0 {
		t.Errorf("no prefix-cache hit on any replica:\n%s", last)
	}
}

func TestDemoFlagsValidate(t *testing.T) {
	cases := []struct {
		name string
		c    demoFlags
		want string
	}{
		{"off ignores the rest", demoFlags{replicas: -1}, ""},
		{"replicas", demoFlags{enabled: true, replicas: 0, sessions: 1, speedup: 1, report: time.Second}, "demo-replicas"},
		{"sessions", demoFlags{enabled: true, replicas: 1, sessions: 0, speedup: 1, report: time.Second}, "demo-sessions"},
		{"speedup", demoFlags{enabled: true, replicas: 1, sessions: 1, speedup: 0, report: time.Second}, "demo-speedup"},
		{"report", demoFlags{enabled: true, replicas: 1, sessions: 1, speedup: 1}, "demo-report"},
		{"ok", demoFlags{enabled: true, replicas: 3, sessions: 6, speedup: 5, report: time.Second}, ""},
	}
	for _, tc := range cases {
		err := tc.c.validate()
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: %v, want error naming %q", tc.name, err, tc.want)
		}
	}
}
