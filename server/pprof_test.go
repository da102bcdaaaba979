package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchyard-llm/switchyard/scoring"
)

func TestPprofEndpoints(t *testing.T) {
	mux := http.NewServeMux()
	registerPprof(mux)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	cases := []struct {
		path   string
		status int
		want   string // in the body; "" = binary, just non-empty
	}{
		{"/debug/pprof/", 200, "goroutine"},
		{"/debug/pprof/heap?debug=1&gc=1", 200, "heap profile"},
		{"/debug/pprof/goroutine?debug=1", 200, "goroutine profile"},
		{"/debug/pprof/allocs", 200, ""},
		{"/debug/pprof/profile?seconds=1", 200, ""},
		{"/debug/pprof/trace?seconds=1", 200, ""},
		{"/debug/pprof/nosuch", 404, "unknown profile"},
		{"/debug/pprof/profile?seconds=0", 400, "seconds"},
		{"/debug/pprof/trace?seconds=x", 400, "seconds"},
	}
	for _, tc := range cases {
		resp, err := http.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || len(body) == 0 || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d, %d bytes: %.80q", tc.path, resp.StatusCode, len(body), body)
		}
	}
}

// The endpoints are served on the server's one port only when Config.Pprof is set.
func TestPprofIsBehindTheFlag(t *testing.T) {
	for _, on := range []bool{false, true} {
		router, err := scoring.NewRouter(scoring.Config{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		srv := New(router, Config{Pprof: on, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go srv.Serve(ln)
		resp, err := http.Get("http://" + ln.Addr().String() + "/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want := map[bool]int{false: 404, true: 200}[on]; resp.StatusCode != want {
			t.Errorf("pprof=%v: status %d, want %d", on, resp.StatusCode, want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = srv.Shutdown(ctx)
		cancel()
	}
}
