package server_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"

	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// A router served on a loopback port, used over JSON the way curl would.
func ExampleServer() {
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	defer router.Close()
	srv := server.New(router, server.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())

	call := func(method, body string) string {
		resp, err := http.Post("http://"+ln.Addr().String()+"/switchyard.v1."+method, "application/json", strings.NewReader(body))
		if err != nil {
			panic(err)
		}
		defer resp.Body.Close()
		out, _ := io.ReadAll(resp.Body)
		return resp.Status + " " + string(out)
	}
	call("ReplicaService/RegisterReplica", `{"replica": {"id": "vllm-0", "model": "llama"}}`)
	fmt.Println(call("RouterService/PickReplica", `{"model": "llama", "text": "hi"}`))
	// Output: 400 Bad Request {"code":"invalid_argument","message":"request_id: is required"}
}
