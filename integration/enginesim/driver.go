package enginesim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// Driver is a small data plane: it asks the router which replica gets a request, sends the
// request to that engine's completions endpoint, streams the tokens back, and reports the
// request's lifecycle (first token, done with the engine's cached prompt tokens) to the router.
// A request whose engine fails is re-picked among the replicas not tried yet, so no request is
// lost while a replica is dying. Safe for concurrent use.
type Driver struct {
	client   *switchyard.Client
	reporter *switchyard.Reporter
	model    string
	http     *http.Client
	// Resolve maps a replica to its completions base URL ("http://host:port"); nil = the
	// address the replica registered.
	resolve func(replica string) (string, error)
	// Attempts bounds the engines one request tries. 0 = 4.
	attempts int
	timeout  time.Duration
	ids      atomic.Uint64
	prefix   string

	mu    sync.Mutex
	addrs map[string]string
}

// DriverConfig configures a Driver.
type DriverConfig struct {
	// Router is the router's gRPC address (required).
	Router string
	// Model is the model requests are for (required).
	Model string
	// Resolve maps a replica id to the base URL the driver reaches it at; nil = the replica's
	// registered address.
	Resolve func(replica string) (string, error)
	// Attempts bounds the engines one request tries (0 = 4).
	Attempts int
	// RequestTimeout bounds one attempt on one engine (0 = 30s). A network partition shows up
	// as a timeout, after which the request moves on.
	RequestTimeout time.Duration
	// IDPrefix starts every request id (default "req").
	IDPrefix string
}

// NewDriver dials the router and starts the lifecycle reporter. Close releases them.
func NewDriver(cfg DriverConfig) (*Driver, error) {
	if cfg.Router == "" || cfg.Model == "" {
		return nil, fmt.Errorf("%w: driver needs a router address and a model", ErrInvalid)
	}
	c, err := switchyard.Dial(cfg.Router, switchyard.WithTimeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	rep, err := c.NewReporter()
	if err != nil {
		c.Close()
		return nil, err
	}
	d := &Driver{
		client: c, reporter: rep, model: cfg.Model, resolve: cfg.Resolve,
		attempts: cfg.Attempts, timeout: cfg.RequestTimeout, prefix: cfg.IDPrefix,
		http: &http.Client{}, addrs: map[string]string{},
	}
	if d.attempts <= 0 {
		d.attempts = 4
	}
	if d.timeout <= 0 {
		d.timeout = 30 * time.Second
	}
	if d.prefix == "" {
		d.prefix = "req"
	}
	return d, nil
}

// Client returns the driver's router client.
func (d *Driver) Client() *switchyard.Client { return d.client }

// Close flushes pending lifecycle events and closes the connections.
func (d *Driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := d.reporter.Close(ctx)
	if cerr := d.client.Close(); err == nil {
		err = cerr
	}
	d.http.CloseIdleConnections()
	return err
}

// Attempt is one try of a request on one replica.
type Attempt struct {
	Replica  string
	PickedAt time.Time // when the pick was asked for
	// PredictedCached is the router's predicted cached prompt tokens on that replica.
	PredictedCached int64
	Err             error // nil when the engine served the request
}

// Turn is the outcome of one request.
type Turn struct {
	RequestID string
	Session   string
	Attempts  []Attempt // in order; the last one succeeded unless Err is set
	Output    []uint32  // generated tokens
	// EngineCached is the prompt tokens the serving engine found cached.
	EngineCached int
	Err          error // set when every attempt failed
}

// Replica is the replica that served the turn ("" when none did).
func (t *Turn) Replica() string {
	if t.Err != nil || len(t.Attempts) == 0 {
		return ""
	}
	return t.Attempts[len(t.Attempts)-1].Replica
}

// Do runs one request of session with prompt, generating maxTokens tokens, on any replica.
func (d *Driver) Do(ctx context.Context, session string, prompt []uint32, maxTokens int) Turn {
	return d.DoOn(ctx, session, prompt, maxTokens, nil)
}

// DoOn is Do restricted to the candidate replicas (nil = all).
func (d *Driver) DoOn(ctx context.Context, session string, prompt []uint32, maxTokens int, candidates []string) Turn {
	base := fmt.Sprintf("%s-%d", d.prefix, d.ids.Add(1))
	t := Turn{RequestID: base, Session: session}
	var tried []string
	for try := 0; try < d.attempts; try++ {
		id := base
		if try > 0 {
			id = fmt.Sprintf("%s-retry%d", base, try)
		}
		a, out, cached, err := d.attempt(ctx, id, session, prompt, maxTokens, candidates, tried)
		t.Attempts = append(t.Attempts, a)
		if err == nil {
			t.Output, t.EngineCached = out, cached
			return t
		}
		if ctx.Err() != nil {
			t.Err = ctx.Err()
			return t
		}
		if a.Replica != "" {
			tried = append(tried, a.Replica)
		} else {
			time.Sleep(100 * time.Millisecond) // no replica could be picked: let the fleet settle
		}
	}
	t.Err = fmt.Errorf("request %s: every attempt failed: %w", base, t.Attempts[len(t.Attempts)-1].Err)
	return t
}

// attempt picks a replica outside exclude and runs the request there.
func (d *Driver) attempt(ctx context.Context, id, session string, prompt []uint32, maxTokens int, only, exclude []string) (Attempt, []uint32, int, error) {
	a := Attempt{PickedAt: time.Now()}
	req := &v1.PickReplicaRequest{
		RequestId: id, Model: d.model, SessionId: session,
		Prompt: switchyard.TokenPrompt(prompt), Candidates: only,
	}
	if len(exclude) > 0 {
		cands, err := d.candidates(ctx, only, exclude)
		if err != nil {
			a.Err = err
			return a, nil, 0, err
		}
		req.Candidates = cands
	}
	resp, err := d.client.Pick(ctx, req)
	if err != nil {
		a.Err = fmt.Errorf("pick: %w", err)
		return a, nil, 0, a.Err
	}
	a.Replica, a.PredictedCached = resp.GetReplicaId(), resp.GetCachedTokens()
	out, cached, err := d.send(ctx, id, a.Replica, prompt, maxTokens)
	status := v1.CompletionStatus_COMPLETION_STATUS_OK
	if err != nil {
		status = v1.CompletionStatus_COMPLETION_STATUS_ERROR
		a.Err = err
	}
	done := switchyard.Done(id, a.Replica, int64(len(out)), status)
	done.GetDone().CachedPromptTokens = int64(cached)
	_ = d.reporter.Report(done)
	return a, out, cached, err
}

// candidates lists only (or the model's replicas when nil) minus exclude.
func (d *Driver) candidates(ctx context.Context, only, exclude []string) ([]string, error) {
	if only == nil {
		reps, err := d.client.ListReplicas(ctx, d.model)
		if err != nil {
			return nil, fmt.Errorf("list replicas: %w", err)
		}
		for _, r := range reps {
			only = append(only, r.GetReplica().GetId())
		}
	}
	var out []string
	for _, id := range only {
		if !slices.Contains(exclude, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no replica left to try (tried %v)", exclude)
	}
	return out, nil
}

// baseURL returns where replica's completions endpoint is.
func (d *Driver) baseURL(ctx context.Context, replica string) (string, error) {
	if d.resolve != nil {
		return d.resolve(replica)
	}
	d.mu.Lock()
	u, ok := d.addrs[replica]
	d.mu.Unlock()
	if ok {
		return u, nil
	}
	reps, err := d.client.ListReplicas(ctx, d.model)
	if err != nil {
		return "", err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, r := range reps {
		d.addrs[r.GetReplica().GetId()] = strings.TrimSuffix(r.GetReplica().GetAddress(), "/")
	}
	if u, ok := d.addrs[replica]; ok && u != "" {
		return u, nil
	}
	return "", fmt.Errorf("replica %q has no address", replica)
}

// send streams the request from the engine, reporting the first token.
func (d *Driver) send(ctx context.Context, id, replica string, prompt []uint32, maxTokens int) ([]uint32, int, error) {
	base, err := d.baseURL(ctx, replica)
	if err != nil {
		return nil, 0, err
	}
	body, err := json.Marshal(map[string]any{
		"model": d.model, "prompt": prompt, "max_tokens": maxTokens, "stream": true,
		"stream_options": map[string]bool{"include_usage": true},
	})
	if err != nil {
		return nil, 0, err
	}
	rctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(rctx, http.MethodPost, base+"/v1/completions", bytes.NewReader(body))
	if err != nil {
		return nil, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", id)
	resp, err := d.http.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("engine %s: %w", replica, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, 0, fmt.Errorf("engine %s: HTTP %d", replica, resp.StatusCode)
	}
	var out []uint32
	cached, finished := 0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			finished = true
			break
		}
		var c CompletionResponse
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			return out, cached, fmt.Errorf("engine %s: bad chunk: %w", replica, err)
		}
		for _, ch := range c.Choices {
			if len(out) == 0 && len(ch.TokenIDs) > 0 {
				_ = d.reporter.Report(switchyard.FirstToken(id, replica))
			}
			out = append(out, ch.TokenIDs...)
		}
		if c.Usage != nil {
			cached = c.Usage.PromptTokensDetails.CachedTokens
		}
	}
	if err := sc.Err(); err != nil {
		return out, cached, fmt.Errorf("engine %s: stream: %w", replica, err)
	}
	if !finished || len(out) != maxTokens {
		return out, cached, fmt.Errorf("engine %s: %w after %d of %d tokens", replica, errCut, len(out), maxTokens)
	}
	return out, cached, nil
}

// errCut reports a stream that ended before its last token.
var errCut = errors.New("stream cut")
