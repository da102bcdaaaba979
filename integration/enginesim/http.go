package enginesim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// maxBodyBytes bounds a completions request body.
const maxBodyBytes = 32 << 20

// defaultMaxTokens is max_tokens when a request gives none (OpenAI's default).
const defaultMaxTokens = 16

// Handler serves the engine's HTTP API: completions, health, metrics and cache inspection.
type Handler struct {
	eng   *Engine
	model string
	ids   atomic.Uint64
	mux   *http.ServeMux
}

// NewHandler returns the HTTP API of eng serving model.
func NewHandler(eng *Engine, model string) *Handler {
	h := &Handler{eng: eng, model: model, mux: http.NewServeMux()}
	h.mux.HandleFunc("POST /v1/completions", h.completions)
	h.mux.HandleFunc("GET /v1/models", h.models)
	h.mux.HandleFunc("GET /health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	h.mux.HandleFunc("GET /metrics", h.metrics)
	h.mux.HandleFunc("GET /debug/cache", h.cache)
	return h
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// CompletionRequest is the part of OpenAI's completions request the engine reads.
type CompletionRequest struct {
	Model         string          `json:"model"`
	Prompt        json.RawMessage `json:"prompt"` // a string or an array of token ids
	MaxTokens     *int            `json:"max_tokens"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// CompletionChoice is one choice of a completion (or of one streamed chunk).
type CompletionChoice struct {
	Index        int      `json:"index"`
	Text         string   `json:"text"`
	TokenIDs     []uint32 `json:"token_ids"`
	FinishReason *string  `json:"finish_reason"`
}

// Usage reports a completion's token counts, with the prompt tokens served from the prefix
// cache (vLLM's prompt_tokens_details.cached_tokens).
type Usage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	TotalTokens         int `json:"total_tokens"`
	PromptTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// CompletionResponse is a completion, or one chunk of a streamed one.
type CompletionResponse struct {
	ID      string             `json:"id"`
	Object  string             `json:"object"`
	Created int64              `json:"created"`
	Model   string             `json:"model"`
	Choices []CompletionChoice `json:"choices"`
	Usage   *Usage             `json:"usage,omitempty"`
}

// errorBody is OpenAI's error shape.
type errorBody struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	var b errorBody
	b.Error.Message, b.Error.Code = fmt.Sprintf(format, args...), code
	b.Error.Type = http.StatusText(code)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(b)
}

// parsePrompt reads a prompt given as text or as token ids.
func parsePrompt(raw json.RawMessage) ([]uint32, error) {
	if len(raw) == 0 {
		return nil, errors.New("prompt is required")
	}
	var text string
	if err := json.Unmarshal(raw, &text); err == nil {
		return workload.Tokenize(nil, text), nil
	}
	var ids []uint32
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, errors.New("prompt must be a string or an array of token ids (non-negative 32-bit integers)")
	}
	return ids, nil
}

// OutputTokens returns the n tokens the engine generates after prompt: a deterministic
// function of the prompt, as greedy decoding would be, so a session's client can rebuild
// its history from the token ids it received.
func OutputTokens(prompt []uint32, n int) []uint32 {
	h := uint64(14695981039346656037)
	for _, t := range prompt {
		h = (h ^ uint64(t)) * 1099511628211
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(workload.Mix64(h+uint64(i)) % workload.Vocab)
	}
	return out
}

// tokenText is the text a token id decodes to.
func tokenText(id uint32) string { return " t" + strconv.FormatUint(uint64(id), 10) }

func (h *Handler) completions(w http.ResponseWriter, r *http.Request) {
	var req CompletionRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBodyBytes)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid JSON body: %v", err)
		return
	}
	if req.Model != "" && req.Model != h.model {
		writeError(w, http.StatusNotFound, "model %q does not exist (this engine serves %q)", req.Model, h.model)
		return
	}
	prompt, err := parsePrompt(req.Prompt)
	if err == nil && len(prompt) == 0 {
		err = errors.New("prompt is empty")
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	maxTokens := defaultMaxTokens
	if req.MaxTokens != nil {
		maxTokens = *req.MaxTokens
	}
	if maxTokens < 1 {
		writeError(w, http.StatusBadRequest, "max_tokens must be at least 1, got %d", maxTokens)
		return
	}
	id := r.Header.Get("X-Request-Id")
	if id == "" {
		id = "cmpl-" + strconv.FormatUint(h.ids.Add(1), 10)
	}
	if len(prompt)+maxTokens > h.eng.live.MaxModelLen() {
		writeError(w, http.StatusBadRequest, "prompt (%d tokens) plus max_tokens (%d) exceed the max model length %d", len(prompt), maxTokens, h.eng.live.MaxModelLen())
		return
	}
	run, err := h.eng.Submit(id, prompt, OutputTokens(prompt, maxTokens))
	switch {
	case errors.Is(err, ErrOverloaded), errors.Is(err, ErrStopped):
		writeError(w, http.StatusServiceUnavailable, "%v", err)
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	c := completion{h: h, w: w, run: run, created: time.Now().Unix(), maxTokens: maxTokens}
	if req.Stream {
		c.stream(r, req.StreamOptions != nil && req.StreamOptions.IncludeUsage)
	} else {
		c.whole(r)
	}
}

// completion answers one request from its token stream.
type completion struct {
	h         *Handler
	w         http.ResponseWriter
	run       *Request
	created   int64
	maxTokens int
}

func (c *completion) response(choices []CompletionChoice, usage *Usage) CompletionResponse {
	return CompletionResponse{ID: c.run.ID, Object: "text_completion", Created: c.created, Model: c.h.model, Choices: choices, Usage: usage}
}

func (c *completion) usage(generated, cached int) *Usage {
	u := &Usage{PromptTokens: c.run.Prompt, CompletionTokens: generated, TotalTokens: c.run.Prompt + generated}
	u.PromptTokensDetails.CachedTokens = cached
	return u
}

// next waits for the next token; false when the stream ended or the client left (aborted).
func (c *completion) next(r *http.Request) (Token, bool) {
	select {
	case t, ok := <-c.run.Tokens:
		return t, ok
	case <-r.Context().Done():
		c.h.eng.Abort(c.run.ID)
		return Token{}, false
	}
}

func (c *completion) whole(r *http.Request) {
	var ch CompletionChoice
	var last Token
	for {
		t, ok := c.next(r)
		if !ok {
			break
		}
		last = t
		ch.TokenIDs = append(ch.TokenIDs, t.ID)
		ch.Text += tokenText(t.ID)
	}
	if !last.Last {
		writeError(c.w, http.StatusServiceUnavailable, "request %s ended after %d of %d tokens", c.run.ID, len(ch.TokenIDs), c.maxTokens)
		return
	}
	reason := "length"
	ch.FinishReason = &reason
	c.w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(c.w).Encode(c.response([]CompletionChoice{ch}, c.usage(last.Generated, last.CachedPrompt)))
}

func (c *completion) stream(r *http.Request, includeUsage bool) {
	c.w.Header().Set("Content-Type", "text/event-stream")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	flusher, _ := c.w.(http.Flusher)
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(c.w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	var last Token
	for {
		t, ok := c.next(r)
		if !ok {
			break
		}
		last = t
		ch := CompletionChoice{Text: tokenText(t.ID), TokenIDs: []uint32{t.ID}}
		if t.Last {
			reason := "length"
			ch.FinishReason = &reason
		}
		if !send(c.response([]CompletionChoice{ch}, nil)) {
			c.h.eng.Abort(c.run.ID)
			return
		}
	}
	if !last.Last {
		return // aborted or the engine stopped: no [DONE], the client sees a cut stream
	}
	if includeUsage && !send(c.response([]CompletionChoice{}, c.usage(last.Generated, last.CachedPrompt))) {
		return
	}
	_, _ = fmt.Fprint(c.w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func (h *Handler) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"object": "list",
		"data": []map[string]any{{
			"id": h.model, "object": "model", "owned_by": "switchyard-engine-sim", "max_model_len": h.eng.live.MaxModelLen(),
		}},
	})
}

// CacheState is GET /debug/cache: the engine's real prefix cache.
type CacheState struct {
	Blocks    int `json:"blocks"` // blocks holding a cached prefix
	BlockSize int `json:"block_size"`
	Running   int `json:"running"`
	Waiting   int `json:"waiting"`
	// NextSeq is the sequence number the next KV-event batch will carry.
	NextSeq uint64 `json:"next_seq"`
	// Hashes are the engine hashes of the cached blocks (only with ?hashes=1).
	Hashes []uint64 `json:"hashes,omitempty"`
}

func (h *Handler) cache(w http.ResponseWriter, r *http.Request) {
	s := h.eng.Snapshot()
	st := CacheState{
		Blocks: s.Stats.CachedBlocks, BlockSize: h.eng.cfg.Engine.BlockSize,
		Running: s.Stats.Running, Waiting: s.Stats.Waiting, NextSeq: s.NextSeq,
	}
	if r.URL.Query().Get("hashes") == "1" {
		st.Hashes = s.CachedHashes
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(st)
}
