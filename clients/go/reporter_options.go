package switchyard

import (
	"fmt"
	"time"
)

// Reporter defaults.
const (
	DefaultBatchSize     = 512
	DefaultFlushInterval = 5 * time.Millisecond
	DefaultBufferSize    = 65536
	DefaultBackoffMin    = 50 * time.Millisecond
	DefaultBackoffMax    = 5 * time.Second
	DefaultConfirmEvents = 10000
	DefaultConfirmAge    = time.Second
	// IdleClose is how long a stream may sit unused before the reporter
	// closes it, which confirms its events and lets servers shut down
	// gracefully without waiting for it.
	IdleClose = 50 * time.Millisecond
	// maxServerBatch is the server's default per-message event limit.
	maxServerBatch = 10000
)

// ReporterOption configures a Reporter.
type ReporterOption func(*reporterConfig)

type reporterConfig struct {
	batch         int
	flush         time.Duration
	buffer        int
	backoffMin    time.Duration
	backoffMax    time.Duration
	confirmEvents int
	confirmAge    time.Duration
}

// WithBatchSize sets the most events per stream message (default
// DefaultBatchSize, at most 10,000, the server's default limit). A full batch
// is sent at once, without waiting for the flush interval.
func WithBatchSize(n int) ReporterOption { return func(c *reporterConfig) { c.batch = n } }

// WithFlushInterval sets how long an event may wait for companions before
// its batch is sent (default DefaultFlushInterval).
func WithFlushInterval(d time.Duration) ReporterOption {
	return func(c *reporterConfig) { c.flush = d }
}

// WithBufferSize bounds the events waiting to be sent (default
// DefaultBufferSize). When it is full the oldest event is dropped and
// counted in ReporterStats.Dropped.
func WithBufferSize(n int) ReporterOption { return func(c *reporterConfig) { c.buffer = n } }

// WithBackoff sets the reconnect backoff: minD after the first failure,
// doubling up to maxD (defaults DefaultBackoffMin, DefaultBackoffMax).
func WithBackoff(minD, maxD time.Duration) ReporterOption {
	return func(c *reporterConfig) { c.backoffMin, c.backoffMax = minD, maxD }
}

// WithConfirmEvery sets how often a stream is closed so the server confirms
// its events: after maxEvents events or maxAge, whichever comes first
// (defaults DefaultConfirmEvents, DefaultConfirmAge). Events of a stream that
// breaks before confirming are sent again on the next one, so these bound
// the duplicates a failure can cause.
func WithConfirmEvery(maxEvents int, maxAge time.Duration) ReporterOption {
	return func(c *reporterConfig) { c.confirmEvents, c.confirmAge = maxEvents, maxAge }
}

func newReporterConfig(opts []ReporterOption) (reporterConfig, error) {
	c := reporterConfig{
		batch: DefaultBatchSize, flush: DefaultFlushInterval, buffer: DefaultBufferSize,
		backoffMin: DefaultBackoffMin, backoffMax: DefaultBackoffMax,
		confirmEvents: DefaultConfirmEvents, confirmAge: DefaultConfirmAge,
	}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.batch < 1 || c.batch > maxServerBatch:
		return c, fmt.Errorf("switchyard: batch size %d: want 1..%d", c.batch, maxServerBatch)
	case c.flush <= 0:
		return c, fmt.Errorf("switchyard: flush interval %v: want > 0", c.flush)
	case c.buffer < c.batch:
		return c, fmt.Errorf("switchyard: buffer size %d: want at least the batch size %d", c.buffer, c.batch)
	case c.backoffMin <= 0 || c.backoffMax < c.backoffMin:
		return c, fmt.Errorf("switchyard: backoff %v..%v: want 0 < min <= max", c.backoffMin, c.backoffMax)
	case c.confirmEvents < 1 || c.confirmAge <= 0:
		return c, fmt.Errorf("switchyard: confirm every %d events or %v: want both > 0", c.confirmEvents, c.confirmAge)
	}
	return c, nil
}
