package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A small generated workload through the whole command: table, JSON report, plots, and a
// workload file that replays to the same numbers.
func TestReplaySmoke(t *testing.T) {
	dir := t.TempDir()
	gen := []string{"--workload", "rl", "--rl-steps", "1", "--rl-turns", "3", "--rl-output", "128", "--rl-straggler-output", "512"}
	common := []string{"--replicas", "2", "--policies", "token_load,kv_affinity,oracle", "--quiet"}
	var out, errb bytes.Buffer
	args := append(append(append([]string{"replay"}, gen...), common...), "--json", filepath.Join(dir, "r.json"), "--svg", filepath.Join(dir, "p"))
	if code := run(context.Background(), args, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, s := range []string{"token_load", "kv_affinity", "oracle", "TTFT p50/p90/p99", "pooled-cache prefix hit rate"} {
		if !strings.Contains(out.String(), s) {
			t.Errorf("output lacks %q:\n%s", s, out.String())
		}
	}
	var rep struct {
		Schema  string
		Results []struct {
			Label     string
			Completed int
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil || rep.Schema != "switchyard.replay/v1" || len(rep.Results) != 3 || rep.Results[0].Completed != 24 {
		t.Fatalf("report: %v %+v", err, rep)
	}
	for _, f := range []string{"p-ttft-cdf.svg", "p-decode-blocks.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}

	file := filepath.Join(dir, "rl.jsonl")
	if code := run(context.Background(), append(append([]string{"replay"}, gen...), "--write-workload", file), &out, &errb); code != 0 {
		t.Fatalf("write-workload exit %d: %s", code, errb.String())
	}
	var again bytes.Buffer
	args = append(append([]string{"replay", "--workload", file, "--concurrency", "16"}, common...), "--json", filepath.Join(dir, "f.json"))
	if code := run(context.Background(), args, &again, &errb); code != 0 {
		t.Fatalf("replay from file exit %d: %s", code, errb.String())
	}
	fromFile, _ := os.ReadFile(filepath.Join(dir, "f.json"))
	if results(t, fromFile) != results(t, b) {
		t.Error("replaying the written workload gave other results than the generator")
	}
}

// results returns the JSON of a report's results.
func results(t *testing.T, report []byte) string {
	t.Helper()
	var r struct{ Results json.RawMessage }
	if err := json.Unmarshal(report, &r); err != nil {
		t.Fatal(err)
	}
	return string(r.Results)
}

func TestReplayUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"replay"},
		{"replay", "--workload", "nope:x"},
		{"replay", "--workload", "rl", "--policies", "token_load:estimate=maybe"},
		{"replay", "--workload", "rl", "--preset", "tpu"},
		{"replay", "--workload", "rl", "--rl-shared", "100"},
		{"replay", "--workload", "rl", "extra"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errb.String())
		}
	}
}
