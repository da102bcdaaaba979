package server

import (
	"log/slog"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"
)

// Config holds the server's limits. The zero value of each field selects its
// documented default, so Config{} is a working configuration.
type Config struct {
	// MaxPromptTokens is the largest prompt PickReplica accepts, in tokens
	// (token ids, blocks × block size, or prompt_tokens). Default 1,048,576.
	MaxPromptTokens int
	// MaxPromptTextBytes is the largest text prompt accepted. Default 8 MiB.
	MaxPromptTextBytes int
	// MaxCandidates is the most candidates one PickReplica may list.
	// Default 256.
	MaxCandidates int
	// MaxBatchEvents is the most events in one lifecycle or KV batch.
	// Default 10,000.
	MaxBatchEvents int
	// MaxIDBytes bounds request, replica and session ids. Default 256.
	MaxIDBytes int
	// MaxMessageBytes bounds one incoming message on every transport.
	// Default 64 MiB (a 1M-token prompt as token ids needs up to ~5 MiB).
	MaxMessageBytes int
	// AuditCapacity is how many recent decisions the audit log keeps.
	// Default 10,000.
	AuditCapacity int
	// Logger receives the server's logs; nil = slog.Default().
	Logger *slog.Logger

	// TracerProvider makes a server span per switchyard RPC and a decision
	// span per PickReplica; nil turns tracing off (no span is started).
	TracerProvider trace.TracerProvider
	// Propagator reads callers' trace context from request headers; nil =
	// W3C trace context and baggage.
	Propagator propagation.TextMapPropagator
	// SpanCandidates caps the candidate events of one decision span (the
	// best ranked are kept). Default 16.
	SpanCandidates int
	// Resource describes this process in /metrics (target_info); nil = the
	// OpenTelemetry SDK's default.
	Resource *resource.Resource
	// Liveness configures replica heartbeats and health probes; the zero
	// value turns the checks off.
	Liveness LivenessConfig
	// AuditFile, when set, receives every recorded decision as a JSON line.
	// The caller closes it after Shutdown.
	AuditFile *AuditFile
	// Pprof serves Go's profiles under /debug/pprof/ on the server's port (see
	// pprof.go). Off by default: profiles expose internals and cost CPU.
	Pprof bool
}

// Defaults of Config's fields.
const (
	DefaultMaxPromptTokens    = 1 << 20
	DefaultMaxPromptTextBytes = 8 << 20
	DefaultMaxCandidates      = 256
	DefaultMaxBatchEvents     = 10_000
	DefaultMaxIDBytes         = 256
	DefaultMaxMessageBytes    = 64 << 20
	DefaultAuditCapacity      = 10_000
	DefaultSpanCandidates     = 16
)

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.MaxPromptTokens, DefaultMaxPromptTokens)
	def(&c.MaxPromptTextBytes, DefaultMaxPromptTextBytes)
	def(&c.MaxCandidates, DefaultMaxCandidates)
	def(&c.MaxBatchEvents, DefaultMaxBatchEvents)
	def(&c.MaxIDBytes, DefaultMaxIDBytes)
	def(&c.MaxMessageBytes, DefaultMaxMessageBytes)
	def(&c.AuditCapacity, DefaultAuditCapacity)
	def(&c.SpanCandidates, DefaultSpanCandidates)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c
}
