package server

import (
	"sync"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

// KVCounters totals KV-event ingestion over every source (the gRPC stream
// and vLLM's native ZMQ stream), so nothing dropped goes unseen.
type KVCounters struct {
	mu       sync.Mutex
	batches  map[string]int64 // by source
	applied  map[string]int64 // by event kind
	rejected map[string]int64 // by reason
	gaps     map[string]int64 // by source
	restarts map[string]int64 // by source

	zmq func() vllm.Counters // the ZMQ subscriber's own counters, when there is one
}

// KVCountersSnapshot is a copy of the counters, for metrics and tests.
type KVCountersSnapshot struct {
	Batches  map[string]int64 // batches applied, by source ("grpc", "zmq")
	Applied  map[string]int64 // events applied, by kind ("stored", "removed", "cleared")
	Rejected map[string]int64 // events rejected, by reason
	Gaps     map[string]int64 // sequence gaps, by source
	Restarts map[string]int64 // sequence resets (engine restarts), by source
	// ZMQ holds the vLLM ZMQ subscriber's counters: its gaps, replays,
	// restarts, resets, reconnects, malformed frames and dropped events.
	ZMQ vllm.Counters
}

// KV event sources.
const (
	SourceGRPC = "grpc"
	SourceZMQ  = "zmq"
)

func (c *KVCounters) add(m *map[string]int64, key string, n int64) {
	if n == 0 {
		return
	}
	c.mu.Lock()
	if *m == nil {
		*m = map[string]int64{}
	}
	(*m)[key] += n
	c.mu.Unlock()
}

func (c *KVCounters) batch(source string)           { c.add(&c.batches, source, 1) }
func (c *KVCounters) applyOK(kind string)           { c.add(&c.applied, kind, 1) }
func (c *KVCounters) reject(reason string, n int64) { c.add(&c.rejected, reason, n) }
func (c *KVCounters) gap(source string)             { c.add(&c.gaps, source, 1) }
func (c *KVCounters) restart(source string)         { c.add(&c.restarts, source, 1) }

// Snapshot returns a copy of the counters.
func (c *KVCounters) Snapshot() KVCountersSnapshot {
	var zmq vllm.Counters
	if c.zmq != nil {
		zmq = c.zmq()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	cp := func(m map[string]int64) map[string]int64 {
		out := make(map[string]int64, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	snap := KVCountersSnapshot{
		Batches: cp(c.batches), Applied: cp(c.applied), Rejected: cp(c.rejected),
		Gaps: cp(c.gaps), Restarts: cp(c.restarts), ZMQ: zmq,
	}
	if c.zmq != nil {
		snap.Gaps[SourceZMQ] = int64(zmq.Gaps)
		snap.Restarts[SourceZMQ] = int64(zmq.Restarts)
	}
	return snap
}
