package switchyard_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
)

func newReporter(t *testing.T, c *switchyard.Client, opts ...switchyard.ReporterOption) *switchyard.Reporter {
	t.Helper()
	r, err := c.NewReporter(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r
}

func report(t *testing.T, r *switchyard.Reporter, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		if err := r.Report(switchyard.FirstToken(fmt.Sprintf("r%d", i), "a")); err != nil {
			t.Fatalf("Report r%d: %v", i, err)
		}
	}
}

func flush(t *testing.T, r *switchyard.Reporter) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.Flush(ctx); err != nil {
		t.Fatalf("Flush: %v (stats %+v)", err, r.Stats())
	}
}

func TestReporterBatches(t *testing.T) {
	f := &fakeRouter{}
	r := newReporter(t, dialFast(t, startFake(t, f)), switchyard.WithBatchSize(10), switchyard.WithFlushInterval(time.Hour))
	report(t, r, 0, 95)
	flush(t, r)
	ids, msgs := f.received()
	if want := "[10 10 10 10 10 10 10 10 10 5]"; fmt.Sprint(msgs) != want {
		t.Fatalf("message sizes = %v, want %s (full batches at once, the rest on Flush)", msgs, want)
	}
	for i, id := range ids {
		if id != fmt.Sprintf("r%d", i) {
			t.Fatalf("event %d is %s: order not kept", i, id)
		}
	}
	st := r.Stats()
	if st.Delivered != 95 || st.Applied != 95 || st.Pending != 0 || st.Failures != 0 {
		t.Fatalf("stats = %+v, want 95 delivered and applied", st)
	}
	checkAccounting(t, st)
}

func TestReporterFlushIntervalSendsPartialBatch(t *testing.T) {
	f := &fakeRouter{}
	r := newReporter(t, dialFast(t, startFake(t, f)), switchyard.WithBatchSize(100), switchyard.WithFlushInterval(10*time.Millisecond))
	report(t, r, 0, 3)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if ids, _ := f.received(); len(ids) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("3 events not sent without Flush within 5 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestReporterStreamFailures(t *testing.T) {
	tests := []struct {
		name      string
		fake      *fakeRouter
		rejected  bool // the failed stream's events are rejected, not resent
		minResent int64
	}{
		{"unavailable after 2 messages", &fakeRouter{failStreams: 1, failAfter: 2, failCode: codes.Unavailable}, false, 10},
		{"internal at once, twice", &fakeRouter{failStreams: 2, failAfter: 0, failCode: codes.Internal}, false, 1},
		{"invalid argument", &fakeRouter{failStreams: 1, failAfter: 1, failCode: codes.InvalidArgument}, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.fake
			r := newReporter(t, dialFast(t, startFake(t, f)), switchyard.WithBatchSize(5),
				switchyard.WithFlushInterval(time.Hour), switchyard.WithBackoff(time.Millisecond, 10*time.Millisecond))
			report(t, r, 0, 30)
			flush(t, r)
			st := r.Stats()
			checkAccounting(t, st)
			if st.Failures != int64(f.failStreams) || st.Dropped != 0 || st.Pending != 0 {
				t.Fatalf("stats = %+v, want %d failures and nothing dropped or pending", st, f.failStreams)
			}
			ids, _ := f.received()
			seen := map[string]bool{}
			for _, id := range ids {
				seen[id] = true
			}
			if tt.rejected {
				if st.Rejected < 5 || st.Resent != 0 || st.Delivered+st.Rejected != 30 {
					t.Fatalf("stats = %+v, want the failed stream's events rejected, the rest delivered", st)
				}
				return
			}
			if st.Delivered != 30 || st.Resent < tt.minResent || st.Rejected != 0 {
				t.Fatalf("stats = %+v, want 30 delivered, at least %d resent", st, tt.minResent)
			}
			for i := range 30 {
				if !seen[fmt.Sprintf("r%d", i)] {
					t.Fatalf("r%d never reached the server", i)
				}
			}
		})
	}
}

func TestReporterDropsOldestWhileServerIsDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens until the fake starts below
	r := newReporter(t, dialFast(t, addr), switchyard.WithBatchSize(10), switchyard.WithBufferSize(100),
		switchyard.WithBackoff(time.Millisecond, 20*time.Millisecond))
	report(t, r, 0, 250)
	if st := r.Stats(); st.Dropped != 150 || st.Pending != 100 {
		t.Fatalf("stats while down = %+v, want 150 dropped, 100 pending", st)
	}
	for deadline := time.Now().Add(5 * time.Second); r.Stats().Failures == 0; {
		if time.Now().After(deadline) {
			t.Fatal("no failed connection attempt counted within 5 s")
		}
		time.Sleep(time.Millisecond)
	}

	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("port %s was taken meanwhile: %v", addr, err)
	}
	f := &fakeRouter{}
	serveFake(t, f, ln)
	flush(t, r)
	ids, _ := f.received()
	if len(ids) != 100 || ids[0] != "r150" || ids[99] != "r249" {
		t.Fatalf("server got %d events %v..., want r150..r249 (the oldest dropped)", len(ids), ids[:min(3, len(ids))])
	}
	st := r.Stats()
	if st.Delivered != 100 || st.Dropped != 150 || st.Failures == 0 {
		t.Fatalf("stats = %+v, want 100 delivered, 150 dropped, failures counted", st)
	}
	checkAccounting(t, st)
}

func TestReporterCloseGivesUpAndCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	r, err := dialFast(t, addr).NewReporter(switchyard.WithBackoff(time.Millisecond, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	report(t, r, 0, 7)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = r.Close(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "7 events undelivered") {
		t.Fatalf("Close = %v, want deadline exceeded with 7 events undelivered", err)
	}
	st := r.Stats()
	if st.Dropped != 7 || st.Pending != 0 {
		t.Fatalf("stats = %+v, want the 7 dropped", st)
	}
	checkAccounting(t, st)
	if err := r.Report(switchyard.FirstToken("late", "")); !errors.Is(err, switchyard.ErrClosed) {
		t.Fatalf("Report after Close = %v, want ErrClosed", err)
	}
	if err := r.Close(context.Background()); !errors.Is(err, switchyard.ErrClosed) {
		t.Fatalf("second Close = %v, want ErrClosed", err)
	}
}

func TestReporterRefusesInvalidEvents(t *testing.T) {
	r := newReporter(t, dialFast(t, startFake(t, &fakeRouter{})))
	err := r.Report(switchyard.Progress("r1", "a", -1))
	if !errors.Is(err, switchyard.ErrInvalidEvent) || !strings.Contains(err.Error(), "progress.generated_tokens") {
		t.Fatalf("Report = %v, want ErrInvalidEvent naming progress.generated_tokens", err)
	}
	if st := r.Stats(); st.Reported != 0 {
		t.Fatalf("invalid event counted as reported: %+v", st)
	}
}

func TestNewReporterRejectsBadOptions(t *testing.T) {
	c := dialFast(t, "127.0.0.1:1")
	if _, err := c.NewReporter(switchyard.WithBatchSize(20000)); err == nil {
		t.Fatal("NewReporter accepted a batch size above the server's limit")
	}
}
