package switchyard

import (
	"log/slog"
	"time"

	"google.golang.org/grpc"
)

// DefaultTimeout bounds unary calls whose context has no deadline.
const DefaultTimeout = 2 * time.Second

// Option configures a Client.
type Option func(*clientConfig)

type clientConfig struct {
	timeout time.Duration
	dial    []grpc.DialOption
	log     *slog.Logger
}

// WithTimeout sets the deadline given to unary calls whose context has none
// (default DefaultTimeout; 0 or less = no default deadline).
func WithTimeout(d time.Duration) Option { return func(c *clientConfig) { c.timeout = d } }

// WithDialOptions adds gRPC dial options for Dial, applied after the
// defaults (plaintext, reconnect backoff from 100 ms to 5 s): pass
// grpc.WithTransportCredentials here for TLS.
func WithDialOptions(opts ...grpc.DialOption) Option {
	return func(c *clientConfig) { c.dial = append(c.dial, opts...) }
}

// WithLogger sets where the client's helpers log stream failures
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *clientConfig) { c.log = l } }

func newClientConfig(opts []Option) clientConfig {
	cfg := clientConfig{timeout: DefaultTimeout, log: slog.Default()}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.log == nil {
		cfg.log = slog.Default()
	}
	return cfg
}
