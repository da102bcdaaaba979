package switchyard_test

import (
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// fakeRouter is a RouterService that records the lifecycle streams it
// receives and can fail its first streams, to test the Reporter's failure
// handling deterministically.
type fakeRouter struct {
	v1.UnimplementedRouterServiceServer

	failStreams int        // how many of the first streams fail
	failAfter   int        // ... after receiving this many messages
	failCode    codes.Code // ... with this code

	mu       sync.Mutex
	streams  int
	ids      []string // request ids in arrival order, repeats included
	messages []int    // events per message
}

func (f *fakeRouter) StreamLifecycle(s v1.RouterService_StreamLifecycleServer) error {
	f.mu.Lock()
	f.streams++
	failing := f.streams <= f.failStreams
	f.mu.Unlock()
	var applied int64
	for n := 0; ; n++ {
		if failing && n == f.failAfter {
			return status.Error(f.failCode, "injected failure")
		}
		req, err := s.Recv()
		if err == io.EOF {
			return s.SendAndClose(&v1.StreamLifecycleResponse{Counts: &v1.LifecycleCounts{Applied: applied}})
		}
		if err != nil {
			return err
		}
		f.mu.Lock()
		for _, e := range req.GetEvents() {
			f.ids = append(f.ids, e.GetRequestId())
		}
		f.messages = append(f.messages, len(req.GetEvents()))
		f.mu.Unlock()
		applied += int64(len(req.GetEvents()))
	}
}

// received returns copies of what arrived so far.
func (f *fakeRouter) received() (ids []string, messages []int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.ids...), append([]int(nil), f.messages...)
}

// serveFake serves f on ln until the test ends.
func serveFake(t *testing.T, f *fakeRouter, ln net.Listener) {
	t.Helper()
	s := grpc.NewServer()
	v1.RegisterRouterServiceServer(s, f)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(s.Stop)
}

// startFake serves f on a fresh loopback port and returns its address.
func startFake(t *testing.T, f *fakeRouter) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	serveFake(t, f, ln)
	return ln.Addr().String()
}

// quiet returns a logger that discards the logs of clients under test.
func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

// dialFast dials addr with quick reconnects, as tests need.
func dialFast(t *testing.T, addr string) *switchyard.Client {
	t.Helper()
	c, err := switchyard.Dial(addr, switchyard.WithLogger(quiet()), switchyard.WithDialOptions(grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 10 * time.Millisecond, Multiplier: 1.5, MaxDelay: 100 * time.Millisecond},
		MinConnectTimeout: time.Second,
	})))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// checkAccounting asserts the Reporter's invariant: every reported event is
// delivered, dropped, rejected or still pending.
func checkAccounting(t *testing.T, st switchyard.ReporterStats) {
	t.Helper()
	if st.Reported != st.Delivered+st.Dropped+st.Rejected+st.Pending {
		t.Fatalf("stats do not add up: %+v", st)
	}
}
