package containers

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/switchyard-llm/switchyard/integration/enginesim"
)

// traffic runs multi-turn sessions on a few workers until stopped, recording every turn.
// Stopping lets each worker finish its current turn, so no request is cut by the test.
type traffic struct {
	stopping atomic.Bool
	wg       sync.WaitGroup
	mu       sync.Mutex
	turns    []enginesim.Turn
	prompts  map[string][]uint32 // request id -> prompt
}

// sessionShape is the token sizes of the sessions the tests drive.
const (
	systemTokens = 1024
	userTokens   = 64
	outputTokens = 16
	sessionTurns = 4
)

// startTraffic runs workers sessions of sessionTurns turns each, one after another, with
// system prompts numbered from sys (distinct per worker and session).
func startTraffic(ctx context.Context, d *enginesim.Driver, name string, workers, sys int) *traffic {
	tr := &traffic{prompts: map[string][]uint32{}}
	for w := range workers {
		tr.wg.Go(func() {
			for n := 0; !tr.stopping.Load() && ctx.Err() == nil; n++ {
				id := fmt.Sprintf("%s-w%d-s%d", name, w, n)
				s := enginesim.NewSession(id, enginesim.SystemPrompt(sys+1000*w+n, systemTokens), uint64(sys+1000*w+n))
				for range sessionTurns {
					if tr.stopping.Load() {
						return
					}
					p := s.Prompt(userTokens)
					t := d.Do(ctx, s.ID, p, outputTokens)
					tr.record(t, p)
					if t.Err != nil {
						break
					}
					s.Reply(t.Output)
				}
			}
		})
	}
	return tr
}

func (tr *traffic) record(t enginesim.Turn, prompt []uint32) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.turns = append(tr.turns, t)
	tr.prompts[t.RequestID] = prompt
}

// stop waits for the workers to finish their turns and returns every turn.
func (tr *traffic) stop() []enginesim.Turn {
	tr.stopping.Store(true)
	tr.wg.Wait()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]enginesim.Turn(nil), tr.turns...)
}

// failed returns the turns no engine served.
func failed(turns []enginesim.Turn) []enginesim.Turn {
	var out []enginesim.Turn
	for _, t := range turns {
		if t.Err != nil {
			out = append(out, t)
		}
	}
	return out
}
