package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// auditServer serves a router with replicas a and b of model "m" and
// returns its address and a function making a pick.
func auditServer(t *testing.T) (string, func(id string) *v1.PickReplicaResponse) {
	t.Helper()
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := router.Register(context.Background(), scoring.Replica{ID: id, Model: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	srv := server.New(router, server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	client := v1.NewRouterServiceClient(conn)
	pick := func(id string) *v1.PickReplicaResponse {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := client.PickReplica(ctx, &v1.PickReplicaRequest{RequestId: id, Model: "m",
			Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: make([]uint32, 48)}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	return ln.Addr().String(), pick
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// tableRows returns the rows of a whitespace-aligned table after its
// header line (the one starting with first), as fields.
func tableRows(out, first string) [][]string {
	var rows [][]string
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
			in = false
		case f[0] == first:
			in = true
		case in:
			rows = append(rows, f)
		}
	}
	return rows
}

func TestDecisionsGet(t *testing.T) {
	addr, pick := auditServer(t)
	resp := pick("req-1")

	code, out, errOut := runCLI("decisions", "get", "-addr", addr, "req-1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := tableRows(out, "rank")
	if len(rows) != 2 {
		t.Fatalf("candidate table has %d rows, want 2:\n%s", len(rows), out)
	}
	// Columns: rank replica device prefix cached prefill decode active cost.
	if rows[0][0] != "1" || rows[0][1] != resp.GetReplicaId() || rows[1][0] != "2" {
		t.Errorf("ranked rows %v, want rank 1 = %s first", rows, resp.GetReplicaId())
	}
	if !strings.Contains(out, "request req-1 -> "+resp.GetReplicaId()) || !strings.Contains(out, "model m") {
		t.Errorf("header does not name the request, replica and model:\n%s", out)
	}

	code, out, _ = runCLI("decisions", "get", "-addr", addr, "-json", "req-1")
	d := &v1.Decision{}
	if code != 0 || protojson.Unmarshal([]byte(out), d) != nil || d.GetDecisionId() != resp.GetDecisionId() {
		t.Errorf("-json: exit %d, decision %v, want %s", code, d, resp.GetDecisionId())
	}

	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown request", []string{"get", "-addr", addr, "nope"}, 1, "NotFound"},
		{"no request id", []string{"get", "-addr", addr}, 2, "want exactly one REQUEST_ID"},
		{"no subcommand", nil, 2, "usage"},
		{"unknown subcommand", []string{"list"}, 2, "usage"},
		{"tail extra argument", []string{"tail", "-addr", addr, "x"}, 2, "unexpected arguments"},
		{"tail bad n", []string{"tail", "-addr", addr, "-n", "5000"}, 1, "-n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := runCLI(append([]string{"decisions"}, tc.args...)...)
			if code != tc.code || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit %d mentioning %q", code, errOut, tc.code, tc.want)
			}
		})
	}
}

func TestDecisionsTail(t *testing.T) {
	addr, pick := auditServer(t)
	for _, id := range []string{"t1", "t2", "t3"} {
		pick(id)
	}
	code, out, errOut := runCLI("decisions", "tail", "-addr", addr, "-n", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := tableRows(out, "TIME")
	if len(rows) != 2 || rows[0][1] != "t2" || rows[1][1] != "t3" {
		t.Fatalf("tail -n 2 rows %v, want t2 then t3 (oldest first):\n%s", rows, out)
	}

	code, out, _ = runCLI("decisions", "tail", "-addr", addr, "-json", "-replica", "nobody")
	if code != 0 || strings.TrimSpace(out) != "" {
		t.Errorf("filtered tail: exit %d, output %q, want nothing", code, out)
	}
}

// syncBuffer is a bytes.Buffer safe for one writer and polling readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestDecisionsTailFollow(t *testing.T) {
	addr, pick := auditServer(t)
	pick("before")
	ctx, cancel := context.WithCancel(context.Background())
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"decisions", "tail", "-addr", addr, "-json", "-follow"}, &out, &errOut)
	}()

	// The listed decision comes first; then new ones stream in until cancel.
	ids := func() []string {
		var got []string
		sc := bufio.NewScanner(strings.NewReader(out.String()))
		for sc.Scan() {
			d := &v1.Decision{}
			if protojson.Unmarshal(sc.Bytes(), d) == nil {
				got = append(got, d.GetRequestId())
			}
		}
		return got
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(ids()) < 1 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// Pick until one shows up on the stream (the first may race the
	// server's subscription of the watcher).
	for n := 0; !strings.Contains(strings.Join(ids(), ","), "after") && time.Now().Before(deadline); n++ {
		pick(fmt.Sprintf("after-%d", n))
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	got := ids()
	if len(got) < 2 || got[0] != "before" || !strings.HasPrefix(got[len(got)-1], "after-") {
		t.Fatalf("followed ids %v, want before then after-*", got)
	}
	seen := map[string]bool{}
	for _, id := range got {
		if seen[id] {
			t.Errorf("decision %s printed twice", id)
		}
		seen[id] = true
	}
}
