// Package sim is switchyard's fleet simulator: a deterministic discrete-event simulation of
// vLLM-like engine replicas driven by a workload and routed by the real scoring and index
// code, in process.
//
// Each replica runs vLLM V1's scheduler loop: one step at a time with a token budget and a cap
// on running sequences, running requests first (decode tokens or the next chunk of a chunked
// prefill), then waiting requests FCFS while budget and KV blocks last; on KV exhaustion the
// most recently admitted request is preempted (its blocks freed, recomputed later). The KV
// cache is paged with prefix caching: blocks are hashed by the engine with its own chained
// hash (seeded per replica, like vLLM's per-process root hash), a finished request's blocks go
// to an LRU free pool tail block first, and allocation evicts the least recently freed block.
// Step times come from a pluggable StepModel (Dynamo's polynomial by default, or a roofline).
//
// The engines talk to the router as real ones do: every newly full block is published as a
// BlockStored event (engine hashes, parent engine hash, token ids, block size) and every
// eviction as BlockRemoved, through scoring.Router.ApplyStored / ApplyRemoved, at the end of the
// step that produced them; a data plane's lifecycle events (first token, progress every k
// tokens, done with the engine's cached prompt tokens) go through Router.ApplyLifecycle. The
// router's clock is the simulated clock, so predicted-entry TTLs and request expiry follow
// simulated time.
//
// Same workload, configuration and seed give the same Result: nothing reads the wall clock or
// iterates a map in an order that matters.
package sim
