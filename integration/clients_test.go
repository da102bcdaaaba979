package integration

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// serveRouterForClients serves router on ln and returns a function that shuts the
// server down (the router lives on: a restart keeps its state).
func serveRouterForClients(t *testing.T, router *scoring.Router, ln net.Listener) (stop func()) {
	t.Helper()
	srv := server.New(router, server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			if err := <-served; err != nil {
				t.Errorf("Serve: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

// clientsFleetLoad sums the live load of model m's replicas.
func clientsFleetLoad(t *testing.T, c *switchyard.Client, m string) (prefill, decode, active int64) {
	t.Helper()
	list, err := c.ListReplicas(context.Background(), m)
	if err != nil {
		t.Fatalf("ListReplicas: %v", err)
	}
	for _, r := range list {
		prefill += r.GetLoad().GetPrefillTokens()
		decode += r.GetLoad().GetDecodeBlocks()
		active += r.GetLoad().GetActiveRequests()
	}
	return prefill, decode, active
}

// clientsPickAndReport picks a replica for requests [from, to) with 8 concurrent
// workers and reports each one's lifecycle through rep; requests at or
// above holdFrom get no done event. It returns the chosen replicas.
func clientsPickAndReport(t *testing.T, c *switchyard.Client, rep *switchyard.Reporter, from, to, holdFrom int) map[int]string {
	t.Helper()
	var (
		mu     sync.Mutex
		chosen = map[int]string{}
		wg     sync.WaitGroup
		next   = make(chan int)
	)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				id := fmt.Sprintf("req-%d", i)
				resp, err := c.Pick(context.Background(), &v1.PickReplicaRequest{
					RequestId: id, Model: "m", Prompt: tokens(48+i%5*16, i%37),
				})
				if err != nil {
					t.Errorf("Pick %s: %v", id, err)
					continue
				}
				r := resp.GetReplicaId()
				events := []*v1.LifecycleEvent{
					switchyard.Admitted(id, r, resp.GetPromptTokens(), 0),
					switchyard.FirstToken(id, r),
					switchyard.Progress(id, r, 10),
				}
				if i < holdFrom {
					events = append(events, switchyard.Done(id, r, 20, v1.CompletionStatus_COMPLETION_STATUS_OK))
				}
				for _, ev := range events {
					if err := rep.Report(ev); err != nil {
						t.Errorf("Report %s: %v", id, err)
					}
				}
				mu.Lock()
				chosen[i] = r
				mu.Unlock()
			}
		})
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return chosen
}

// TestGoClientThousandPicksSurviveRestart is the Go client's acceptance
// test: 1,000 picks with their lifecycle streamed through a Reporter, and a
// server restart in the middle. Events reported while the server is down are
// queued in a bounded buffer (what overflows is counted), delivered after the
// restart, and every replica's load returns to zero.
//
// The restart replaces the whole transport (server, listener, connections)
// but keeps the scoring.Router, so that the loads checked afterwards can only
// be zero if the events reported during the outage did arrive.
func TestGoClientThousandPicksSurviveRestart(t *testing.T) {
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	stop := serveRouterForClients(t, router, ln)

	c, err := switchyard.Dial(addr,
		switchyard.WithLogger(slog.New(slog.DiscardHandler)),
		switchyard.WithDialOptions(grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.6, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		})))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	for i := range 4 {
		if _, err := c.RegisterReplica(ctx, &v1.Replica{Id: fmt.Sprintf("vllm-%d", i), Model: "m",
			Capacity: &v1.ReplicaCapacity{KvBlocks: 100000}}); err != nil {
			t.Fatal(err)
		}
	}
	// The buffer holds every event of a phase (at most 2,000), so only the
	// outage can overflow it.
	const buffer = 4096
	rep, err := c.NewReporter(switchyard.WithBatchSize(64), switchyard.WithFlushInterval(2*time.Millisecond),
		switchyard.WithBufferSize(buffer), switchyard.WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}

	// Phase A: 500 picks; the last 100 stay active (no done yet).
	chosen := clientsPickAndReport(t, c, rep, 0, 500, 400)
	if err := rep.Flush(ctx); err != nil {
		t.Fatalf("Flush before restart: %v", err)
	}
	if prefill, decode, active := clientsFleetLoad(t, c, "m"); active != 100 || prefill != 0 || decode <= 0 {
		t.Fatalf("load before restart: prefill %d, decode %d, active %d; want 0, > 0, 100", prefill, decode, active)
	}
	before := rep.Stats()

	// Outage: the server is gone while the data plane keeps reporting — a
	// flood of progress events for finished requests, then the done events
	// of the 100 active ones. The buffer keeps the newest 4,096.
	stop()
	const flood = 5000
	for i := range flood {
		id := i % 400
		if err := rep.Report(switchyard.Progress(fmt.Sprintf("req-%d", id), chosen[id], 15)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 400; i < 500; i++ {
		if err := rep.Report(switchyard.Done(fmt.Sprintf("req-%d", i), chosen[i], 20, v1.CompletionStatus_COMPLETION_STATUS_OK)); err != nil {
			t.Fatal(err)
		}
	}

	// The reporter tries, fails and backs off while the server is down.
	for deadline := time.Now().Add(10 * time.Second); rep.Stats().Failures < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("reporter did not notice the outage: %+v", rep.Stats())
		}
	}

	// Restart on the same address.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("relisten on %s: %v", addr, err)
	}
	serveRouterForClients(t, router, ln)
	if err := rep.Flush(ctx); err != nil {
		t.Fatalf("Flush after restart: %v (stats %+v)", err, rep.Stats())
	}
	gap := rep.Stats()
	if prefill, decode, active := clientsFleetLoad(t, c, "m"); prefill != 0 || decode != 0 || active != 0 {
		t.Fatalf("load after the outage's events: prefill %d, decode %d, active %d; want all 0", prefill, decode, active)
	}
	wantDropped := int64(flood + 100 - buffer)
	survivors := int64(buffer - 100) // flood events that made it: all for finished requests
	switch {
	case gap.Dropped != wantDropped:
		t.Fatalf("dropped = %d, want %d (the gap: %d reported into a %d-event buffer)", gap.Dropped, wantDropped, flood+100, buffer)
	case gap.Delivered-before.Delivered != int64(buffer):
		t.Fatalf("delivered after restart = %d, want %d", gap.Delivered-before.Delivered, buffer)
	case gap.UnknownRequest-before.UnknownRequest != survivors || gap.Applied-before.Applied != 100:
		t.Fatalf("server counts after restart: %d unknown, %d applied; want %d and 100", gap.UnknownRequest-before.UnknownRequest,
			gap.Applied-before.Applied, survivors)
	}

	// Phase B: 500 more picks, all completed.
	clientsPickAndReport(t, c, rep, 500, 1000, 1000)
	if err := rep.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if prefill, decode, active := clientsFleetLoad(t, c, "m"); prefill != 0 || decode != 0 || active != 0 {
		t.Fatalf("load at the end: prefill %d, decode %d, active %d; want all 0 (reporter %+v, router %+v)",
			prefill, decode, active, rep.Stats(), router.Counters())
	}
	st := rep.Stats()
	if st.Reported != st.Delivered+st.Dropped+st.Rejected || st.Pending != 0 || st.Rejected != 0 || st.Dropped != wantDropped {
		t.Fatalf("final stats do not add up: %+v", st)
	}
	if picks := router.Counters().Picks; picks != 1000 {
		t.Fatalf("router counted %d picks, want 1000", picks)
	}
	t.Logf("reporter: %+v", st)
}
