package enginesim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard-llm/switchyard/clients/vllm"
	"github.com/switchyard-llm/switchyard/integration/sim"
)

// mirror is a vllm.Sink that keeps the set of engine hashes the events say are cached.
type mirror struct {
	mu      sync.Mutex
	blocks  map[uint64]bool
	resets  int
	removed int // BlockRemoved events seen
}

func (m *mirror) ApplyBatch(_ context.Context, b vllm.Batch) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ev := range b.Events {
		for _, h := range ev.BlockHashes {
			if ev.Kind == vllm.BlockStored {
				m.blocks[h] = true
			} else {
				delete(m.blocks, h)
			}
		}
		if ev.Kind == vllm.BlockRemoved {
			m.removed++
		}
		if ev.Kind == vllm.AllBlocksCleared {
			clear(m.blocks)
		}
	}
	return nil
}

func (m *mirror) ResetReplica(context.Context, string, int, vllm.ResetReason) {
	m.mu.Lock()
	defer m.mu.Unlock()
	clear(m.blocks)
	m.resets++
}

func (m *mirror) hashes() []uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]uint64, 0, len(m.blocks))
	for h := range m.blocks {
		out = append(out, h)
	}
	slices.Sort(out)
	return out
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// startService runs an engine-sim on loopback ports with a small, fast engine.
func startService(t *testing.T, enc Encoding) *Service {
	t.Helper()
	cfg := NewConfig()
	cfg.Model, cfg.Listen, cfg.Encoding, cfg.Logger = "m", "127.0.0.1:0", enc, quietLogger()
	cfg.Engine = EngineConfig{Engine: sim.EngineConfig{BlockSize: 4, NumBlocks: 24, MaxBatchedTokens: 64, MaxSeqs: 8}, Speedup: 50, Seed: 7}
	cfg.KVEvents = PublisherConfig{Endpoint: "tcp://127.0.0.1:0", Bind: true, ReplayEndpoint: "tcp://127.0.0.1:0", Topic: "kv@test"}
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// complete streams one completion and returns its token ids and usage.
func complete(t *testing.T, addr, id string, prompt []uint32, maxTokens int) ([]uint32, Usage) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": "m", "prompt": prompt, "max_tokens": maxTokens, "stream": true, "stream_options": map[string]bool{"include_usage": true}})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/v1/completions", bytes.NewReader(body))
	req.Header.Set("X-Request-Id", id)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("HTTP %d: %s", resp.StatusCode, b)
	}
	var toks []uint32
	var usage *Usage
	done := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if line == "[DONE]" {
			done = true
			break
		}
		var c CompletionResponse
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("chunk %q: %v", line, err)
		}
		for _, ch := range c.Choices {
			toks = append(toks, ch.TokenIDs...)
		}
		if c.Usage != nil {
			usage = c.Usage
		}
	}
	if !done || usage == nil {
		t.Fatalf("stream ended without usage and [DONE] (tokens %d)", len(toks))
	}
	return toks, *usage
}

func cacheState(t *testing.T, addr string) CacheState {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/debug/cache?hashes=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st CacheState
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	slices.Sort(st.Hashes)
	return st
}

// waitMirror waits until the subscriber's view equals the engine's cache.
func waitMirror(t *testing.T, m *mirror, addr string) CacheState {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := cacheState(t, addr)
		got := m.hashes()
		if slices.Equal(got, st.Hashes) {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("subscriber holds %d blocks, engine caches %d:\n got %v\nwant %v", len(got), len(st.Hashes), got, st.Hashes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestServiceEventsMirrorCache drives completions through the HTTP API while a clients/vllm
// Subscriber follows the engine's sockets, and checks that the events (live, caught up on
// first contact, and replayed after a gap) reproduce the engine's real prefix cache.
func TestServiceEventsMirrorCache(t *testing.T) {
	for _, enc := range []Encoding{EncodingArray, EncodingMap} {
		t.Run(string(enc), func(t *testing.T) {
			s := startService(t, enc)
			addr := s.HTTPAddr()
			prefix := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
			// Before any subscriber: these batches are only reachable through replay.
			toks, u := complete(t, addr, "r0", prefix, 6)
			if len(toks) != 6 || u.CompletionTokens != 6 || u.PromptTokens != len(prefix) {
				t.Fatalf("first completion: %d tokens, usage %+v", len(toks), u)
			}
			if want := OutputTokens(prefix, 6); !slices.Equal(toks, want) {
				t.Fatalf("tokens %v, want %v", toks, want)
			}

			m := &mirror{blocks: map[uint64]bool{}}
			sub, err := vllm.New(m, vllm.WithLogger(quietLogger()), vllm.WithBackoff(10*time.Millisecond, 50*time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			ep := vllm.Endpoint{Replica: "e", Live: s.Pub.LiveAddr(), Replay: s.Pub.ReplayAddr(), Topic: "kv@"}
			if err := sub.Add(ep); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			subDone := make(chan struct{})
			go func() { defer close(subDone); _ = sub.Run(ctx) }()
			t.Cleanup(func() { cancel(); <-subDone })
			time.Sleep(100 * time.Millisecond) // let the SUB connect (PUB drops messages before that)

			// A second turn extends the first: its prompt hits the cache.
			turn2 := append(append(slices.Clone(prefix), toks...), 21, 22, 23)
			_, u2 := complete(t, addr, "r1", turn2, 5)
			if u2.PromptTokensDetails.CachedTokens < 12 {
				t.Errorf("second turn cached %d prompt tokens, want >= 12", u2.PromptTokensDetails.CachedTokens)
			}
			st := waitMirror(t, m, addr)
			if st.Blocks == 0 || st.Blocks != len(st.Hashes) {
				t.Fatalf("engine reports %d blocks and %d hashes", st.Blocks, len(st.Hashes))
			}

			// A gap: batches buffered but not sent live, then one sent live.
			s.Pub.SetPaused(true)
			for i := range 4 {
				complete(t, addr, fmt.Sprintf("gap-%d", i), []uint32{uint32(100 + 10*i), 2, 3, 4, 5, 6, 7, 8, 9}, 8)
			}
			s.Pub.SetPaused(false)
			complete(t, addr, "after", []uint32{50, 51, 52, 53, 54, 55, 56, 57, 58}, 8)
			waitMirror(t, m, addr)
			m.mu.Lock()
			removed := m.removed
			m.mu.Unlock()
			if removed == 0 {
				t.Error("no BlockRemoved event: the workload should overflow the 24-block cache")
			}
			c := sub.Stats()
			if c.ReplayedBatches == 0 || c.Gaps == 0 {
				t.Errorf("counters %+v: want replayed batches for the initial catch-up and the gap", c)
			}
			if m.resets != 0 {
				t.Errorf("%d resets, want none (every gap was replayable)", m.resets)
			}
		})
	}
}
