package enginesim

import "github.com/switchyard-llm/switchyard/integration/workload"

// Session is a multi-turn conversation as a chat client keeps it: each turn's prompt is the
// previous turn's prompt, the reply, and a new user message, so every turn extends the last
// one's prefix. Not safe for concurrent use.
type Session struct {
	ID      string
	history []uint32
	next    uint64
	turns   int
}

// NewSession starts a session whose history begins with system (shared system prompts give
// sessions a common prefix); seed makes its user messages distinct from other sessions'.
func NewSession(id string, system []uint32, seed uint64) *Session {
	return &Session{ID: id, history: append([]uint32(nil), system...), next: workload.Mix64(seed)}
}

// Prompt appends a user message of n tokens to the history and returns the prompt of the next
// turn (a copy).
func (s *Session) Prompt(n int) []uint32 {
	for range n {
		s.next = workload.Mix64(s.next + 1)
		s.history = append(s.history, uint32(s.next%workload.Vocab))
	}
	return append([]uint32(nil), s.history...)
}

// Reply appends the engine's reply to the history and counts the turn.
func (s *Session) Reply(out []uint32) {
	s.history = append(s.history, out...)
	s.turns++
}

// Turns is the number of completed turns.
func (s *Session) Turns() int { return s.turns }

// Len is the history length in tokens.
func (s *Session) Len() int { return len(s.history) }

// SystemPrompt returns n deterministic tokens for system prompt number k.
func SystemPrompt(k, n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(workload.Mix64(uint64(k)<<32|uint64(i)) % workload.Vocab)
	}
	return out
}
