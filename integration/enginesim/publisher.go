package enginesim

import (
	"context"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/go-zeromq/zmq4"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

// PublisherConfig configures the KV-event sockets, as vLLM's --kv-events-config does.
type PublisherConfig struct {
	// Endpoint is the PUB endpoint. Like vLLM, the publisher binds it when it contains "*" and
	// connects to it otherwise, so either side may listen. Port 0 binds a free port.
	Endpoint string
	// Bind forces binding Endpoint even without a "*" host (e.g. "tcp://127.0.0.1:0").
	Bind bool
	// ReplayEndpoint is the ROUTER endpoint the publisher binds for replay; "" = no replay.
	ReplayEndpoint string
	// Topic is sent verbatim as every message's first frame.
	Topic string
	// BufferSteps is how many recent batches replay can serve (vLLM default 10,000).
	BufferSteps int
	// HWM bounds the live messages queued for sending; beyond it new ones are dropped from the
	// live stream (they stay replayable), as a ZMQ PUB drops at its high-water mark.
	// 0 = 100,000 (vLLM's default).
	HWM int
	// Logger receives the sockets' logs; nil = slog.Default().
	Logger *slog.Logger
}

// Defaults of PublisherConfig.
const (
	DefaultBufferSteps = 10_000
	DefaultHWM         = 100_000
)

// Publisher owns an engine's KV-event sockets: it numbers batches from 0 (per process),
// sends them live and keeps the last BufferSteps for replay. Safe for concurrent use.
type Publisher struct {
	cfg    PublisherConfig
	log    *slog.Logger
	pub    zmq4.Socket
	router zmq4.Socket
	cancel context.CancelFunc
	done   chan struct{}

	mu     sync.Mutex
	seq    uint64
	ring   []batch // circular, len <= BufferSteps
	head   int     // index of the oldest batch when the ring is full
	paused bool
}

// batch is one published EventBatch.
type batch struct {
	seq     uint64
	payload []byte
}

// NewPublisher opens the sockets. Close releases them.
func NewPublisher(cfg PublisherConfig) (*Publisher, error) {
	if cfg.BufferSteps == 0 {
		cfg.BufferSteps = DefaultBufferSteps
	}
	if cfg.HWM == 0 {
		cfg.HWM = DefaultHWM
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	switch {
	case cfg.Endpoint == "":
		return nil, fmt.Errorf("%w: KV-event endpoint is empty", ErrInvalid)
	case cfg.BufferSteps < 0, cfg.HWM < 0:
		return nil, fmt.Errorf("%w: buffer steps %d and HWM %d must not be negative", ErrInvalid, cfg.BufferSteps, cfg.HWM)
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &Publisher{cfg: cfg, log: cfg.Logger, cancel: cancel, done: make(chan struct{})}
	zlog := slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug)
	p.pub = zmq4.NewPub(ctx, zmq4.WithLogger(zlog), zmq4.WithDialerMaxRetries(-1), zmq4.WithDialerRetry(250*time.Millisecond))
	fail := func(err error) (*Publisher, error) {
		close(p.done)
		_ = p.Close()
		return nil, err
	}
	if err := p.pub.SetOption(zmq4.OptionHWM, cfg.HWM); err != nil {
		return fail(fmt.Errorf("KV events: set HWM: %w", err))
	}
	if err := p.openPub(); err != nil {
		return fail(err)
	}
	if cfg.ReplayEndpoint == "" {
		close(p.done)
		return p, nil
	}
	p.router = zmq4.NewRouter(ctx, zmq4.WithLogger(zlog))
	if err := p.router.Listen(cfg.ReplayEndpoint); err != nil {
		return fail(fmt.Errorf("KV events: replay listen %s: %w", cfg.ReplayEndpoint, err))
	}
	go p.serveReplay()
	return p, nil
}

// openPub binds or connects the PUB socket as vLLM does.
func (p *Publisher) openPub() error {
	if p.cfg.Bind || strings.Contains(p.cfg.Endpoint, "*") {
		if err := p.pub.Listen(p.cfg.Endpoint); err != nil {
			return fmt.Errorf("KV events: listen %s: %w", p.cfg.Endpoint, err)
		}
		return nil
	}
	// A connecting publisher must not wait for its subscriber: dial in the background, with
	// retries, like libzmq's asynchronous connect.
	go func() {
		if err := p.pub.Dial(p.cfg.Endpoint); err != nil {
			p.log.Warn("KV events: connect failed", "endpoint", p.cfg.Endpoint, "err", err)
		}
	}()
	return nil
}

// LiveAddr is the bound PUB address ("" when the publisher connects).
func (p *Publisher) LiveAddr() string { return addrOf(p.pub) }

// ReplayAddr is the bound replay address ("" without replay).
func (p *Publisher) ReplayAddr() string { return addrOf(p.router) }

func addrOf(s zmq4.Socket) string {
	if s == nil {
		return ""
	}
	a := s.Addr()
	if a == nil {
		return ""
	}
	if t, ok := a.(*net.TCPAddr); ok {
		return "tcp://" + t.String()
	}
	return a.Network() + "://" + a.String()
}

// Publish numbers payload as the next batch, keeps it for replay and sends it live (unless
// paused). It returns the batch's sequence number. It never blocks on subscribers.
func (p *Publisher) Publish(payload []byte) uint64 {
	p.mu.Lock()
	seq := p.seq
	p.seq++
	b := batch{seq: seq, payload: payload}
	if len(p.ring) < p.cfg.BufferSteps {
		p.ring = append(p.ring, b)
	} else if p.cfg.BufferSteps > 0 {
		p.ring[p.head] = b
		p.head = (p.head + 1) % len(p.ring)
	}
	paused := p.paused
	p.mu.Unlock()
	if paused {
		return seq
	}
	msg := zmq4.NewMsgFrom([]byte(p.cfg.Topic), binary.BigEndian.AppendUint64(nil, seq), payload)
	if err := p.pub.SendMulti(msg); err != nil {
		p.log.Debug("KV events: send failed", "seq", seq, "err", err)
	}
	return seq
}

// SetPaused stops (or resumes) live sending while batches keep being numbered and buffered:
// subscribers see a gap that replay can fill. For fault-injection tests.
func (p *Publisher) SetPaused(paused bool) {
	p.mu.Lock()
	p.paused = paused
	p.mu.Unlock()
}

// NextSeq is the sequence number the next batch will get.
func (p *Publisher) NextSeq() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seq
}

// buffered returns the buffered batches with seq >= start, oldest first.
func (p *Publisher) buffered(start uint64) []batch {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]batch, 0, len(p.ring))
	for i := range p.ring {
		b := p.ring[(p.head+i)%len(p.ring)]
		if b.seq >= start {
			out = append(out, b)
		}
	}
	return out
}

// serveReplay answers ["", start] requests: one ["", topic, seq, payload] per buffered batch
// from start on, then the end marker with seq 0xFFFFFFFFFFFFFFFF and an empty payload.
func (p *Publisher) serveReplay() {
	defer close(p.done)
	topic := []byte(p.cfg.Topic)
	for {
		msg, err := p.router.Recv()
		if err != nil {
			return
		}
		f := msg.Frames
		if len(f) != 3 || len(f[1]) != 0 || len(f[2]) != 8 {
			p.log.Debug("KV events: bad replay request", "frames", len(f))
			continue
		}
		id, start := f[0], binary.BigEndian.Uint64(f[2])
		for _, b := range p.buffered(start) {
			reply := zmq4.NewMsgFrom(id, nil, topic, binary.BigEndian.AppendUint64(nil, b.seq), b.payload)
			if err := p.router.SendMulti(reply); err != nil {
				p.log.Debug("KV events: replay send failed", "err", err)
				break
			}
		}
		end := zmq4.NewMsgFrom(id, nil, topic, binary.BigEndian.AppendUint64(nil, vllm.EndSeq), nil)
		if err := p.router.SendMulti(end); err != nil {
			p.log.Debug("KV events: replay end failed", "err", err)
		}
	}
}

// Close closes the sockets and waits for the replay server to stop.
func (p *Publisher) Close() error {
	p.cancel()
	err := p.pub.Close()
	if p.router != nil {
		if e := p.router.Close(); err == nil {
			err = e
		}
	}
	<-p.done
	return err
}
