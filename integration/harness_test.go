package integration

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// startServer runs the real server on a random loopback port and returns
// its address; it is shut down when the test ends.
func startServer(t *testing.T) string {
	t.Helper()
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		t.Fatalf("NewRouter: %v", err)
	}
	srv := server.New(router, server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
		router.Close()
	})
	return ln.Addr().String()
}

// grpcConn dials addr with grpc-go over plaintext HTTP/2.
func grpcConn(t *testing.T, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("grpc.NewClient: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// h2cClient speaks HTTP/2 without TLS (prior knowledge), as Connect and
// gRPC-Web clients may. Its connections are closed before the server shuts
// down, which would otherwise wait a second for them after its GOAWAY.
func h2cClient(t *testing.T) *http.Client {
	p := new(http.Protocols)
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: p}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}
