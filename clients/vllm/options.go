package vllm

import (
	"fmt"
	"log/slog"
	"time"
)

// options holds a Subscriber's tunables; see the With* functions for defaults.
type options struct {
	logger        *slog.Logger
	limits        Limits
	replayTimeout time.Duration
	dialTimeout   time.Duration
	maxReplayGap  uint64
	backoffMin    time.Duration
	backoffMax    time.Duration
}

func defaultOptions() options {
	return options{
		logger:        slog.Default(),
		limits:        DefaultLimits(),
		replayTimeout: 5 * time.Second,
		dialTimeout:   5 * time.Second,
		maxReplayGap:  10000,
		backoffMin:    100 * time.Millisecond,
		backoffMax:    5 * time.Second,
	}
}

func (o options) validate() error {
	switch {
	case o.logger == nil:
		return fmt.Errorf("%w: nil logger", ErrInvalidConfig)
	case o.replayTimeout <= 0, o.dialTimeout <= 0:
		return fmt.Errorf("%w: replay and dial timeouts must be positive", ErrInvalidConfig)
	case o.maxReplayGap == 0:
		return fmt.Errorf("%w: max replay gap must be positive", ErrInvalidConfig)
	case o.backoffMin <= 0 || o.backoffMax < o.backoffMin:
		return fmt.Errorf("%w: backoff wants 0 < min <= max, got %v..%v", ErrInvalidConfig, o.backoffMin, o.backoffMax)
	}
	return o.limits.Validate()
}

// Option configures a Subscriber.
type Option func(*options)

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.logger = l } }

// WithLimits sets the decoding limits (default DefaultLimits()).
func WithLimits(l Limits) Option { return func(o *options) { o.limits = l } }

// WithReplayTimeout bounds one replay exchange, connect to end marker
// (default 5s). A replay that does not finish in time counts as failed, so a
// dead replay socket delays its own replica's stream by at most this much.
func WithReplayTimeout(d time.Duration) Option { return func(o *options) { o.replayTimeout = d } }

// WithDialTimeout bounds one TCP connect (default 5s).
func WithDialTimeout(d time.Duration) Option { return func(o *options) { o.dialTimeout = d } }

// WithMaxReplayGap sets the most batches one replay may fetch (default
// 10000, vLLM's default buffer_steps). A larger gap resets the replica
// without trying, since the engine cannot have kept it.
func WithMaxReplayGap(n uint64) Option { return func(o *options) { o.maxReplayGap = n } }

// WithBackoff sets the reconnect backoff, doubling from min to max (default
// 100ms to 5s). It restarts from min once a connection delivers a message.
func WithBackoff(min, max time.Duration) Option {
	return func(o *options) { o.backoffMin, o.backoffMax = min, max }
}
