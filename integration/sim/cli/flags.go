package cli

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/switchyard-llm/switchyard/integration/sim"
	"github.com/switchyard-llm/switchyard/integration/workload"
)

// options are the parsed flags of `switchyard replay`.
type options struct {
	workload, policies, preset, json, svg, writeWorkload string
	replicas, blockSize, numBlocks, batched, seqs        int
	maxModelLen, routerBlock, progressEvery, parallel    int
	concurrency                                          int
	speedup                                              float64
	jitter, think                                        time.Duration
	seed                                                 uint64
	quiet                                                bool
	gen                                                  generators
	set                                                  map[string]bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchyard replay --workload SPEC [--policies a,b,c] [flags]\n\n"+
			"SPEC: rl | sessions | [mooncake:]FILE.jsonl | agents:DIR | azure:FILE.csv\n"+
			"policy: [label=]NAME[:key=value...], NAME a router policy or oracle; key estimate=on|off or a coefficient\n\nflags:")
		fs.PrintDefaults()
	}
	eng := sim.DefaultEngine()
	fs.StringVar(&o.workload, "workload", "", "workload: rl, sessions, or a trace file/directory (see usage)")
	fs.StringVar(&o.policies, "policies", "round_robin,consistent_hash,kv_affinity,token_load", "comma-separated policies to compare")
	fs.IntVar(&o.replicas, "replicas", 8, "simulated replicas")
	fs.StringVar(&o.preset, "preset", "dynamo", "engine preset: dynamo (Dynamo mocker polynomial, 16384×64-token KV) or gpt-oss-120b-h200 (roofline, 102400×16-token KV)")
	fs.IntVar(&o.blockSize, "block-size", eng.BlockSize, "KV block size in tokens (overrides the preset)")
	fs.IntVar(&o.numBlocks, "num-blocks", eng.NumBlocks, "KV capacity in blocks per replica (overrides the preset)")
	fs.IntVar(&o.batched, "max-batched-tokens", eng.MaxBatchedTokens, "token budget per step (overrides the preset)")
	fs.IntVar(&o.seqs, "max-seqs", eng.MaxSeqs, "most running sequences per replica (overrides the preset)")
	fs.IntVar(&o.maxModelLen, "max-model-len", 0, "longest prompt+output served, 0 = the KV capacity (overrides the preset)")
	fs.IntVar(&o.routerBlock, "router-block-size", 0, "router block size, 0 = the engine block size")
	fs.IntVar(&o.progressEvery, "progress-every", 16, "lifecycle progress report every N generated tokens")
	fs.Float64Var(&o.speedup, "speedup", 1, "open loop: divide trace timestamps by this")
	fs.DurationVar(&o.jitter, "jitter", 0, "open loop: add uniform [0, jitter) to each timestamp (quantised traces)")
	fs.IntVar(&o.concurrency, "concurrency", -1, "closed loop with N concurrent sessions; 0 = open loop; -1 = the workload's own (generators)")
	fs.DurationVar(&o.think, "think-time", 0, "closed loop: pause between turns of rows without a delay")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the router's random choices, engine hash seeds and jitter")
	fs.IntVar(&o.parallel, "parallel", runtime.GOMAXPROCS(0), "policies simulated at once")
	fs.StringVar(&o.json, "json", "", "write the JSON report to this file")
	fs.StringVar(&o.svg, "svg", "", "write PREFIX-ttft-cdf.svg and PREFIX-decode-blocks.svg")
	fs.StringVar(&o.writeWorkload, "write-workload", "", "write the workload as extended Mooncake JSONL to this file and exit")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress bar")
	o.gen.register(fs)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	return o, nil
}

// config builds the simulation configuration from the flags and the workload.
func (o *options) config(w *workload.Workload) (sim.Config, error) {
	cfg := sim.Config{
		Replicas: o.replicas, RouterBlockSize: o.routerBlock, ProgressEvery: o.progressEvery, Seed: o.seed,
		Replay: workload.ReplayConfig{Speedup: o.speedup, Jitter: o.jitter, Concurrency: o.concurrency, ThinkTime: o.think, Seed: o.seed},
	}
	switch o.preset {
	case "dynamo":
		cfg.Engine, cfg.Step = sim.DefaultEngine(), sim.Polynomial{}
	case "gpt-oss-120b-h200":
		cfg.Engine, cfg.Step = sim.GPTOSS120BH200Engine(), sim.GPTOSS120BH200()
	default:
		return cfg, fmt.Errorf("%w: preset %q (want dynamo or gpt-oss-120b-h200)", errUsage, o.preset)
	}
	for _, f := range []struct {
		name string
		dst  *int
		val  int
	}{
		{"block-size", &cfg.Engine.BlockSize, o.blockSize}, {"num-blocks", &cfg.Engine.NumBlocks, o.numBlocks},
		{"max-batched-tokens", &cfg.Engine.MaxBatchedTokens, o.batched}, {"max-seqs", &cfg.Engine.MaxSeqs, o.seqs},
		{"max-model-len", &cfg.Engine.MaxModelLen, o.maxModelLen},
	} {
		if o.set[f.name] {
			*f.dst = f.val
		}
	}
	if o.concurrency < 0 {
		cfg.Replay.Concurrency = w.Concurrency
	}
	return cfg, nil
}
