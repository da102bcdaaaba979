package scoring

import (
	"math/rand/v2"

	"github.com/switchyard-llm/switchyard/index"
)

// Policy ranks the eligible candidates of one pick. Implementations are small named types,
// configured once (NewPolicy, Config.PolicyParams) and re-parameterised per request with
// WithParams. Rank runs under the model's lock, so it must be quick and must not block; it may
// keep no per-pick state of its own (per-model state lives behind PolicyInput).
type Policy interface {
	// Name is the policy's configuration name, e.g. "token_load".
	Name() string
	// Specs lists the policy's tunable parameters with defaults and valid ranges.
	Specs() []ParamSpec
	// Params returns the effective parameter values by name.
	Params() map[string]float64
	// WithParams returns a copy with the given overrides applied; unknown names and
	// out-of-range values are ErrInvalid, and the receiver is left unchanged.
	WithParams(overrides map[string]float64) (Policy, error)
	// Rank reorders cands in place, best first (cands[0] is the choice), and may write each
	// candidate's Cost. cands is never empty.
	Rank(in *PolicyInput, cands []Candidate)
}

// PolicyInput is what a policy knows about the request being routed and the model's shared
// per-model state (ring, round-robin cursor, random source). Valid only during Rank.
type PolicyInput struct {
	RequestID, SessionID, Model, LoRA string
	Priority                          int
	PromptTokens                      int     // prompt length in tokens (ISL)
	PromptUnits                       int     // hashed prompt units: full blocks, or text chunks in approximate mode
	UnitTokens                        float64 // prompt tokens per hashed unit
	UnitSize                          int     // size of a unit in the tree-size measure (tokens, or bytes for text)
	PromptSize                        int     // prompt size in the same measure as UnitSize
	BlockSize                         int     // router block size in tokens
	// ExpectedOutputTokens is the request's expected output length: the caller's hint, else the
	// learned estimate (0 = unknown). A simulator's oracle can pass the true length as a hint.
	ExpectedOutputTokens int
	// Rand is the model's random source (seeded from Config.Seed); use it for every random choice.
	Rand *rand.Rand

	model *modelPool
}

// Next returns the model's round-robin cursor and advances it.
func (in *PolicyInput) Next() uint64 {
	v := in.model.cursor
	in.model.cursor++
	return v
}

// Ring returns the model's consistent-hash ring over all its registered replicas (ready or
// draining) with the given number of virtual nodes per replica, rebuilt only when membership or
// the node count changes.
func (in *PolicyInput) Ring(virtualNodes int) *HashRing {
	return in.model.ring(virtualNodes)
}

// Candidate is one eligible replica as a policy sees it. Policies read the terms and may write
// Cost; they reorder the slice but must not add or drop entries.
type Candidate struct {
	ReplicaID string
	Overlap   index.Overlap
	// CachedTokens is the predicted cached part of the prompt on this replica.
	CachedTokens int
	// PrefillTokens is the replica's active prefill tokens before this request.
	PrefillTokens int64
	// HeldBlocks is the decode blocks the replica's active requests hold now.
	HeldBlocks int64
	// RemainingOutputBlocks is the output blocks its active requests are still expected to grow
	// (hints or learned estimates; decays as they generate). 0 when nothing is known.
	RemainingOutputBlocks float64
	// NewBlocks is this request's prompt blocks not already held by active requests on the replica.
	NewBlocks float64
	// ActiveRequests is the replica's active request count before this request.
	ActiveRequests int
	// TreeSize is the amount of prompt routed to the replica recently (Ray's and SGLang's
	// per-replica prefix tree size; bytes for text prompts, tokens otherwise).
	TreeSize int64
	// Cost is the policy's score, lower is better; 0 for policies without one.
	Cost float64

	key  float64 // sort key of built-in policies
	slot int     // position in the Decision's candidate list
}

// decodeProjected is the replica's decode blocks with active requests' expected growth.
func (c *Candidate) decodeProjected(outputWeight float64) float64 {
	return float64(c.HeldBlocks) + outputWeight*c.RemainingOutputBlocks
}
