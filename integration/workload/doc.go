// Package workload reads and generates the request streams that switchyard's fleet simulator
// replays, and decides when each request is issued.
//
// Every workload has one shape, that of the Mooncake traces: a request is an arrival
// timestamp, prompt and output lengths, and the prompt's 512-token block ids ("hash ids"),
// where equal ids at equal positions mean equal tokens. Two optional fields extend it:
// session_id groups the turns of a multi-turn session, and delay (ms) issues a turn that long
// after the previous turn of its session completes. Readers for the Mooncake JSONL files, the
// agent-session text traces and the Azure CSV traces, and generators for RL rollouts with
// stragglers and for heterogeneous multi-turn sessions, all produce this shape, so any workload
// can be written to one JSONL file and replayed from it.
//
// Token ids are derived from block ids deterministically (ExpandBlock), so prompts that share
// ids share token prefixes. A partial last block holds the first tokens of its id's
// expansion, so a later prompt that continues the same content may reuse the id. A turn's
// generated tokens are the tokens its session's next prompt continues with, when that prompt
// extends the current one, as in agent and RL sessions; otherwise they are unique. This models
// vLLM's caching of output blocks.
//
// A Driver turns a workload into arrivals: open loop at the trace timestamps (speed-up and
// jitter for quantised timestamps) or closed loop (N concurrent sessions, each turn after the
// previous one completes plus think time).
package workload
