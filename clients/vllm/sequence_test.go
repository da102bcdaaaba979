package vllm

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// newTestStream returns a Subscriber over sink and a stream for ep's rank 0
// that tests drive directly, without running sockets.
func newTestStream(t *testing.T, sink Sink, ep Endpoint) (*Subscriber, *stream) {
	t.Helper()
	sub, err := New(sink, WithLogger(quietLogger()))
	if err != nil {
		t.Fatal(err)
	}
	ep, err = ep.normalize()
	if err != nil {
		t.Fatal(err)
	}
	st, err := newStream(sub, ep, 0)
	if err != nil {
		t.Fatal(err)
	}
	return sub, st
}

// liveMsg builds a live message for the socket-free sequence tests.
func liveMsg(t *testing.T, topic string, seq uint64, events ...any) [][]byte {
	t.Helper()
	p, err := msgpack.Marshal([]any{float64(seq), events})
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{[]byte(topic), be(seq), p}
}

// TestStreamSequence drives one stream's message handling directly (no
// sockets, no replay endpoint) through every sequence situation.
func TestStreamSequence(t *testing.T) {
	ok := func(seq uint64) [][]byte { return liveMsg(t, "kv@a", seq, stored(seq)) }
	type step struct {
		frames  [][]byte
		sinkErr error
	}
	tests := []struct {
		name     string
		steps    []step
		applied  []uint64
		resets   []ResetReason
		counters func(Counters) bool
	}{
		{"in order", []step{{frames: ok(5)}, {frames: ok(6)}, {frames: ok(7)}}, []uint64{5, 6, 7}, nil,
			func(c Counters) bool { return c.Batches == 3 && c.Stored == 3 && c.BlocksStored == 3 }},
		{"gap without replay resets", []step{{frames: ok(1)}, {frames: ok(4)}}, []uint64{1, 4}, []ResetReason{ResetGap},
			func(c Counters) bool { return c.Gaps == 1 && c.Resets[ResetGap] == 1 && c.ReplaysFailed == 0 }},
		{"seq going back is a restart", []step{{frames: ok(8)}, {frames: ok(9)}, {frames: ok(0)}}, []uint64{8, 9, 0}, []ResetReason{ResetRestart},
			func(c Counters) bool { return c.Restarts == 1 && c.Resets[ResetRestart] == 1 }},
		{"repeated seq is a restart", []step{{frames: ok(3)}, {frames: ok(3)}}, []uint64{3, 3}, []ResetReason{ResetRestart},
			func(c Counters) bool { return c.Restarts == 1 }},
		{"wrong frame count is skipped", []step{{frames: ok(1)}, {frames: ok(2)[1:]}, {frames: ok(2)}}, []uint64{1, 2}, nil,
			func(c Counters) bool { return c.MalformedFrames == 1 && c.Gaps == 0 }},
		{"other topic is skipped", []step{{frames: liveMsg(t, "other", 1, stored(1))}, {frames: ok(1)}}, []uint64{1}, nil,
			func(c Counters) bool { return c.TopicMismatches == 1 }},
		{"undecodable batch resets and advances", []step{{frames: ok(1)}, {frames: [][]byte{[]byte("kv@a"), be(2), {0xc1}}}, {frames: ok(3)}},
			[]uint64{1, 3}, []ResetReason{ResetMalformed},
			func(c Counters) bool { return c.MalformedPayloads == 1 && c.Gaps == 0 }},
		{"sink failure resets", []step{{frames: ok(1), sinkErr: errors.New("index full")}, {frames: ok(2)}}, []uint64{2}, []ResetReason{ResetSinkError},
			func(c Counters) bool { return c.SinkErrors == 1 }},
		{"dropped events are counted, empty batches not delivered",
			[]step{{frames: liveMsg(t, "kv@a", 1, []any{"BlockTeleported"}, []any{"BlockRemoved", []uint64{}})}, {frames: ok(2)}},
			[]uint64{2}, nil,
			func(c Counters) bool {
				return c.Batches == 2 && c.Dropped[DropUnknownTag] == 1 && c.Dropped[DropEmptyHashes] == 1
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sink := &recordingSink{}
			sub, st := newTestStream(t, sink, Endpoint{Replica: "a", Live: "tcp://127.0.0.1:1", Topic: "kv"})
			for _, s := range tc.steps {
				sink.mu.Lock()
				sink.fail = s.sinkErr
				sink.mu.Unlock()
				st.onLive(context.Background(), s.frames)
			}
			batches, resets := sink.snapshot()
			var applied []uint64
			for _, b := range batches {
				applied = append(applied, b.Seq)
			}
			var reasons []ResetReason
			for _, r := range resets {
				reasons = append(reasons, r.reason)
			}
			if !slices.Equal(applied, tc.applied) || !slices.Equal(reasons, tc.resets) {
				t.Fatalf("applied %v resets %v; want %v and %v", applied, reasons, tc.applied, tc.resets)
			}
			if c := sub.Stats(); !tc.counters(c) {
				t.Fatalf("counters: %+v", c)
			}
		})
	}
}
