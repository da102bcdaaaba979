// Package bench is switchyard's load harness: it drives a running router over the real wire
// the way a fleet does, and measures what that costs.
//
// While it runs, three kinds of traffic share the connection to the router:
//
//   - PickReplica calls, over gRPC or Connect, at a fixed rate (open loop: each call is due at
//     its scheduled time, and a call that had to wait for a free caller counts its latency from
//     then, so a slow server cannot hide its queueing) or closed loop (N workers, each sending its next call when the previous one
//     returned). Prompts come from a Prompts source: synthetic token prompts with a shared
//     prefix, or a Mooncake trace whose hash ids are expanded to tokens.
//   - Lifecycle events for every successful pick (admitted, first token, progress, done after
//     simulated prefill and decode times), streamed in batches through the Go client's Reporter
//     as a data plane would.
//   - KV-cache events from simulated engines, one KVPublisher stream per replica, publishing
//     BlockStored chains and removing old ones at a set total rate of block events per second.
//
// Before measuring, the engines preload the index (the prompt pool on the replicas, then filler
// chains up to a block count), and a warm-up runs the full load unmeasured. Run returns a
// Result: pick latency percentiles (p50/p90/p99/p99.9) from a log-linear histogram, achieved
// picks/s, lifecycle and KV events/s as confirmed by the server, errors by kind, and, when the
// server runs on this machine, its CPU use and resident memory sampled from /proc every second
// (with the RSS trend, to tell a stable footprint from a leak). A progress line is redrawn on
// a writer every second.
package bench
