// Package enginesim runs one simulated vLLM replica as a real network service, so that
// switchyard can be tested as a fleet of processes without a GPU.
//
// The engine is integration/sim's model (vLLM V1's scheduler over a paged, prefix-cached KV
// cache, with step times from a StepModel) run in wall-clock time, optionally sped up. Around
// it the package speaks what a vLLM server speaks:
//
//   - an OpenAI-style completions endpoint (POST /v1/completions) that takes token ids or text
//     and streams the generated tokens as server-sent events at the model's pace;
//   - vLLM's KV-cache events on ZeroMQ: a PUB socket sending [topic, seq, msgpack EventBatch]
//     per engine step that changed the prefix cache, and a ROUTER socket answering replay
//     requests from the last BufferSteps batches, in either event encoding vLLM has used;
//   - vLLM-style Prometheus metrics (GET /metrics) and GET /health;
//   - GET /debug/cache, the engine's real prefix-cache contents, so tests can compare the
//     router's index with it.
//
// Optionally the engine registers itself with a switchyard router (with its KV-event endpoints)
// and heartbeats, re-registering when the router forgot it (after a router restart).
package enginesim
