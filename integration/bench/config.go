package bench

import (
	"flag"
	"fmt"
	"io"
	"time"
)

// Modes of the pick driver.
const (
	ModeFixed  = "fixed"  // open loop at Rate picks/s
	ModeClosed = "closed" // Workers callers, each sending when its last call returned
)

// Protocols the picks can use.
const (
	ProtocolGRPC    = "grpc"
	ProtocolConnect = "connect" // Connect protocol (binary) over HTTP/2 cleartext
)

// Config describes one run. The zero value of each field selects its default (see
// DefaultConfig); Validate names the first bad field.
type Config struct {
	// Addr is the router's host:port.
	Addr string
	// Protocol of the picks: ProtocolGRPC or ProtocolConnect. Lifecycle and KV events always
	// stream over gRPC, as the Go client sends them.
	Protocol string
	// Model is the model the replicas are registered under; Replicas is how many
	// ("<model>-r00", ...). They are registered at the start and, with Cleanup, deregistered at
	// the end (which also drops their index entries).
	Model    string
	Replicas int
	Cleanup  bool
	// Policy is sent with every pick ("" = the server's default).
	Policy string
	// DryRun sends every pick as a dry run: scored in full but neither reserved nor predicted,
	// so every pick can be the same bytes (what a load tool without templates sends; see the
	// ghz cross-check in docs/performance.md). No lifecycle events follow dry runs.
	DryRun bool

	// Mode is ModeFixed (Rate picks/s, at most Workers in flight) or ModeClosed (Workers
	// callers back to back).
	Mode    string
	Rate    float64
	Workers int
	// Warmup runs the full load unmeasured; Duration is the measured time.
	Warmup, Duration time.Duration
	// Timeout bounds each pick.
	Timeout time.Duration
	// Premarshal encodes each prompt once and sends picks as pre-encoded bytes (the router
	// receives the same message), so the client's encoding cost stays off the shared machine;
	// false encodes every request as a data plane would (through the Go client for gRPC).
	Premarshal bool

	// Prompts selects the prompt source (see PromptConfig).
	Prompts PromptConfig

	// Lifecycle streams admitted, first token, progress and done for every pick, TTFT and
	// Decode apart (simulated prefill and decode times).
	Lifecycle    bool
	TTFT, Decode time.Duration
	// OutputTokens is each request's simulated output length (reported in done).
	OutputTokens int

	// KVRate is the block events per second the simulated engines publish while the load runs
	// (stores of new chains and removals of old ones, about half each); 0 = none.
	KVRate float64
	// PreloadBlocks is how many blocks the engines store before the run starts: every prompt
	// of the pool on one replica, then filler chains up to this count.
	PreloadBlocks int

	// ServerPID is the router's process id for CPU and memory sampling; 0 = find the process
	// listening on Addr's port when Addr is local, -1 = do not sample.
	ServerPID int
	// Progress receives a progress line every second (nil = none).
	Progress io.Writer
}

// PromptConfig selects where prompts come from: synthetic prompts (Workload empty) or the
// requests of a Mooncake JSONL trace, their hash ids expanded to token ids.
type PromptConfig struct {
	// Workload is a Mooncake JSONL file ("" = synthetic prompts).
	Workload string
	// Tokens is the synthetic prompt length; for a trace, prompts are cut to this length
	// (0 = as recorded).
	Tokens int
	// SharedTokens leads every synthetic prompt (a system prompt shared by all).
	SharedTokens int
	// Pool is how many distinct prompts are prepared and cycled through.
	Pool int
	// Seed varies the synthetic prompts' tokens.
	Seed uint64
}

// DefaultConfig returns the defaults: 16 replicas, fixed 1,000 picks/s for 30 s after a 5 s
// warm-up, 8,192-token synthetic prompts sharing 1,024 tokens, lifecycle streamed, no KV
// events, no preload.
func DefaultConfig() Config {
	return Config{
		Addr: "localhost:50051", Protocol: ProtocolGRPC, Model: "bench", Replicas: 16, Cleanup: true,
		Mode: ModeFixed, Rate: 1000, Workers: 64,
		Warmup: 5 * time.Second, Duration: 30 * time.Second, Timeout: 2 * time.Second, Premarshal: true,
		Prompts:   PromptConfig{Tokens: 8192, SharedTokens: 1024, Pool: 1024, Seed: 1},
		Lifecycle: true, TTFT: 50 * time.Millisecond, Decode: 500 * time.Millisecond, OutputTokens: 256,
	}
}

// RegisterFlags defines one flag per field on fs, with the defaults as initial values.
func (c *Config) RegisterFlags(fs *flag.FlagSet) {
	*c = DefaultConfig()
	fs.StringVar(&c.Addr, "addr", c.Addr, "router address (host:port)")
	fs.StringVar(&c.Protocol, "protocol", c.Protocol, "protocol of the picks: grpc or connect (lifecycle and KV events use gRPC)")
	fs.StringVar(&c.Model, "model", c.Model, "model to register the replicas under")
	fs.IntVar(&c.Replicas, "replicas", c.Replicas, "replicas to register")
	fs.BoolVar(&c.Cleanup, "cleanup", c.Cleanup, "deregister the replicas at the end (drops their index entries)")
	fs.StringVar(&c.Policy, "policy", c.Policy, "policy for every pick (default: the server's)")
	fs.BoolVar(&c.DryRun, "dry-run", c.DryRun, "send dry-run picks (scored, not reserved; no lifecycle events)")
	fs.StringVar(&c.Mode, "mode", c.Mode, "fixed (open loop at -rate) or closed (-workers callers back to back)")
	fs.Float64Var(&c.Rate, "rate", c.Rate, "fixed mode: picks per second")
	fs.IntVar(&c.Workers, "workers", c.Workers, "closed mode: concurrent callers; fixed mode: most picks in flight")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "unmeasured warm-up under the full load")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "measured time")
	fs.DurationVar(&c.Timeout, "timeout", c.Timeout, "deadline of each pick")
	fs.BoolVar(&c.Premarshal, "premarshal", c.Premarshal, "encode each prompt once and send picks pre-encoded (false: encode every request, through the Go client for gRPC)")
	fs.StringVar(&c.Prompts.Workload, "workload", c.Prompts.Workload, "Mooncake JSONL trace to take prompts from (default: synthetic prompts)")
	fs.IntVar(&c.Prompts.Tokens, "prompt-tokens", c.Prompts.Tokens, "synthetic prompt length; with -workload, cut prompts to this length (0 = as recorded)")
	fs.IntVar(&c.Prompts.SharedTokens, "shared-tokens", c.Prompts.SharedTokens, "synthetic: leading tokens common to every prompt")
	fs.IntVar(&c.Prompts.Pool, "prompts", c.Prompts.Pool, "distinct prompts prepared and cycled through")
	fs.Uint64Var(&c.Prompts.Seed, "seed", c.Prompts.Seed, "seed of the synthetic prompts")
	fs.BoolVar(&c.Lifecycle, "lifecycle", c.Lifecycle, "stream admitted/first-token/progress/done for every pick")
	fs.DurationVar(&c.TTFT, "ttft", c.TTFT, "simulated time from admission to the first token")
	fs.DurationVar(&c.Decode, "decode", c.Decode, "simulated time from the first token to done")
	fs.IntVar(&c.OutputTokens, "output-tokens", c.OutputTokens, "simulated output tokens per request")
	fs.Float64Var(&c.KVRate, "kv-rate", c.KVRate, "KV block events per second published by the simulated engines during the run")
	fs.IntVar(&c.PreloadBlocks, "preload-blocks", c.PreloadBlocks, "blocks the engines store before the run (the prompt pool, then filler chains)")
	fs.IntVar(&c.ServerPID, "server-pid", c.ServerPID, "router process to sample CPU and RSS from (0 = find the local listener of -addr, -1 = none)")
}

// Validate checks every field and returns an error wrapping ErrConfig that names the first bad
// one.
func (c *Config) Validate() error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrConfig, field, fmt.Sprintf(format, args...))
	}
	p := &c.Prompts
	switch {
	case c.Addr == "":
		return bad("addr", "empty")
	case c.Protocol != ProtocolGRPC && c.Protocol != ProtocolConnect:
		return bad("protocol", "want grpc or connect, got %q", c.Protocol)
	case c.Model == "":
		return bad("model", "empty")
	case c.Replicas < 1 || c.Replicas > 10_000:
		return bad("replicas", "want 1..10000, got %d", c.Replicas)
	case c.Mode != ModeFixed && c.Mode != ModeClosed:
		return bad("mode", "want fixed or closed, got %q", c.Mode)
	case c.Mode == ModeFixed && !(c.Rate > 0 && c.Rate <= 1e6):
		return bad("rate", "want 0 < rate <= 1e6 picks/s, got %v", c.Rate)
	case c.Workers < 1 || c.Workers > 100_000:
		return bad("workers", "want 1..100000, got %d", c.Workers)
	case c.Warmup < 0:
		return bad("warmup", "negative")
	case c.Duration <= 0:
		return bad("duration", "must be positive")
	case c.Timeout <= 0:
		return bad("timeout", "must be positive")
	case p.Pool < 1:
		return bad("prompts", "want at least 1 prompt, got %d", p.Pool)
	case p.Workload == "" && p.Tokens < 1:
		return bad("prompt-tokens", "synthetic prompts need a positive length, got %d", p.Tokens)
	case p.Tokens < 0 || p.SharedTokens < 0:
		return bad("prompt-tokens", "negative")
	case p.Workload == "" && p.SharedTokens > p.Tokens:
		return bad("shared-tokens", "%d exceeds the prompt length %d", p.SharedTokens, p.Tokens)
	case c.Lifecycle && (c.TTFT < 0 || c.Decode < 0 || c.OutputTokens < 0):
		return bad("ttft/decode/output-tokens", "negative")
	case !(c.KVRate >= 0 && c.KVRate <= 1e8):
		return bad("kv-rate", "want 0..1e8 block events/s, got %v", c.KVRate)
	case c.PreloadBlocks < 0:
		return bad("preload-blocks", "negative")
	case c.ServerPID < -1:
		return bad("server-pid", "want a process id, 0 or -1, got %d", c.ServerPID)
	}
	return nil
}
