package vllm

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/vmihailenco/msgpack/v5"
)

// fakeEngine is an in-process vLLM publisher: a zmq4 PUB sending
// [topic, seq, payload] and a ROUTER answering replay requests from its buffer.
type fakeEngine struct {
	t       testing.TB
	topic   string
	gen     float64 // distinguishes processes in batch timestamps
	rank    int     // data_parallel_rank in payloads
	mute    bool    // replay requests go unanswered
	pub     zmq4.Socket
	router  zmq4.Socket
	pubAddr string
	repAddr string
	cancel  context.CancelFunc
	done    chan struct{}

	mu     sync.Mutex
	seq    uint64
	buffer []engineBatch
}

type engineBatch struct {
	seq     uint64
	payload []byte
}

// startEngine binds a PUB on pubAddr (or dials it when dial is set) and, when
// repAddr is not empty, a replay ROUTER on repAddr.
func startEngine(t testing.TB, pubAddr, repAddr, topic string, dial bool, gen float64) *fakeEngine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &fakeEngine{t: t, topic: topic, gen: gen, pubAddr: pubAddr, repAddr: repAddr, cancel: cancel, done: make(chan struct{})}
	e.pub = zmq4.NewPub(ctx, zmq4.WithDialerMaxRetries(-1), zmq4.WithDialerRetry(20*time.Millisecond))
	var err error
	if dial {
		go func() { _ = e.pub.Dial(pubAddr) }()
	} else {
		err = e.pub.Listen(pubAddr)
	}
	if err != nil {
		t.Fatalf("engine listen %s: %v", pubAddr, err)
	}
	if repAddr == "" {
		close(e.done)
	} else {
		e.router = zmq4.NewRouter(ctx)
		if err := e.router.Listen(repAddr); err != nil {
			t.Fatalf("engine replay listen %s: %v", repAddr, err)
		}
		go e.serveReplay()
	}
	t.Cleanup(e.close)
	return e
}

func (e *fakeEngine) serveReplay() {
	defer close(e.done)
	for {
		msg, err := e.router.Recv()
		if err != nil {
			return
		}
		if len(msg.Frames) != 3 || len(msg.Frames[2]) != 8 {
			continue
		}
		id, start := msg.Frames[0], binary.BigEndian.Uint64(msg.Frames[2])
		e.mu.Lock()
		if e.mute {
			e.mu.Unlock()
			continue
		}
		todo := append([]engineBatch(nil), e.buffer...)
		e.mu.Unlock()
		for _, b := range todo {
			if b.seq >= start {
				_ = e.router.Send(zmq4.NewMsgFrom(id, nil, []byte(e.topic), be(b.seq), b.payload))
			}
		}
		_ = e.router.Send(zmq4.NewMsgFrom(id, nil, []byte(e.topic), be(EndSeq), nil))
	}
}

func be(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// ts is the timestamp of batch seq of the engine's current process.
func (e *fakeEngine) ts(seq uint64) float64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.gen*1e6 + float64(seq)
}

// payload builds an EventBatch whose timestamp identifies this process and seq.
func (e *fakeEngine) payload(seq uint64, events ...any) []byte {
	b, err := msgpack.Marshal([]any{e.ts(seq), events, e.rank})
	if err != nil {
		e.t.Fatal(err)
	}
	return b
}

// send publishes the next batch live (and buffers it); it returns its seq.
func (e *fakeEngine) send(events ...any) uint64 { return e.emit(true, events) }

// bufferOnly buffers the next batch without publishing it: a replayable gap.
func (e *fakeEngine) bufferOnly(events ...any) uint64 { return e.emit(false, events) }

func (e *fakeEngine) emit(publish bool, events []any) uint64 {
	e.mu.Lock()
	seq := e.seq
	e.seq++
	e.mu.Unlock()
	p := e.payload(seq, events...)
	e.mu.Lock()
	e.buffer = append(e.buffer, engineBatch{seq, p})
	e.mu.Unlock()
	if publish {
		if err := e.pub.Send(zmq4.NewMsgFrom([]byte(e.topic), be(seq), p)); err != nil {
			e.t.Errorf("publish: %v", err)
		}
	}
	return seq
}

// setMute makes replay requests go unanswered (or answered again).
func (e *fakeEngine) setMute(m bool) {
	e.mu.Lock()
	e.mute = m
	e.mu.Unlock()
}

// skip advances seq by n without buffering: a gap replay cannot fill.
func (e *fakeEngine) skip(n uint64) {
	e.mu.Lock()
	e.seq += n
	e.mu.Unlock()
}

// restart makes the engine look like a new process: seq 0, empty buffer.
func (e *fakeEngine) restart(gen float64) {
	e.mu.Lock()
	e.seq, e.buffer, e.gen = 0, nil, gen
	e.mu.Unlock()
}

func (e *fakeEngine) close() {
	e.cancel()
	_ = e.pub.Close()
	if e.router != nil {
		_ = e.router.Close()
	}
	<-e.done
}

func stored(hash uint64) any {
	return []any{"BlockStored", []uint64{hash}, nil, []int{1, 2}, 2, nil, "GPU"}
}

// recordingSink records what the Subscriber delivers.
type recordingSink struct {
	mu      sync.Mutex
	batches []Batch
	resets  []resetCall
	fail    error // returned by ApplyBatch when set
}

type resetCall struct {
	replica string
	rank    int
	reason  ResetReason
}

func (s *recordingSink) ApplyBatch(_ context.Context, b Batch) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.batches = append(s.batches, b)
	return nil
}

func (s *recordingSink) ResetReplica(_ context.Context, replica string, rank int, reason ResetReason) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resets = append(s.resets, resetCall{replica, rank, reason})
}

func (s *recordingSink) snapshot() ([]Batch, []resetCall) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Batch(nil), s.batches...), append([]resetCall(nil), s.resets...)
}

// seen reports whether e's batch seq (of e's current process) reached replica.
func (s *recordingSink) seen(replica string, e *fakeEngine, seq uint64) bool {
	want := e.ts(seq)
	bs, _ := s.snapshot()
	for _, b := range bs {
		if b.Replica == replica && b.Seq == seq && b.Time == want {
			return true
		}
	}
	return false
}

// waitFor polls cond until it holds; the deadline only keeps a broken test
// from hanging, it is not a timing assertion.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// warmUp publishes batches until the subscriber applies one (a PUB drops what
// it sends before the subscription arrives) and returns that seq.
func warmUp(t testing.TB, e *fakeEngine, sink *recordingSink, replica string) uint64 {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		seq := e.send(stored(1000))
		for range 40 {
			if sink.seen(replica, e, seq) {
				return seq
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	t.Fatalf("%s: no batch got through", replica)
	return 0
}
