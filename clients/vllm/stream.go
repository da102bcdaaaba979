package vllm

import (
	"bytes"
	"context"
	"log/slog"
	"time"

	"github.com/go-zeromq/zmq4"
)

// stream follows one (replica, rank) publisher: its live socket, its
// sequence numbers and its replay socket. All its fields are owned by the
// goroutine running run; Remove reads them only after that goroutine returned.
type stream struct {
	sub    *Subscriber
	ep     Endpoint
	live   string
	replay string
	topic  []byte
	dec    *Decoder
	log    *slog.Logger

	rank    int     // rank reported to the Sink
	have    bool    // a batch was seen since start or the last restart
	last    uint64  // last sequence applied
	lastTS  float64 // timestamp of that batch, valid when tsKnown
	tsKnown bool
	suspect bool // a connection was lost: verify the next batch's continuity
	dirty   bool // the Sink holds entries from this stream
}

func newStream(s *Subscriber, ep Endpoint, rank int) (*stream, error) {
	dec, err := NewDecoder(s.opts.limits)
	if err != nil {
		return nil, err
	}
	return &stream{
		sub: s, ep: ep, rank: rank, dec: dec,
		live:   rankAddr(ep.Live, rank),
		replay: rankAddr(ep.Replay, rank),
		topic:  []byte(ep.Topic),
		log:    s.opts.logger.With("replica", ep.Replica, "rank", rank),
	}, nil
}

// run connects (or binds), reads until the connection is lost, and
// reconnects with exponential backoff until ctx is done.
func (s *stream) run(ctx context.Context) {
	o, c := &s.sub.opts, &s.sub.c
	backoff := o.backoffMin
	connected := false
	for ctx.Err() == nil {
		sock, err := s.open(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.dialFailures.Add(1)
			s.log.Debug("vllm events: connect failed", "endpoint", s.live, "err", err, "retry_in", backoff)
		} else {
			if connected {
				c.reconnects.Add(1)
				s.log.Info("vllm events: reconnected", "endpoint", s.live)
			}
			connected = true
			got := s.read(ctx, sock)
			_ = sock.Close()
			if ctx.Err() != nil {
				return
			}
			c.disconnects.Add(1)
			s.suspect = true
			s.log.Warn("vllm events: connection lost", "endpoint", s.live)
			if got {
				backoff = o.backoffMin
			}
		}
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, o.backoffMax)
	}
}

// open returns a SUB socket bound to or connected to the live endpoint.
func (s *stream) open(ctx context.Context) (zmq4.Socket, error) {
	sock := zmq4.NewSub(ctx,
		zmq4.WithDialerMaxRetries(0),
		zmq4.WithDialerTimeout(s.sub.opts.dialTimeout),
		zmq4.WithLogger(slog.NewLogLogger(s.log.Handler(), slog.LevelDebug)))
	if err := sock.SetOption(zmq4.OptionSubscribe, s.ep.Topic); err != nil {
		_ = sock.Close()
		return nil, err
	}
	var err error
	if s.ep.Bind {
		err = sock.Listen(s.live)
	} else {
		err = sock.Dial(s.live)
	}
	if err != nil {
		_ = sock.Close()
		return nil, err
	}
	return sock, nil
}

// read handles live messages until the connection fails (connect mode) or
// ctx is done. In bind mode a lost engine connection does not close the
// listener: the engine reconnects by itself. It reports whether any message
// arrived.
func (s *stream) read(ctx context.Context, sock zmq4.Socket) bool {
	got := false
	for {
		msg, err := sock.Recv()
		if err != nil {
			if ctx.Err() != nil || !s.ep.Bind {
				return got
			}
			s.sub.c.disconnects.Add(1)
			s.suspect = true
			continue
		}
		if msg.Type == zmq4.CmdMsg {
			continue
		}
		got = true
		s.onLive(ctx, msg.Frames)
	}
}

// onLive checks one live message and applies it in sequence.
func (s *stream) onLive(ctx context.Context, frames [][]byte) {
	c := &s.sub.c
	f, err := ParseFrames(frames)
	if err != nil {
		c.malformedFrames.Add(1)
		s.log.Debug("vllm events: bad live message", "err", err)
		return
	}
	if !bytes.HasPrefix(f.Topic, s.topic) {
		c.topicMismatches.Add(1)
		return
	}
	s.sequence(ctx, f.Seq)
	s.applyLive(ctx, f.Seq, f.Payload)
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
