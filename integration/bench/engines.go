package bench

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/integration/workload"
)

// Shapes of the simulated engines' KV events.
const (
	engineBlockTokens = 16  // engine block size (the router's default; a multiple of it works too)
	fillerChainBlocks = 32  // blocks per filler chain (one Stored event)
	promptEventBlocks = 256 // most blocks per Stored event when a prompt is preloaded
	eventsPerPublish  = 64  // most events per PublishKVEvents message
	kvTick            = 10 * time.Millisecond
	windowChains      = 64 // filler chains an engine keeps when nothing was preloaded
)

// engine is one simulated replica's KV-event publisher: it stores chains of blocks (with token
// ids, as vLLM reports them) and removes its oldest filler chains, so the index it feeds keeps
// a steady size while the events flow.
type engine struct {
	pub     *switchyard.KVPublisher
	id      int
	next    uint64     // engine hashes handed out (per engine, offset by id)
	chains  [][]uint64 // filler chains held, oldest first (removable)
	batch   []*v1.KVEvent
	blocks  atomic.Int64 // block events queued (stored blocks plus removed hashes)
	replace bool         // the steady state removes a chain per chain stored
	ids     *atomic.Uint64
}

func newEngine(pub *switchyard.KVPublisher, id int, chainIDs *atomic.Uint64) *engine {
	return &engine{pub: pub, id: id, next: uint64(id+1) << 40, ids: chainIDs}
}

func (e *engine) hash() uint64 {
	e.next++
	return workload.Mix64(e.next)
}

// store queues a Stored event of the blocks of toks (whole blocks only) chained after parent
// (0 = none) and returns the engine hashes.
func (e *engine) store(toks []uint32, parent uint64) []uint64 {
	n := len(toks) / engineBlockTokens
	hs := make([]uint64, n)
	for i := range hs {
		hs[i] = e.hash()
	}
	s := &v1.BlockStored{BlockHashes: hs, TokenIds: toks[:n*engineBlockTokens], BlockSize: engineBlockTokens}
	if parent != 0 {
		s.ParentBlockHash = &parent
	}
	e.batch = append(e.batch, switchyard.StoredEvent(s))
	e.blocks.Add(int64(n))
	return hs
}

// storeFiller queues a new filler chain of unique content.
func (e *engine) storeFiller() {
	c := e.ids.Add(1)
	toks := make([]uint32, fillerChainBlocks*engineBlockTokens)
	for j := range toks {
		toks[j] = tokenAt(1<<15, c, uint64(j))
	}
	e.chains = append(e.chains, e.store(toks, 0))
}

// removeOldest queues the removal of the oldest filler chain, if any.
func (e *engine) removeOldest() {
	if len(e.chains) == 0 {
		return
	}
	hs := e.chains[0]
	e.chains[0] = nil
	e.chains = e.chains[1:]
	e.batch = append(e.batch, switchyard.RemovedEvent(v1.Tier_TIER_DEVICE, hs...))
	e.blocks.Add(int64(len(hs)))
}

// flush publishes the queued events.
func (e *engine) flush(ctx context.Context) error {
	for len(e.batch) > 0 {
		n := min(len(e.batch), eventsPerPublish)
		if err := e.pub.Publish(ctx, e.batch[:n]...); err != nil {
			return fmt.Errorf("engine %d: %w", e.id, err)
		}
		clear(e.batch[:n])
		e.batch = e.batch[n:]
	}
	e.batch = e.batch[:0:0]
	return nil
}

// preloadPrompt stores a prompt's whole blocks as a chain of events.
func (e *engine) preloadPrompt(toks []uint32) int {
	var parent uint64
	blocks := 0
	for from := 0; from+engineBlockTokens <= len(toks); from += promptEventBlocks * engineBlockTokens {
		to := min(len(toks), from+promptEventBlocks*engineBlockTokens)
		hs := e.store(toks[from:to], parent)
		parent = hs[len(hs)-1]
		blocks += len(hs)
	}
	return blocks
}

// steady publishes filler chains and removals at rate block events per second until ctx ends.
// With filler preloaded, each new chain replaces the oldest; without, the engine keeps its last
// windowChains chains. A failed publish is passed to fail and the engine goes on (the next
// publish opens a new stream, which resynchronises the engine's entries).
func (e *engine) steady(ctx context.Context, rate float64, fail func(error)) {
	if rate <= 0 {
		<-ctx.Done()
		return
	}
	tick := time.NewTicker(kvTick)
	defer tick.Stop()
	last := time.Now()
	budget := 0.0
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			budget += rate * now.Sub(last).Seconds()
			last = now
		}
		for budget >= fillerChainBlocks {
			e.storeFiller()
			budget -= fillerChainBlocks
			if e.replace || len(e.chains) > windowChains {
				e.removeOldest()
				budget -= fillerChainBlocks
			}
		}
		if err := e.flush(ctx); err != nil && ctx.Err() == nil {
			fail(err)
			e.batch = e.batch[:0:0]
		}
	}
}
