package switchyard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

func dialConn(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// blocks returns n 16-token blocks' worth of tokens starting at first.
func blocks(n int, first uint32) []uint32 {
	out := make([]uint32, 16*n)
	for i := range out {
		out[i] = first + uint32(i)
	}
	return out
}

func cachedOn(t *testing.T, c *switchyard.Client, replica string) int64 {
	t.Helper()
	list, err := c.ListReplicas(context.Background(), "m")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range list {
		if r.GetReplica().GetId() == replica {
			return r.GetCache().GetDeviceBlocks()
		}
	}
	t.Fatalf("replica %s not listed", replica)
	return 0
}

// A second publisher for the same engine (a restarted sidecar, starting its
// sequence again) supersedes the first and clears the engine's entries. The
// first fails; its next stream continues its own sequence past the batch
// that failed, so the router sees a gap, drops the entries again, and then
// holds only what that stream stored.
func TestKVPublisherRestartAndGapAcrossStreams(t *testing.T) {
	c := realClient(t)
	ctx := context.Background()
	first, err := c.NewKVPublisher("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Publish(ctx, switchyard.StoredEvent(&v1.BlockStored{BlockHashes: []uint64{1, 2, 3}, TokenIds: blocks(3, 0)})); err != nil {
		t.Fatal(err)
	}
	// Sends are asynchronous: wait until the server applied the first
	// stream's batch, so that it claimed the engine before the second does.
	for deadline := time.Now().Add(5 * time.Second); cachedOn(t, c, "a") != 3; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("first batch not applied within 5 s")
		}
	}
	second, err := c.NewKVPublisher("a")
	if err != nil {
		t.Fatal(err)
	}
	if err := second.Publish(ctx, switchyard.RemovedEvent(v1.Tier_TIER_DEVICE, 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := second.Close(ctx); err != nil {
		t.Fatal(err)
	}

	// The superseded stream's failure shows on a later Send.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		err = first.Publish(ctx, switchyard.StoredEvent(&v1.BlockStored{BlockHashes: []uint64{9}, TokenIds: blocks(1, 900)}))
		if err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("superseded publisher did not fail within 5 s")
		}
	}
	if !errors.Is(err, switchyard.ErrConflict) {
		t.Fatalf("superseded Publish = %v, want ErrConflict", err)
	}
	if err := first.Publish(ctx, switchyard.StoredEvent(&v1.BlockStored{BlockHashes: []uint64{7, 8}, TokenIds: blocks(2, 700)})); err != nil {
		t.Fatalf("Publish on a new stream: %v", err)
	}
	totals, err := first.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if totals.GetEventsApplied() != 1 || totals.GetBatches() != 1 || totals.GetGaps() != 1 {
		t.Fatalf("new stream totals = %v, want 1 batch, 1 event, 1 gap", totals)
	}
	if got := cachedOn(t, c, "a"); got != 2 {
		t.Fatalf("device blocks on a = %d, want 2 (only the new stream's)", got)
	}
	st := first.Stats()
	if st.Streams != 2 || st.Failures != 1 || st.Sequence != uint64(st.Batches)+1 {
		t.Fatalf("stats = %+v, want 2 streams, 1 failure, and the failed batch's sequence skipped", st)
	}
	if err := first.Publish(ctx); !errors.Is(err, switchyard.ErrClosed) {
		t.Fatalf("Publish after Close = %v, want ErrClosed", err)
	}
}

// A publisher's batches accumulate; a new publisher for the same engine is a
// restarted engine, whose old entries go.
func TestKVPublisherNewPublisherIsARestart(t *testing.T) {
	c := realClient(t)
	ctx := context.Background()
	for i, hashes := range [][]uint64{{1, 2}, {3}} {
		p, err := c.NewKVPublisher("b", switchyard.WithDataParallelRank(0))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Publish(ctx, switchyard.StoredEvent(&v1.BlockStored{BlockHashes: hashes, TokenIds: blocks(len(hashes), uint32(100*i))})); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := p.Publish(ctx, switchyard.StoredEvent(&v1.BlockStored{BlockHashes: []uint64{4}, ParentBlockHash: ptr(uint64(2)), TokenIds: blocks(1, 32)})); err != nil {
				t.Fatal(err)
			}
		}
		totals, err := p.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(i); totals.GetRestarts() != want {
			t.Fatalf("publisher %d: restarts = %d, want %d", i, totals.GetRestarts(), want)
		}
		if want := []int64{3, 1}[i]; cachedOn(t, c, "b") != want {
			t.Fatalf("after publisher %d: device blocks on b = %d, want %d", i, cachedOn(t, c, "b"), want)
		}
	}
}

func ptr[T any](v T) *T { return &v }

func TestKVPublisherRejectsBadInput(t *testing.T) {
	c := dialFast(t, "127.0.0.1:1")
	tests := []struct {
		name string
		err  func() error
		want string
	}{
		{"empty replica id", func() error { _, err := c.NewKVPublisher(""); return err }, "replica id"},
		{"negative rank", func() error { _, err := c.NewKVPublisher("a", switchyard.WithDataParallelRank(-1)); return err }, "rank"},
		{"unset event", func() error {
			p, err := c.NewKVPublisher("a")
			if err != nil {
				return err
			}
			return p.Publish(context.Background(), &v1.KVEvent{})
		}, "events[0]"},
		{"batch too large", func() error {
			p, err := c.NewKVPublisher("a")
			if err != nil {
				return err
			}
			return p.Publish(context.Background(), make([]*v1.KVEvent, 10001)...)
		}, "batch limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.err(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, tt.want)
			}
		})
	}
}
