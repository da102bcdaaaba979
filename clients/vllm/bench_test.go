package vllm

import (
	"context"
	"github.com/switchyard-llm/switchyard/integration/vllmpub"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
)

// Benchmark shape: a vLLM step storing 4 sequences of 16 blocks of 16 tokens.
const (
	benchEvents    = 4
	benchBlocks    = 16
	benchBlockSize = 16
	benchPerBatch  = benchEvents * benchBlocks
)

// benchPayload builds the benchmark batch in the positional or map encoding.
func benchPayload(e *fakeEngine, mapped bool) []byte {
	events := make([]any, benchEvents)
	for i := range events {
		hashes := make([]uint64, benchBlocks)
		for j := range hashes {
			hashes[j] = uint64(i*1000+j) | 1<<63
		}
		tokens := make([]int, benchBlocks*benchBlockSize)
		for j := range tokens {
			tokens[j] = 100000 + j
		}
		events[i] = []any{"BlockStored", hashes, uint64(i) | 1<<62, tokens, benchBlockSize, nil, "GPU", nil, nil, 0, "full_attention"}
		if mapped {
			events[i] = map[string]any{"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": uint64(i) | 1<<62,
				"token_ids": tokens, "block_size": benchBlockSize, "lora_id": nil, "medium": "GPU", "lora_name": nil,
				"extra_keys": []any{nil}, "group_idx": 0, "kv_cache_spec_kind": "full_attention"}
		}
	}
	return e.payload(0, events...)
}

// countingSink counts applied blocks.
type countingSink struct{ blocks, batches atomic.Uint64 }

func (s *countingSink) ApplyBatch(_ context.Context, b Batch) error {
	n := 0
	for i := range b.Events {
		n += len(b.Events[i].BlockHashes)
	}
	s.blocks.Add(uint64(n))
	s.batches.Add(1)
	return nil
}

func (s *countingSink) ResetReplica(context.Context, string, int, ResetReason) {}

// BenchmarkIngest measures end-to-end ingestion, zmq4 PUB on loopback ->
// Subscriber -> counting Sink, in blocks/s, and in the same run decode-only
// throughput of the same payload, so the two can be compared (ratio).
func BenchmarkIngest(b *testing.B) {
	for _, enc := range []string{"array", "map"} {
		b.Run(enc, func(b *testing.B) {
			benchIngest(b, benchPayload(&fakeEngine{t: b, gen: 1}, enc == "map"))
		})
	}
}

func benchIngest(b *testing.B, payload []byte) {
	pubAddr := vllmpub.FreeAddr(b)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pub := zmq4.NewPub(ctx)
	if err := pub.Listen(pubAddr); err != nil {
		b.Fatal(err)
	}
	defer pub.Close()
	sink := &countingSink{}
	sub, err := New(sink, WithLogger(quietLogger()), WithBackoff(5*time.Millisecond, 50*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	if err := sub.Add(Endpoint{Replica: "bench", Live: pubAddr}); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- sub.Run(ctx) }()
	defer func() { cancel(); <-done }()

	seq := uint64(0)
	send := func() {
		if err := pub.Send(zmq4.NewMsgFrom(nil, be(seq), payload)); err != nil {
			b.Fatal(err)
		}
		seq++
	}
	waitFor(b, "the subscriber to connect", func() bool { send(); time.Sleep(2 * time.Millisecond); return sink.batches.Load() > 0 })
	time.Sleep(20 * time.Millisecond) // let warm-up stragglers land
	base := int64(sink.batches.Load())
	received := func() int64 { return int64(sink.batches.Load()) - base }

	const window = 512 // batches in flight, as a bounded engine-side queue
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		for int64(i)-received() >= window {
			time.Sleep(50 * time.Microsecond)
		}
		send()
	}
	for received() < int64(b.N) {
		time.Sleep(50 * time.Microsecond)
	}
	e2e := time.Since(start)
	b.StopTimer()

	dec, err := NewDecoder(DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	dstart := time.Now()
	for range b.N {
		if _, err := dec.Decode(payload); err != nil {
			b.Fatal(err)
		}
	}
	decodeOnly := time.Since(dstart)

	blocks := float64(b.N * benchPerBatch)
	b.ReportMetric(blocks/e2e.Seconds(), "blocks/s")
	b.ReportMetric(blocks/decodeOnly.Seconds(), "decode-blocks/s")
	b.ReportMetric(decodeOnly.Seconds()/e2e.Seconds(), "e2e/decode")
	if c := sub.Stats(); c.Gaps != 0 || c.Resets[ResetGap] != 0 {
		b.Fatalf("lost batches during the benchmark: %+v", c)
	}
}

// BenchmarkDecode measures decoding alone, per batch of benchPerBatch blocks.
func BenchmarkDecode(b *testing.B) {
	for _, enc := range []string{"array", "map"} {
		b.Run(enc, func(b *testing.B) {
			benchDecode(b, benchPayload(&fakeEngine{t: b, gen: 1}, enc == "map"))
		})
	}
}

func benchDecode(b *testing.B, payload []byte) {
	dec, err := NewDecoder(DefaultLimits())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dec.Decode(payload); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*benchPerBatch)/b.Elapsed().Seconds(), "blocks/s")
}
