package switchyard

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// Client calls one switchyard server. It is safe for concurrent use; create
// one per process and share it.
type Client struct {
	conn     *grpc.ClientConn // set when Dial created the connection; closed by Close
	router   v1.RouterServiceClient
	replicas v1.ReplicaServiceClient
	kv       v1.KVEventServiceClient
	timeout  time.Duration
	log      *slog.Logger
}

// Dial creates a client for the server at target (e.g. "localhost:50051").
// The connection is made lazily and re-made after failures; Dial itself only
// fails on bad options.
func Dial(target string, opts ...Option) (*Client, error) {
	cfg := newClientConfig(opts)
	dial := append([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
			MinConnectTimeout: 5 * time.Second,
		}),
	}, cfg.dial...)
	conn, err := grpc.NewClient(target, dial...)
	if err != nil {
		return nil, fmt.Errorf("switchyard: dial %q: %w", target, err)
	}
	c := newClient(conn, cfg)
	c.conn = conn
	return c, nil
}

// New creates a client over an existing connection, which the caller keeps
// owning (Close does not close it). Dial options are ignored.
func New(conn grpc.ClientConnInterface, opts ...Option) *Client {
	return newClient(conn, newClientConfig(opts))
}

func newClient(conn grpc.ClientConnInterface, cfg clientConfig) *Client {
	return &Client{
		router:   v1.NewRouterServiceClient(conn),
		replicas: v1.NewReplicaServiceClient(conn),
		kv:       v1.NewKVEventServiceClient(conn),
		timeout:  cfg.timeout,
		log:      cfg.log,
	}
}

// Close closes the connection Dial made. Close reporters and publishers
// first: their pending events are lost otherwise.
func (c *Client) Close() error {
	if c.conn == nil {
		return nil
	}
	return c.conn.Close()
}

// withTimeout gives ctx the client's default deadline when it has none.
func (c *Client) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || c.timeout <= 0 {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, c.timeout)
}
