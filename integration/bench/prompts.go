package bench

import (
	"fmt"
	"os"
	"path/filepath"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/integration/workload"
)

// Prompts is a pool of prepared token prompts, cycled through by the pick driver. Each prompt
// is kept both as token ids (for the engines that preload it) and as the wire message every
// pick with that prompt shares (read-only, so no per-pick copy or allocation).
type Prompts struct {
	// Source says where the prompts came from, for the report.
	Source string
	tokens [][]uint32
	wire   []*v1.PickReplicaRequest_TokenIds
}

// NewPrompts prepares the pool c describes: synthetic prompts, or the first c.Pool requests of
// the Mooncake trace c.Workload (fewer if the trace is shorter), hash ids expanded to tokens.
func NewPrompts(c PromptConfig) (*Prompts, error) {
	if c.Pool < 1 {
		return nil, fmt.Errorf("%w: prompts: want at least 1, got %d", ErrConfig, c.Pool)
	}
	if c.Workload == "" {
		return syntheticPrompts(c), nil
	}
	f, err := os.Open(c.Workload)
	if err != nil {
		return nil, fmt.Errorf("bench: workload: %w", err)
	}
	defer f.Close()
	w, err := workload.ReadMooncake(f, filepath.Base(c.Workload))
	if err != nil {
		return nil, fmt.Errorf("bench: workload: %w", err)
	}
	return tracePrompts(w, c)
}

// syntheticPrompts builds c.Pool prompts of c.Tokens pseudo-random token ids, the first
// c.SharedTokens of them common to all.
func syntheticPrompts(c PromptConfig) *Prompts {
	p := &Prompts{Source: fmt.Sprintf("synthetic: %d prompts of %d tokens, %d shared", c.Pool, c.Tokens, c.SharedTokens)}
	for i := range c.Pool {
		toks := make([]uint32, c.Tokens)
		for j := range toks {
			stream := uint64(i) + 1
			if j < c.SharedTokens {
				stream = 0
			}
			toks[j] = tokenAt(c.Seed, stream, uint64(j))
		}
		p.add(toks)
	}
	return p
}

// tokenAt is token j of a deterministic pseudo-random stream.
func tokenAt(seed, stream, j uint64) uint32 {
	return uint32(workload.Mix64(seed<<48^stream<<24^j) % workload.Vocab)
}

// tracePrompts takes the first c.Pool requests of w, cut to c.Tokens when set.
func tracePrompts(w *workload.Workload, c PromptConfig) (*Prompts, error) {
	n := min(c.Pool, len(w.Requests))
	if n == 0 {
		return nil, fmt.Errorf("%w: workload %s has no requests", ErrConfig, w.Name)
	}
	p := &Prompts{}
	total := 0
	for i := range n {
		toks := w.PromptTokens(nil, i)
		if c.Tokens > 0 && len(toks) > c.Tokens {
			toks = toks[:c.Tokens]
		}
		total += len(toks)
		p.add(toks)
	}
	p.Source = fmt.Sprintf("mooncake %s: first %d requests, mean %d tokens", w.Name, n, total/n)
	return p, nil
}

func (p *Prompts) add(toks []uint32) {
	p.tokens = append(p.tokens, toks)
	p.wire = append(p.wire, &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: toks}})
}

// Len is the number of distinct prompts.
func (p *Prompts) Len() int { return len(p.tokens) }

// Tokens returns prompt i (modulo the pool) as token ids; callers must not modify it.
func (p *Prompts) Tokens(i int) []uint32 { return p.tokens[i%len(p.tokens)] }

// wireAt returns prompt i (modulo the pool) as a shared wire message.
func (p *Prompts) wireAt(i int) *v1.PickReplicaRequest_TokenIds { return p.wire[i%len(p.wire)] }

// MeanTokens is the mean prompt length.
func (p *Prompts) MeanTokens() int {
	total := 0
	for _, t := range p.tokens {
		total += len(t)
	}
	return total / len(p.tokens)
}
