package vllm

import (
	"context"
	"errors"
	"fmt"
	"github.com/switchyard-llm/switchyard/integration/vllmpub"
	"testing"
	"time"
)

// runSubscriber starts a Subscriber over sink with eps and stops it at cleanup.
func runSubscriber(t *testing.T, sink Sink, eps []Endpoint, opts ...Option) *Subscriber {
	t.Helper()
	opts = append([]Option{WithLogger(quietLogger()), WithBackoff(10*time.Millisecond, 100*time.Millisecond)}, opts...)
	sub, err := New(sink, opts...)
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range eps {
		if err := sub.Add(ep); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sub.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return sub
}

func batchesOf(sink *recordingSink, replica string) []Batch {
	all, _ := sink.snapshot()
	var out []Batch
	for _, b := range all {
		if b.Replica == replica {
			out = append(out, b)
		}
	}
	return out
}

func resetsOf(sink *recordingSink, reason ResetReason) int {
	_, rs := sink.snapshot()
	n := 0
	for _, r := range rs {
		if r.reason == reason {
			n++
		}
	}
	return n
}

// TestSubscriberReplaysGap: a first contact catches up from the replay
// buffer, and a lost batch is fetched from the replay socket, in order.
func TestSubscriberReplaysGap(t *testing.T) {
	e := startEngine(t, vllmpub.FreeAddr(t), vllmpub.FreeAddr(t), "kv@a@m", false, 1)
	sink := &recordingSink{}
	sub := runSubscriber(t, sink, []Endpoint{{Replica: "a", Live: e.pubAddr, Replay: e.repAddr, Topic: "kv@"}})

	first := warmUp(t, e, sink, "a")
	lost := e.bufferOnly(stored(1))
	next := e.send(stored(2))
	waitFor(t, "the batch after the gap", func() bool { return sink.seen("a", e, next) })

	got := batchesOf(sink, "a")
	for i, b := range got {
		if b.Seq != uint64(i) {
			t.Fatalf("batch %d has seq %d: not contiguous from 0: %v", i, b.Seq, got)
		}
		wantReplayed := b.Seq < first || b.Seq == lost
		if b.Replayed != wantReplayed {
			t.Errorf("seq %d replayed=%v, want %v", b.Seq, b.Replayed, wantReplayed)
		}
	}
	if uint64(len(got)) != next+1 {
		t.Fatalf("got %d batches, want %d", len(got), next+1)
	}
	c := sub.Stats()
	if c.Gaps != 1 || c.ReplaysFailed != 0 || c.ReplaysOK < 1 || len(sink.resets) != 0 {
		t.Fatalf("gaps %d replays ok %d failed %d resets %v", c.Gaps, c.ReplaysOK, c.ReplaysFailed, sink.resets)
	}
}

// TestSubscriberGapNotReplayable: without a replay socket, or when the
// engine no longer holds the lost batches, the replica is reset.
func TestSubscriberGapNotReplayable(t *testing.T) {
	tests := []struct {
		name       string
		withReplay bool
		failed     uint64
	}{
		{"no replay socket", false, 0},
		{"batches not buffered", true, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := ""
			if tc.withReplay {
				rep = vllmpub.FreeAddr(t)
			}
			e := startEngine(t, vllmpub.FreeAddr(t), rep, "", false, 1)
			sink := &recordingSink{}
			sub := runSubscriber(t, sink, []Endpoint{{Replica: "a", Live: e.pubAddr, Replay: rep}})
			warmUp(t, e, sink, "a")
			failedBefore := sub.Stats().ReplaysFailed
			e.skip(3)
			next := e.send(stored(2))
			waitFor(t, "the batch after the gap", func() bool { return sink.seen("a", e, next) })
			c := sub.Stats()
			if resetsOf(sink, ResetGap) != 1 || c.Resets[ResetGap] != 1 || c.Gaps != 1 || c.ReplaysFailed-failedBefore != tc.failed {
				t.Fatalf("resets %v, counters %+v", sink.resets, c)
			}
		})
	}
}

// TestSubscriberRestart: a restarted engine resets the replica, whether its
// sequence visibly went back or it already passed the old sequence (then
// the replayed copy of the last batch gives it away).
func TestSubscriberRestart(t *testing.T) {
	tests := []struct {
		name   string
		hidden bool
	}{
		{"sequence goes back", false},
		{"sequence hidden above the old one", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEngine(t, vllmpub.FreeAddr(t), vllmpub.FreeAddr(t), "", false, 1)
			sink := &recordingSink{}
			sub := runSubscriber(t, sink, []Endpoint{{Replica: "a", Live: e.pubAddr, Replay: e.repAddr}})
			last := warmUp(t, e, sink, "a")
			e.restart(2)
			if tc.hidden {
				for range last + 3 {
					e.bufferOnly(stored(7))
				}
			}
			next := e.send(stored(8))
			waitFor(t, "the new process's batch", func() bool { return sink.seen("a", e, next) })
			c := sub.Stats()
			if resetsOf(sink, ResetRestart) != 1 || c.Restarts != 1 || resetsOf(sink, ResetGap) != 0 {
				t.Fatalf("resets %v, restarts %d", sink.resets, c.Restarts)
			}
			for seq := range next {
				if !sink.seen("a", e, seq) {
					t.Errorf("new process's batch %d was not caught up", seq)
				}
			}
		})
	}
}

// TestSubscriberReconnects: the engine process dies and a new one binds the
// same ports; the subscriber reconnects and resets the replica, also when the
// new process's sequence already continues the old one (then the replayed
// copy of the last applied batch differs).
func TestSubscriberReconnects(t *testing.T) {
	for _, continues := range []bool{false, true} {
		t.Run(fmt.Sprintf("new sequence continues old: %v", continues), func(t *testing.T) {
			pub, rep := vllmpub.FreeAddr(t), vllmpub.FreeAddr(t)
			e := startEngine(t, pub, rep, "", false, 1)
			sink := &recordingSink{}
			sub := runSubscriber(t, sink, []Endpoint{{Replica: "a", Live: pub, Replay: rep}})
			last := warmUp(t, e, sink, "a")
			e.close()
			waitFor(t, "the disconnect", func() bool { return sub.Stats().Disconnects >= 1 })

			e2 := startEngine(t, pub, rep, "", false, 2)
			if continues {
				for range last + 1 {
					e2.bufferOnly(stored(5))
				}
			}
			warmUp(t, e2, sink, "a")
			c := sub.Stats()
			if c.Reconnects < 1 || c.Restarts != 1 || resetsOf(sink, ResetRestart) != 1 {
				t.Fatalf("reconnects %d restarts %d resets %v", c.Reconnects, c.Restarts, sink.resets)
			}
		})
	}
}

// TestSubscriberBindMode: switchyard listens and the engines' ranks connect
// to consecutive ports; each rank is tracked on its own.
func TestSubscriberBindMode(t *testing.T) {
	base := vllmpub.FreeAddr(t)
	ep := Endpoint{Replica: "a", Live: base, Bind: true, Ranks: 2}
	sink := &recordingSink{}
	runSubscriber(t, sink, []Endpoint{ep})
	for rank := range 2 {
		e := startEngine(t, rankAddr(base, rank), "", "", true, float64(rank+1))
		e.rank = rank
		seq := warmUp(t, e, sink, "a")
		for _, b := range batchesOf(sink, "a") {
			if b.Seq == seq && b.Time == e.ts(seq) && b.Rank != rank {
				t.Fatalf("rank %d batch delivered as rank %d", rank, b.Rank)
			}
		}
	}
}

// TestSubscriberIsolation: a dead engine and one stuck in replay do not stop
// a healthy engine's events.
func TestSubscriberIsolation(t *testing.T) {
	stuck := startEngine(t, vllmpub.FreeAddr(t), vllmpub.FreeAddr(t), "", false, 1)
	alive := startEngine(t, vllmpub.FreeAddr(t), "", "", false, 2)
	sink := &recordingSink{}
	runSubscriber(t, sink, []Endpoint{
		{Replica: "dead", Live: vllmpub.FreeAddr(t)},
		{Replica: "stuck", Live: stuck.pubAddr, Replay: stuck.repAddr},
		{Replica: "alive", Live: alive.pubAddr},
	}, WithReplayTimeout(time.Minute))
	warmUp(t, stuck, sink, "stuck")
	warmUp(t, alive, sink, "alive")

	stuck.setMute(true)
	stuck.bufferOnly(stored(1))
	blocked := stuck.send(stored(2))
	for range 3 {
		seq := alive.send(stored(3))
		waitFor(t, "the healthy engine's batch", func() bool { return sink.seen("alive", alive, seq) })
	}
	if sink.seen("stuck", stuck, blocked) {
		t.Fatalf("the stuck replica's batch was applied before its gap was resolved")
	}
}

func TestSubscriberLifecycle(t *testing.T) {
	sink := &recordingSink{}
	if _, err := New(nil); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("nil sink: %v", err)
	}
	if _, err := New(sink, WithBackoff(time.Second, time.Millisecond)); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("inverted backoff: %v", err)
	}
	sub, err := New(sink, WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ep := Endpoint{Replica: "a", Live: vllmpub.FreeAddr(t)}
	if err := sub.Add(ep); err != nil {
		t.Fatal(err)
	}
	if err := sub.Add(ep); !errors.Is(err, ErrDuplicateReplica) {
		t.Fatalf("duplicate: %v", err)
	}
	if err := sub.Add(Endpoint{Replica: "b", Live: "udp://x:1"}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("invalid endpoint: %v", err)
	}
	if got := sub.Replicas(); len(got) != 1 || got[0].Replica != "a" || got[0].Ranks != 1 {
		t.Fatalf("Replicas() = %+v", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- sub.Run(ctx) }()
	waitFor(t, "a failed dial to nothing", func() bool { return sub.Stats().DialFailures >= 1 })
	if err := sub.Run(ctx); !errors.Is(err, ErrRunning) {
		t.Fatalf("second Run: %v", err)
	}
	if !sub.Remove(context.Background(), "a") || sub.Remove(context.Background(), "a") {
		t.Fatal("Remove should report a subscribed replica once")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := sub.Add(Endpoint{Replica: "c", Live: vllmpub.FreeAddr(t)}); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Run: %v", err)
	}
}

// TestSubscriberRemoveResets: removing a replica that fed the sink resets it.
func TestSubscriberRemoveResets(t *testing.T) {
	e := startEngine(t, vllmpub.FreeAddr(t), "", "", false, 1)
	sink := &recordingSink{}
	sub := runSubscriber(t, sink, []Endpoint{{Replica: "a", Live: e.pubAddr}})
	warmUp(t, e, sink, "a")
	if !sub.Remove(context.Background(), "a") {
		t.Fatal("replica not subscribed")
	}
	if resetsOf(sink, ResetRemoved) != 1 || sub.Stats().Resets[ResetRemoved] != 1 {
		t.Fatalf("resets %v", sink.resets)
	}
}

// TestStreamVerifiesAfterReconnect: after a lost connection, a batch that
// continues the sequence is checked against the engine's copy of the last
// applied batch, which tells a new process from the same one.
func TestStreamVerifiesAfterReconnect(t *testing.T) {
	tests := []struct {
		name        string
		sameProcess bool
		restarts    int
	}{
		{"same process continues", true, 0},
		{"new process at the next seq", false, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := startEngine(t, vllmpub.FreeAddr(t), vllmpub.FreeAddr(t), "", false, 2)
			for range 4 {
				e.bufferOnly(stored(1))
			}
			old := e
			if !tc.sameProcess {
				old = &fakeEngine{t: t, gen: 1}
			}
			sink := &recordingSink{}
			sub, st := newTestStream(t, sink, Endpoint{Replica: "a", Live: e.pubAddr, Replay: e.repAddr})
			ctx := context.Background()
			for seq := range uint64(3) {
				st.onLive(ctx, [][]byte{nil, be(seq), old.payload(seq, stored(1))})
			}
			st.suspect = true
			st.onLive(ctx, [][]byte{nil, be(3), e.payload(3, stored(1))})
			c := sub.Stats()
			if resetsOf(sink, ResetRestart) != tc.restarts || c.Restarts != uint64(tc.restarts) || c.Gaps != 0 {
				t.Fatalf("restarts %d, resets %v, gaps %d", c.Restarts, sink.resets, c.Gaps)
			}
			if !sink.seen("a", e, 3) {
				t.Fatal("the batch after the reconnect was not applied")
			}
		})
	}
}
