package sim

import (
	"fmt"
	"time"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// EngineConfig describes one simulated replica's scheduler and KV cache.
type EngineConfig struct {
	BlockSize        int // tokens per KV block (vLLM default 16)
	NumBlocks        int // KV cache capacity in blocks
	MaxBatchedTokens int // token budget per step (vLLM max_num_batched_tokens)
	MaxSeqs          int // most running sequences (vLLM max_num_seqs)
	// MaxModelLen is the longest prompt plus output accepted; longer requests are dropped and
	// counted (vLLM rejects them). 0 = the KV capacity in tokens.
	MaxModelLen int
}

// DefaultEngine is the KV geometry of Dynamo's mocker (16,384 blocks of 64 tokens = 1,048,576
// tokens, the capacity its polynomial step-time fit goes with) and vLLM's scheduler defaults
// (8,192 batched tokens, 256 sequences). 64-token blocks suit long prompts (a 12k-token prompt
// wastes at most 63 tokens of its last block) and keep event volumes a quarter of 16-token ones.
func DefaultEngine() EngineConfig {
	return EngineConfig{BlockSize: 64, NumBlocks: 16384, MaxBatchedTokens: 8192, MaxSeqs: 256}
}

// CapacityTokens is the KV cache size in tokens.
func (c EngineConfig) CapacityTokens() int64 { return int64(c.BlockSize) * int64(c.NumBlocks) }

func (c EngineConfig) maxLen() int {
	if c.MaxModelLen > 0 {
		return min(c.MaxModelLen, int(c.CapacityTokens()))
	}
	return int(c.CapacityTokens())
}

func (c EngineConfig) validate() error {
	switch {
	case c.BlockSize <= 0, c.NumBlocks <= 0, c.MaxBatchedTokens <= 0, c.MaxSeqs <= 0:
		return fmt.Errorf("%w: engine: block size, blocks, max batched tokens and max seqs must be positive", ErrInvalid)
	case c.MaxModelLen < 0:
		return fmt.Errorf("%w: engine: max model len %d is negative", ErrInvalid, c.MaxModelLen)
	case c.NumBlocks*c.BlockSize < c.MaxBatchedTokens:
		return fmt.Errorf("%w: engine: KV capacity %d tokens is below one step's budget %d", ErrInvalid, c.NumBlocks*c.BlockSize, c.MaxBatchedTokens)
	}
	return nil
}

// Config configures a simulation run.
type Config struct {
	Replicas int
	Engine   EngineConfig
	// Step computes step times; nil = Polynomial (Dynamo's mocker fit).
	Step StepModel
	// RouterBlockSize is the router's block size; 0 = the engine's block size. The engine block
	// size must be a multiple of it.
	RouterBlockSize int
	// ProgressEvery is the data plane's progress report interval in generated tokens; 0 = 16.
	ProgressEvery int
	// Bin is the width of the decode-block sampling bins; 0 = 500 ms.
	Bin time.Duration
	// Seed drives the router's random choices and the engines' hash seeds; 0 = 1.
	Seed uint64
	// Replay says when requests are issued.
	Replay workload.ReplayConfig
	// Progress, when set, is called from the simulation goroutine every few hundred completed
	// requests with the count so far and the total.
	Progress func(done, total int)
}

func (c *Config) withDefaults() (Config, error) {
	out := *c
	if err := out.Engine.validate(); err != nil {
		return out, err
	}
	if out.Step == nil {
		out.Step = Polynomial{}
	}
	if out.ProgressEvery == 0 {
		out.ProgressEvery = 16
	}
	if out.Bin == 0 {
		out.Bin = 500 * time.Millisecond
	}
	if out.Seed == 0 {
		out.Seed = 1
	}
	if out.RouterBlockSize == 0 {
		out.RouterBlockSize = out.Engine.BlockSize
	}
	switch {
	case out.Replicas <= 0:
		return out, fmt.Errorf("%w: replicas %d must be positive", ErrInvalid, out.Replicas)
	case out.ProgressEvery < 0, out.Bin < 0, out.RouterBlockSize < 0:
		return out, fmt.Errorf("%w: progress interval, bin and router block size must not be negative", ErrInvalid)
	case out.Engine.BlockSize%out.RouterBlockSize != 0:
		return out, fmt.Errorf("%w: engine block size %d is not a multiple of the router block size %d", ErrInvalid, out.Engine.BlockSize, out.RouterBlockSize)
	}
	return out, nil
}
