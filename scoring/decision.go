package scoring

import (
	"time"

	"github.com/switchyard-llm/switchyard/index"
)

// PickRequest asks which replica of Model should serve a request.
type PickRequest struct {
	RequestID, Model, SessionID, LoRA string
	Prompt                            Prompt
	// PromptTokens is the prompt length in tokens when Prompt is BlockHashes or Text
	// (0 = estimate from blocks, or from bytes at 4 per token); with Tokens it must be 0 or agree.
	PromptTokens int
	// Candidates restricts the pick to these replica ids; empty = every ready replica of Model.
	Candidates []string
	// ExpectedOutputTokens is the caller's output-length hint; 0 = none (a learned estimate is used).
	ExpectedOutputTokens int
	Priority             int
	// Policy names the policy; "" = the model's default, else the server's.
	Policy string
	// Params overrides the policy's coefficients for this request, validated by name and range.
	Params map[string]float64
	// DryRun scores without reserving and without predicted index entries.
	DryRun bool
}

// Reasons a listed candidate is not eligible, as reported in CandidateScore.Ineligible.
const (
	IneligibleDraining      = "draining"
	IneligibleUnhealthy     = "unhealthy" // quarantined by the liveness checks
	IneligibleNotRegistered = "not_registered"
	IneligibleWrongModel    = "wrong_model"
)

// CandidateScore is one candidate's terms in a decision, eligible or not.
type CandidateScore struct {
	ReplicaID      string
	Overlap        index.Overlap
	CachedTokens   int     // predicted cached prompt tokens on this replica
	PrefillTokens  int64   // replica's active prefill tokens before this request
	DecodeBlocks   float64 // replica's decode blocks, projected over expected output when known
	ActiveRequests int
	Cost           float64 // the policy's score (lower is better); 0 for policies without one
	Rank           int     // 1 = chosen; 0 = ineligible
	Ineligible     string  // why not eligible ("" when eligible): "draining","unhealthy","not_registered","wrong_model"

	// HeldBlocks is the decode blocks held now (DecodeBlocks without the projection).
	HeldBlocks int64
	// NewBlocks is this request's prompt blocks not already held by active requests there.
	NewBlocks float64
}

// Decision is the record of one pick: the choice, the ranked fallbacks and every candidate's terms.
type Decision struct {
	DecisionID                          string
	RequestID, Model, SessionID, Policy string
	ReplicaID                           string
	Fallbacks                           []string // ranked, best first, excluding ReplicaID
	PromptTokens                        int
	CachedTokens                        int // predicted on the chosen replica
	Candidates                          []CandidateScore
	DryRun                              bool
	Time                                time.Time

	// ExpectedOutputTokens is the output length the tracker assumed for the request: the hint,
	// else the learned estimate (0 = unknown).
	ExpectedOutputTokens int
	// OutputSource says where ExpectedOutputTokens came from: "hint", "session", "model" or "".
	OutputSource string
	// ReplicaAddress is the chosen replica's registered address when the decision was made, so
	// a caller needs no second lookup (one that takes the model's lock) to reach the replica.
	ReplicaAddress string
}
