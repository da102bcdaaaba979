package switchyard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// KVPublisher sends one engine's KV-cache events to the router's index over
// a PublishKVEvents stream, for engine sidecars. Batches carry consecutive
// sequence numbers that continue across the publisher's streams. The router
// keeps each engine's last sequence across streams, so a batch lost when a
// stream broke shows there as a gap and the engine's entries are dropped
// rather than left stale; a new KVPublisher (a restarted engine or sidecar)
// starts again at 1, which the router takes as a restart.
//
// Publish returns once a batch is handed to the stream; a stream that breaks
// makes the current Publish fail and the next one open a new stream.
// Methods are safe for concurrent use (batches are sent one at a time).
type KVPublisher struct {
	rpc       v1.KVEventServiceClient
	replicaID string
	rank      int32
	timeout   time.Duration

	mu     sync.Mutex
	st     *kvStream
	seq    uint64
	closed bool
	stats  PublisherStats
}

// kvStream is the publisher's open PublishKVEvents call.
type kvStream struct {
	s      v1.KVEventService_PublishKVEventsClient
	cancel context.CancelFunc
}

// PublisherStats counts what a KVPublisher sent.
type PublisherStats struct {
	// Batches and Events count what was handed to a stream.
	Batches, Events int64
	// Streams counts streams opened; Failures those that broke.
	Streams, Failures int64
	// Sequence is the last sequence number used.
	Sequence uint64
}

// PublisherOption configures a KVPublisher.
type PublisherOption func(*KVPublisher)

// WithDataParallelRank sets the engine's data-parallel rank (default 0).
func WithDataParallelRank(rank int32) PublisherOption {
	return func(p *KVPublisher) { p.rank = rank }
}

// NewKVPublisher creates a publisher for the replica's events. The replica
// must be registered before the first Publish.
func (c *Client) NewKVPublisher(replicaID string, opts ...PublisherOption) (*KVPublisher, error) {
	p := &KVPublisher{rpc: c.kv, replicaID: replicaID, timeout: c.timeout}
	if p.timeout <= 0 {
		p.timeout = DefaultTimeout
	}
	for _, o := range opts {
		o(p)
	}
	switch {
	case replicaID == "" || len(replicaID) > MaxIDBytes:
		return nil, fmt.Errorf("switchyard: replica id %q: want 1..%d bytes", replicaID, MaxIDBytes)
	case p.rank < 0:
		return nil, fmt.Errorf("switchyard: data-parallel rank %d: must not be negative", p.rank)
	}
	return p, nil
}

// Publish sends events as the next batch. It fails with ErrInvalidEvent for
// a batch the server would refuse whole (nothing is sent), ErrClosed after
// Close, or the stream's error (the next Publish opens a new stream).
func (p *KVPublisher) Publish(ctx context.Context, events ...*v1.KVEvent) error {
	if len(events) > maxServerBatch {
		return fmt.Errorf("%w: %d events exceed the batch limit of %d", ErrInvalidEvent, len(events), maxServerBatch)
	}
	for i, e := range events {
		if e.GetEvent() == nil {
			return fmt.Errorf("%w: events[%d]: set one of stored, removed or cleared", ErrInvalidEvent, i)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return ErrClosed
	}
	req := &v1.PublishKVEventsRequest{ReplicaId: p.replicaID, DataParallelRank: p.rank, Events: events}
	if p.st == nil {
		sctx, cancel := context.WithCancel(context.Background())
		s, err := p.rpc.PublishKVEvents(sctx)
		if err != nil {
			cancel()
			p.stats.Failures++
			return rpcErr("PublishKVEvents", err)
		}
		p.st = &kvStream{s: s, cancel: cancel}
		p.stats.Streams++
	}
	p.seq++
	req.Sequence = p.seq
	st := p.st
	err := guarded(ctx, p.timeout, st.cancel, func() error { return st.s.Send(req) })
	if errors.Is(err, io.EOF) { // the server ended the stream; its status says why
		_ = guarded(ctx, p.timeout, st.cancel, func() error {
			if _, serr := st.s.CloseAndRecv(); serr != nil {
				err = serr
			}
			return nil
		})
	}
	if err != nil {
		p.st.cancel()
		p.st = nil
		p.stats.Failures++
		return rpcErr("PublishKVEvents", err)
	}
	p.stats.Batches++
	p.stats.Events += int64(len(req.Events))
	p.stats.Sequence = p.seq
	return nil
}

// Close ends the stream and returns the server's totals for it (nil when no
// stream was open). Later calls to Publish fail with ErrClosed.
func (p *KVPublisher) Close(ctx context.Context) (*v1.PublishKVEventsResponse, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	p.closed = true
	if p.st == nil {
		return nil, nil
	}
	st := p.st
	p.st = nil
	defer st.cancel()
	var resp *v1.PublishKVEventsResponse
	err := guarded(ctx, p.timeout, st.cancel, func() (err error) {
		resp, err = st.s.CloseAndRecv()
		return err
	})
	return resp, rpcErr("PublishKVEvents", err)
}

// Stats returns the publisher's counters.
func (p *KVPublisher) Stats() PublisherStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}
