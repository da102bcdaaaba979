package server

import (
	"context"
	"io"
	"testing"

	"connectrpc.com/connect"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/index"
)

// feed returns a recv function over msgs, then io.EOF.
func feed(msgs ...*v1.PublishKVEventsRequest) func() (*v1.PublishKVEventsRequest, error) {
	return func() (*v1.PublishKVEventsRequest, error) {
		if len(msgs) == 0 {
			return nil, io.EOF
		}
		m := msgs[0]
		msgs = msgs[1:]
		return m, nil
	}
}

// storedChain is a Stored event of n blocks of 16 tokens starting at token
// base, with engine hashes base+1..base+n, chained under parent when given.
func storedChain(base uint32, n int, parent *uint64) *v1.KVEvent {
	hashes := make([]uint64, n)
	toks := make([]uint32, 16*n)
	for i := range hashes {
		hashes[i] = uint64(base) + uint64(i) + 1
	}
	for i := range toks {
		toks[i] = base + uint32(i)
	}
	return &v1.KVEvent{Event: &v1.KVEvent_Stored{Stored: &v1.BlockStored{
		BlockHashes: hashes, ParentBlockHash: parent, TokenIds: toks, BlockSize: 16,
	}}}
}

func batch(seq uint64, evs ...*v1.KVEvent) *v1.PublishKVEventsRequest {
	return &v1.PublishKVEventsRequest{ReplicaId: "a", Sequence: seq, Events: evs}
}

func cachedOn(f *fixture, id string) int {
	st, _ := f.router.Replica(id)
	return st.CachedBlocks[index.TierDevice]
}

func TestPublishKVEvents(t *testing.T) {
	ctx := context.Background()
	orphanParent := uint64(999_999)
	cases := []struct {
		name       string
		msgs       []*v1.PublishKVEventsRequest
		wantBlocks int
		maxBatch   int // 0 = 6
		check      func(t *testing.T, r *v1.PublishKVEventsResponse)
	}{
		{
			name:       "in order",
			msgs:       []*v1.PublishKVEventsRequest{batch(7, storedChain(0, 2, nil)), batch(8, storedChain(1000, 1, nil))},
			wantBlocks: 3,
			check: func(t *testing.T, r *v1.PublishKVEventsResponse) {
				if r.GetBatches() != 2 || r.GetEventsApplied() != 2 || r.GetLastSequence() != 8 {
					t.Errorf("resp = %v", r)
				}
			},
		},
		{
			name: "invalid events are counted, the rest of the batch applies",
			msgs: []*v1.PublishKVEventsRequest{batch(0,
				storedChain(0, 2, nil),
				&v1.KVEvent{},
				storedChain(500, 1, &orphanParent),
				&v1.KVEvent{Event: &v1.KVEvent_Stored{Stored: &v1.BlockStored{BlockHashes: []uint64{5}, TokenIds: make([]uint32, 16), Tier: 17}}},
				&v1.KVEvent{Event: &v1.KVEvent_Stored{Stored: &v1.BlockStored{BlockHashes: []uint64{6}, TokenIds: make([]uint32, 24), BlockSize: 24}}},
				storedChain(2000, 1, nil),
			)},
			wantBlocks: 3,
			check: func(t *testing.T, r *v1.PublishKVEventsResponse) {
				want := map[string]int64{"unset_event": 1, "orphan": 1, "unknown_tier": 1, "block_size": 1}
				for k, v := range want {
					if r.GetRejectedByReason()[k] != v {
						t.Errorf("rejected[%s] = %d, want %d (all: %v)", k, r.GetRejectedByReason()[k], v, r.GetRejectedByReason())
					}
				}
				if r.GetEventsApplied() != 2 || r.GetEventsRejected() != 4 {
					t.Errorf("applied %d rejected %d, want 2 and 4", r.GetEventsApplied(), r.GetEventsRejected())
				}
			},
		},
		{
			name:       "a gap drops the engine's entries",
			msgs:       []*v1.PublishKVEventsRequest{batch(1, storedChain(0, 2, nil)), batch(5, storedChain(1000, 1, nil))},
			wantBlocks: 1,
			check: func(t *testing.T, r *v1.PublishKVEventsResponse) {
				if r.GetGaps() != 1 {
					t.Errorf("gaps = %d, want 1", r.GetGaps())
				}
			},
		},
		{
			name:       "a sequence reset is a restart",
			msgs:       []*v1.PublishKVEventsRequest{batch(40, storedChain(0, 2, nil)), batch(0, storedChain(1000, 1, nil))},
			wantBlocks: 1,
			check: func(t *testing.T, r *v1.PublishKVEventsResponse) {
				if r.GetRestarts() != 1 {
					t.Errorf("restarts = %d, want 1", r.GetRestarts())
				}
			},
		},
		{
			name:       "an oversize batch is rejected whole",
			msgs:       []*v1.PublishKVEventsRequest{batch(0, storedChain(0, 1, nil), storedChain(100, 1, nil), storedChain(200, 1, nil), storedChain(300, 1, nil))},
			wantBlocks: 0,
			maxBatch:   3,
			check: func(t *testing.T, r *v1.PublishKVEventsResponse) {
				if r.GetRejectedByReason()["batch_too_large"] != 4 {
					t.Errorf("rejected = %v, want 4 batch_too_large", r.GetRejectedByReason())
				}
			},
		},
		{
			name:       "cleared",
			msgs:       []*v1.PublishKVEventsRequest{batch(0, storedChain(0, 2, nil), &v1.KVEvent{Event: &v1.KVEvent_Cleared{Cleared: &v1.AllBlocksCleared{}}})},
			wantBlocks: 0,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.maxBatch == 0 {
				tc.maxBatch = 6
			}
			f := newFixture(t, Config{MaxBatchEvents: tc.maxBatch})
			resp, err := f.kv.publish(ctx, feed(tc.msgs...))
			if err != nil {
				t.Fatal(err)
			}
			if got := cachedOn(f, "a"); got != tc.wantBlocks {
				t.Errorf("replica a holds %d device blocks, want %d", got, tc.wantBlocks)
			}
			if tc.check != nil {
				tc.check(t, resp)
			}
		})
	}
}

func TestPublishKVEventsStreamErrors(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, Config{})
	_, err := f.kv.publish(ctx, feed(&v1.PublishKVEventsRequest{}))
	wantInvalid(t, err, "replica_id")
	_, err = f.kv.publish(ctx, feed(&v1.PublishKVEventsRequest{ReplicaId: "ghost"}))
	if connect.CodeOf(err) != connect.CodeNotFound {
		t.Fatalf("unknown replica: err = %v, want NotFound", err)
	}
	_, err = f.kv.publish(ctx, feed(batch(0), &v1.PublishKVEventsRequest{ReplicaId: "b", Sequence: 1}))
	wantInvalid(t, err, "replica_id")

	// A second stream for the same engine supersedes the first.
	first := make(chan *v1.PublishKVEventsRequest)
	firstDone := make(chan error, 1)
	go func() {
		_, err := f.kv.publish(ctx, func() (*v1.PublishKVEventsRequest, error) {
			m, ok := <-first
			if !ok {
				return nil, io.EOF
			}
			return m, nil
		})
		firstDone <- err
	}()
	first <- batch(0, storedChain(0, 1, nil))
	// recv is called again only after batch 0 was applied, so once this send
	// completes the first stream owns the engine.
	first <- batch(1)
	if _, err := f.kv.publish(ctx, feed(batch(0, storedChain(100, 1, nil)))); err != nil {
		t.Fatal(err)
	}
	// The second stream ended and released the engine; the first stays
	// superseded on its next batch (or already was on batch 1).
	var firstErr error
	select {
	case first <- batch(2, storedChain(200, 1, nil)):
		close(first)
		firstErr = <-firstDone
	case firstErr = <-firstDone:
	}
	if connect.CodeOf(firstErr) != connect.CodeAborted {
		t.Fatalf("superseded stream: err = %v, want Aborted", firstErr)
	}
}
