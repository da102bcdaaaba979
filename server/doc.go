// Package server is switchyard's face: it serves the switchyard.v1 API over
// gRPC (grpc-go's own HTTP/2 transport, for speed), and over Connect, gRPC-Web
// and JSON on HTTP/1.1 or h2c (connect-go), all on one port, plus the gRPC
// health and reflection services, Prometheus /metrics and, behind a flag,
// /debug/pprof.
//
// It maps the wire to scoring's domain types and back, validates every
// request (InvalidArgument naming the field, nothing stored from a rejected
// request), maps domain errors to gRPC codes, and keeps the in-memory audit
// log of recent decisions. It also owns the transports' edges of the domain:
// KV events from engine streams (gRPC, and vLLM's native ZMQ stream through
// clients/vllm), replica liveness (health probes and heartbeats), and the
// telemetry of every call (OpenTelemetry traces and metrics). It holds no
// routing policy: every decision is scoring's.
package server
