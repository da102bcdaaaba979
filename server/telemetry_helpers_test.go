package server

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	dto "github.com/prometheus/client_model/go"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// liveServer is a Server serving on a loopback port with a gRPC client.
type liveServer struct {
	srv    *Server
	router *scoring.Router
	addr   string
	conn   *grpc.ClientConn
	pick   v1.RouterServiceClient
}

// startLive serves a fresh router with replicas of model "m" registered.
func startLive(t testing.TB, cfg Config, replicas ...string) *liveServer {
	t.Helper()
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(router.Close)
	for _, id := range replicas {
		if _, err := router.Register(context.Background(), scoring.Replica{ID: id, Model: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	srv := New(router, cfg)
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
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &liveServer{srv: srv, router: router, addr: ln.Addr().String(), conn: conn, pick: v1.NewRouterServiceClient(conn)}
}

// tokenPick is a PickReplicaRequest of n token ids starting at base.
func tokenPick(id string, base uint32, n int) *v1.PickReplicaRequest {
	ids := make([]uint32, n)
	for i := range ids {
		ids[i] = base + uint32(i)
	}
	return &v1.PickReplicaRequest{RequestId: id, Model: "m", Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}}
}

// mustPick calls PickReplica over gRPC and fails the test on error.
func (l *liveServer) mustPick(t testing.TB, req *v1.PickReplicaRequest) *v1.PickReplicaResponse {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := l.pick.PickReplica(ctx, req)
	if err != nil {
		t.Fatalf("pick %q: %v", req.GetRequestId(), err)
	}
	return resp
}

// scrape fetches GET /metrics and parses it with the Prometheus text parser.
func (l *liveServer) scrape(t testing.TB) families {
	t.Helper()
	resp, err := http.Get("http://" + l.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return fams
}

// families are parsed Prometheus metric families by name.
type families map[string]*dto.MetricFamily

// value sums the samples of a family whose labels include want: a counter's
// or gauge's value, a histogram's count. A missing family is an error; no
// matching sample is 0.
func (f families) value(name string, want map[string]string) (float64, error) {
	fam, ok := f[name]
	if !ok {
		return 0, fmt.Errorf("metric family %s is missing", name)
	}
	var sum float64
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, want) {
			continue
		}
		switch fam.GetType() {
		case dto.MetricType_COUNTER:
			sum += m.GetCounter().GetValue()
		case dto.MetricType_GAUGE:
			sum += m.GetGauge().GetValue()
		case dto.MetricType_HISTOGRAM:
			sum += float64(m.GetHistogram().GetSampleCount())
		default:
			return 0, fmt.Errorf("metric family %s has unexpected type %s", name, fam.GetType())
		}
	}
	return sum, nil
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	found := 0
	for _, lp := range m.GetLabel() {
		if v, ok := want[lp.GetName()]; ok {
			if v != lp.GetValue() {
				return false
			}
			found++
		}
	}
	return found == len(want)
}

// eventually polls cond until it holds or 10 s pass.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
