package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// liveFixture is a served Server with fast liveness checks and a gRPC client.
type liveFixture struct {
	srv      *Server
	replicas v1.ReplicaServiceClient
	picks    v1.RouterServiceClient
}

func newLiveFixture(t *testing.T, cfg LivenessConfig) *liveFixture {
	t.Helper()
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	srv := New(router, Config{Liveness: cfg, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
	})
	return &liveFixture{srv: srv, replicas: v1.NewReplicaServiceClient(conn), picks: v1.NewRouterServiceClient(conn)}
}

// health returns a replica's reported health.
func (f *liveFixture) health(t *testing.T, id string) v1.ReplicaHealth {
	t.Helper()
	resp, err := f.replicas.ListReplicas(context.Background(), &v1.ListReplicasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.GetReplicas() {
		if r.GetReplica().GetId() == id {
			return r.GetHealth()
		}
	}
	t.Fatalf("replica %s not listed", id)
	return 0
}

// await polls until the replica reports want (bounded; the checks run every few ms).
func (f *liveFixture) await(t *testing.T, id string, want v1.ReplicaHealth) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for got := f.health(t, id); got != want; got = f.health(t, id) {
		if time.Now().After(deadline) {
			t.Fatalf("%s is %s, want %s", id, got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (f *liveFixture) register(t *testing.T, id, healthURL string) {
	t.Helper()
	_, err := f.replicas.RegisterReplica(context.Background(), &v1.RegisterReplicaRequest{Replica: &v1.Replica{Id: id, Model: "m", HealthUrl: healthURL}})
	if err != nil {
		t.Fatalf("register %s: %v", id, err)
	}
}

// pickAll makes n picks and counts them by replica.
func (f *liveFixture) pickAll(t *testing.T, n int) map[string]int {
	t.Helper()
	out := map[string]int{}
	for i := range n {
		resp, err := f.picks.PickReplica(context.Background(), &v1.PickReplicaRequest{
			RequestId: fmt.Sprintf("p%d", i), Model: "m", DryRun: true,
			Prompt: &v1.PickReplicaRequest_Text{Text: "hello"},
		})
		if err != nil {
			t.Fatal(err)
		}
		out[resp.GetReplicaId()]++
	}
	return out
}

func TestLivenessProbe(t *testing.T) {
	var up atomic.Bool
	up.Store(true)
	probed := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !up.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer probed.Close()
	f := newLiveFixture(t, LivenessConfig{Interval: 10 * time.Millisecond, FailureThreshold: 2})
	f.register(t, "a", probed.URL)
	f.register(t, "b", "")
	f.await(t, "a", v1.ReplicaHealth_REPLICA_HEALTH_HEALTHY)
	if h := f.health(t, "b"); h != v1.ReplicaHealth_REPLICA_HEALTH_UNSPECIFIED {
		t.Errorf("b (no health URL, no heartbeat) is %s, want unspecified", h)
	}

	up.Store(false)
	f.await(t, "a", v1.ReplicaHealth_REPLICA_HEALTH_UNHEALTHY)
	if got := f.pickAll(t, 20); got["a"] != 0 {
		t.Errorf("unhealthy a got %d of 20 picks", got["a"])
	}
	// Setting its state does not bring it back while it fails its probes.
	if _, err := f.replicas.SetReplicaState(context.Background(), &v1.SetReplicaStateRequest{ReplicaId: "a", State: v1.ReplicaState_REPLICA_STATE_READY}); err != nil {
		t.Fatal(err)
	}
	if got := f.pickAll(t, 20); got["a"] != 0 {
		t.Errorf("unhealthy a got %d of 20 picks after SetReplicaState", got["a"])
	}

	up.Store(true)
	f.await(t, "a", v1.ReplicaHealth_REPLICA_HEALTH_HEALTHY)
	if got := f.pickAll(t, 40); got["a"] == 0 {
		t.Errorf("healthy again, a got no pick of 40 (%v)", got)
	}
	st := f.srv.LivenessStats()
	if st.Quarantines != 1 || st.Restores != 1 || st.ProbeFailures < 2 {
		t.Errorf("stats %+v: want one quarantine, one restore, >= 2 failed probes", st)
	}
}

func TestLivenessHeartbeat(t *testing.T) {
	f := newLiveFixture(t, LivenessConfig{Interval: 10 * time.Millisecond, HeartbeatTimeout: 100 * time.Millisecond})
	f.register(t, "a", "")
	f.register(t, "b", "")
	beat := func(id string) {
		t.Helper()
		resp, err := f.replicas.Heartbeat(context.Background(), &v1.HeartbeatRequest{ReplicaId: id})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetStatus().GetReplica().GetId() != id {
			t.Fatalf("heartbeat status for %q", resp.GetStatus().GetReplica().GetId())
		}
	}
	beat("a")
	if h := f.health(t, "a"); h != v1.ReplicaHealth_REPLICA_HEALTH_HEALTHY {
		t.Fatalf("a after a heartbeat is %s", h)
	}
	f.await(t, "a", v1.ReplicaHealth_REPLICA_HEALTH_UNHEALTHY) // silent for longer than the timeout
	if got := f.pickAll(t, 20); got["a"] != 0 {
		t.Errorf("silent a got %d picks", got["a"])
	}
	beat("a")
	if h := f.health(t, "a"); h != v1.ReplicaHealth_REPLICA_HEALTH_HEALTHY {
		t.Errorf("a after heartbeating again is %s", h)
	}
}

func TestLivenessValidation(t *testing.T) {
	f := newLiveFixture(t, LivenessConfig{})
	cases := []struct {
		name string
		call func() error
		code codes.Code
	}{
		{"relative health url", func() error {
			_, err := f.replicas.RegisterReplica(context.Background(), &v1.RegisterReplicaRequest{Replica: &v1.Replica{Id: "x", Model: "m", HealthUrl: "/health"}})
			return err
		}, codes.InvalidArgument},
		{"ftp health url", func() error {
			_, err := f.replicas.RegisterReplica(context.Background(), &v1.RegisterReplicaRequest{Replica: &v1.Replica{Id: "x", Model: "m", HealthUrl: "ftp://h/x"}})
			return err
		}, codes.InvalidArgument},
		{"heartbeat unknown replica", func() error {
			_, err := f.replicas.Heartbeat(context.Background(), &v1.HeartbeatRequest{ReplicaId: "nope"})
			return err
		}, codes.NotFound},
		{"heartbeat without id", func() error {
			_, err := f.replicas.Heartbeat(context.Background(), &v1.HeartbeatRequest{})
			return err
		}, codes.InvalidArgument},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := status.Code(tc.call()); got != tc.code {
				t.Errorf("code %s, want %s", got, tc.code)
			}
		})
	}
	resp, err := f.replicas.ListReplicas(context.Background(), &v1.ListReplicasRequest{})
	if err != nil || len(resp.GetReplicas()) != 0 {
		t.Errorf("rejected registrations left replicas: %v %v", resp.GetReplicas(), err)
	}
	// With liveness off, heartbeats are accepted and health stays unspecified.
	if _, err := f.replicas.RegisterReplica(context.Background(), &v1.RegisterReplicaRequest{Replica: &v1.Replica{Id: "y", Model: "m", HealthUrl: "http://127.0.0.1:1/health"}}); err != nil {
		t.Fatal(err)
	}
	hb, err := f.replicas.Heartbeat(context.Background(), &v1.HeartbeatRequest{ReplicaId: "y"})
	if err != nil || hb.GetStatus().GetHealth() != v1.ReplicaHealth_REPLICA_HEALTH_UNSPECIFIED || hb.GetStatus().GetReplica().GetHealthUrl() == "" {
		t.Errorf("heartbeat with liveness off: %v, %v", hb.GetStatus(), err)
	}
}
