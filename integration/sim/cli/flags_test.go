package cli

import (
	"errors"
	"io"
	"testing"

	"github.com/switchyard-llm/switchyard/integration/sim"
	"github.com/switchyard-llm/switchyard/integration/workload"
)

func TestConfigFromFlags(t *testing.T) {
	w := &workload.Workload{Concurrency: 16}
	for _, tc := range []struct {
		args        []string
		engine      sim.EngineConfig
		step        string
		concurrency int
	}{
		{nil, sim.DefaultEngine(), "dynamo-polynomial", 16},
		{[]string{"--preset", "gpt-oss-120b-h200", "--concurrency", "0"}, sim.GPTOSS120BH200Engine(), "roofline-gpt-oss-120b-h200", 0},
		{[]string{"--preset", "gpt-oss-120b-h200", "--num-blocks", "500", "--concurrency", "3"},
			sim.EngineConfig{BlockSize: 16, NumBlocks: 500, MaxBatchedTokens: 8192, MaxSeqs: 256, MaxModelLen: 131072}, "roofline-gpt-oss-120b-h200", 3},
		{[]string{"--block-size", "32", "--max-seqs", "8"}, sim.EngineConfig{BlockSize: 32, NumBlocks: 16384, MaxBatchedTokens: 8192, MaxSeqs: 8}, "dynamo-polynomial", 16},
	} {
		o, err := parseFlags(tc.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := o.config(w)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Engine != tc.engine || cfg.Step.Name() != tc.step || cfg.Replay.Concurrency != tc.concurrency {
			t.Errorf("%v: engine %+v step %s concurrency %d", tc.args, cfg.Engine, cfg.Step.Name(), cfg.Replay.Concurrency)
		}
	}
}

func TestLoadWorkloadKinds(t *testing.T) {
	var g generators
	for spec, want := range map[string]int{
		"../../workload/testdata/small.jsonl":          4,
		"mooncake:../../workload/testdata/small.jsonl": 4,
		"../../workload/testdata/azure_small.csv":      3,
		"../../workload/testdata/agents":               3,
	} {
		w, err := g.load(spec)
		if err != nil || len(w.Requests) != want {
			t.Errorf("%s: %v, %v requests; want %d", spec, err, w, want)
		}
	}
	if _, err := g.load("tar:x"); !errors.Is(err, ErrUsage) {
		t.Errorf("unknown kind: %v", err)
	}
}
