package sim

import "time"

// Chunk is one prefilling sequence's part of a step.
type Chunk struct {
	Tokens  int // new tokens computed this step
	Context int // tokens already in its KV cache before them
}

// Batch summarises one engine step for a StepModel.
type Batch struct {
	PrefillTokens  int     // Σ Chunk.Tokens
	Prefills       []Chunk // prefilling sequences (prompt chunks or recomputation)
	Decodes        int     // decoding sequences, one token each
	DecodeContext  int64   // Σ context tokens the decoding sequences attend to (incl. the new token)
	CapacityTokens int64   // the engine's KV capacity in tokens
}

// StepModel turns a step's batch into its duration.
type StepModel interface {
	// Name identifies the model in reports.
	Name() string
	// StepTime returns the duration of a step running b (never negative; > 0 for a non-empty batch).
	StepTime(b *Batch) time.Duration
}

// Polynomial is the step-time fit of Dynamo's mocker (hardware unstated):
//
//	prefill_ms = 4.209989e-7·N² + 1.518344e-2·N + 16.50142   N = new prefill tokens in the step
//	decode_ms  = max(1, −25.74·u² + 54.01·u + 5.74)          u = min(1, decode context / KV capacity)
//
// A mixed step pays both terms. u follows the mocker's definition: the sum of the decoding
// sequences' logical context lengths over the capacity (shared prefix blocks count for each
// sequence that reads them).
type Polynomial struct{}

// Name returns "dynamo-polynomial".
func (Polynomial) Name() string { return "dynamo-polynomial" }

// StepTime implements StepModel.
func (Polynomial) StepTime(b *Batch) time.Duration {
	var ms float64
	if b.PrefillTokens > 0 {
		n := float64(b.PrefillTokens)
		ms += 4.209989e-7*n*n + 1.518344e-2*n + 16.50142
	}
	if b.Decodes > 0 {
		u := 1.0
		if b.CapacityTokens > 0 {
			u = min(1, float64(b.DecodeContext)/float64(b.CapacityTokens))
		}
		ms += max(1, -25.74*u*u+54.01*u+5.74)
	}
	return msDuration(ms)
}

func msDuration(ms float64) time.Duration { return time.Duration(ms*1e6 + 0.5) }
