package switchyard_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// realServer runs the switchyard server in-process on a loopback port, for
// examples and tests; stop shuts it down. It panics on set-up failures, which
// examples cannot report otherwise.
func realServer() (addr string, stop func()) {
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	srv := server.New(router, server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	return ln.Addr().String(), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-served
		router.Close()
	}
}
