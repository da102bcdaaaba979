package workload

import (
	"fmt"
	"time"
)

// BlockTokens is the number of tokens one hash id stands for (the Mooncake traces' block size).
const BlockTokens = 512

// Request is one request of a workload.
type Request struct {
	// Timestamp is the arrival offset from the start of the trace. For a session's later turn
	// issued by Delay it only orders the file.
	Timestamp time.Duration
	// SessionID groups the turns of a session, in file order; "" = a single-turn request.
	SessionID string
	// Delay is how long after the previous turn of the session completes this turn is issued;
	// used when HasDelay (the session's first row always starts at its Timestamp).
	Delay    time.Duration
	HasDelay bool
	// InputLength and OutputLength are the prompt and output lengths in tokens.
	InputLength, OutputLength int
	// HashIDs are the prompt's block ids, one per BlockTokens tokens (the last may be partial):
	// len(HashIDs) == ceil(InputLength/BlockTokens).
	HashIDs []uint64
}

// Workload is a stream of requests with what the simulator needs to expand their tokens.
type Workload struct {
	// Name identifies the workload in reports (a file name or a generator with its parameters).
	Name string
	// Tokenization states how the token ids were obtained (text traces are tokenized
	// approximately; id-based traces expand ids).
	Tokenization string
	// Requests in file order; a session's turns appear in turn order.
	Requests []Request
	// Dropped counts input rows left out, by reason.
	Dropped map[string]int
	// Concurrency is the closed-loop concurrency a generator was designed for (0 = open loop).
	Concurrency int

	next    []int32 // next turn of the same session, -1 if none
	extends []bool  // the next turn's prompt extends this prompt
	linked  bool
}

// Finalize validates every request and links each session's turns; readers and generators
// call it, and callers that build a Workload by hand must too. It returns the first invalid
// request's error (naming its index) and leaves the workload unlinked in that case.
func (w *Workload) Finalize() error {
	for i := range w.Requests {
		if err := w.Requests[i].validate(); err != nil {
			return fmt.Errorf("request %d: %w", i, err)
		}
	}
	w.next = make([]int32, len(w.Requests))
	w.extends = make([]bool, len(w.Requests))
	last := make(map[string]int, 64)
	for i := range w.Requests {
		w.next[i] = -1
		s := w.Requests[i].SessionID
		if s == "" {
			continue
		}
		if p, ok := last[s]; ok {
			w.next[p] = int32(i)
			w.extends[p] = extendsPrompt(&w.Requests[p], &w.Requests[i])
		}
		last[s] = i
	}
	w.linked = true
	return nil
}

func (r *Request) validate() error {
	switch {
	case r.InputLength <= 0:
		return fmt.Errorf("%w: input_length %d must be positive", ErrFormat, r.InputLength)
	case r.OutputLength <= 0:
		return fmt.Errorf("%w: output_length %d must be positive", ErrFormat, r.OutputLength)
	case len(r.HashIDs) != blocksOf(r.InputLength):
		return fmt.Errorf("%w: %d hash_ids for input_length %d (want %d of %d tokens)",
			ErrFormat, len(r.HashIDs), r.InputLength, blocksOf(r.InputLength), BlockTokens)
	case r.Timestamp < 0:
		return fmt.Errorf("%w: timestamp %v is negative", ErrFormat, r.Timestamp)
	case r.HasDelay && r.Delay < 0:
		return fmt.Errorf("%w: delay %v is negative", ErrFormat, r.Delay)
	}
	return nil
}

// blocksOf is the number of hash ids of a prompt of n tokens.
func blocksOf(n int) int { return (n + BlockTokens - 1) / BlockTokens }

// extendsPrompt reports whether next's prompt continues cur's: longer, and equal ids over all
// of cur's blocks (cur's partial last block continued under the same id).
func extendsPrompt(cur, next *Request) bool {
	if next.InputLength <= cur.InputLength || len(next.HashIDs) < len(cur.HashIDs) {
		return false
	}
	for i, id := range cur.HashIDs {
		if next.HashIDs[i] != id {
			return false
		}
	}
	return true
}

// Next returns the index of the next turn of request i's session, or -1.
func (w *Workload) Next(i int) int { return int(w.next[i]) }

// Extends reports whether the next turn of request i's session continues its prompt, so that
// request i's generated tokens are that prompt's continuation.
func (w *Workload) Extends(i int) bool { return w.extends[i] }

// Sessions returns the requests grouped by session in order of first appearance; a request
// without a session id is a session of its own.
func (w *Workload) Sessions() [][]int {
	var out [][]int
	pos := make(map[string]int, 64)
	for i := range w.Requests {
		s := w.Requests[i].SessionID
		if s == "" {
			out = append(out, []int{i})
			continue
		}
		if k, ok := pos[s]; ok {
			out[k] = append(out[k], i)
			continue
		}
		pos[s] = len(out)
		out = append(out, []int{i})
	}
	return out
}

// Summary describes a workload's size.
type Summary struct {
	Requests         int     `json:"requests"`
	Sessions         int     `json:"sessions"`
	InputTokensMean  float64 `json:"input_tokens_mean"`
	OutputTokensMean float64 `json:"output_tokens_mean"`
	InputTokens      int64   `json:"input_tokens"`
	OutputTokens     int64   `json:"output_tokens"`
	// SpanSeconds is the time between the first and the last timestamp.
	SpanSeconds float64 `json:"span_seconds"`
}

// Summarize returns the workload's size.
func (w *Workload) Summarize() Summary {
	s := Summary{Requests: len(w.Requests), Sessions: len(w.Sessions())}
	var lo, hi time.Duration
	for i, r := range w.Requests {
		s.InputTokens += int64(r.InputLength)
		s.OutputTokens += int64(r.OutputLength)
		if i == 0 || r.Timestamp < lo {
			lo = r.Timestamp
		}
		hi = max(hi, r.Timestamp)
	}
	if n := len(w.Requests); n > 0 {
		s.InputTokensMean = float64(s.InputTokens) / float64(n)
		s.OutputTokensMean = float64(s.OutputTokens) / float64(n)
		s.SpanSeconds = (hi - lo).Seconds()
	}
	return s
}
