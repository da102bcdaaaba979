package server_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"google.golang.org/protobuf/encoding/protojson"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
	"github.com/switchyard-llm/switchyard/server"
)

// Every decision a server records is appended to the audit file as one
// line of the API's JSON; the file rotates by size.
func ExampleOpenAuditFile() {
	dir, err := os.MkdirTemp("", "audit")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "decisions.jsonl")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))

	af, err := server.OpenAuditFile(server.AuditFileConfig{Path: path, MaxBytes: 64 << 20, Backups: 5}, log)
	if err != nil {
		panic(err)
	}
	router, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if _, err := router.Register(ctx, scoring.Replica{ID: "vllm-0", Model: "llama"}); err != nil {
		panic(err)
	}
	srv := server.New(router, server.Config{AuditFile: af, Logger: log})

	// A decision as PickReplica records it.
	d, err := router.Pick(ctx, scoring.PickRequest{RequestID: "req-1", Model: "llama", Prompt: scoring.Prompt{Tokens: make([]uint32, 32)}})
	if err != nil {
		panic(err)
	}
	srv.Audit().Record(d)

	_ = srv.Shutdown(ctx)
	if err := af.Close(); err != nil { // after Shutdown: writes what is buffered
		panic(err)
	}
	f, err := os.Open(path)
	if err != nil {
		panic(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var got v1.Decision
		if err := protojson.Unmarshal(sc.Bytes(), &got); err != nil {
			panic(err)
		}
		fmt.Println(got.GetRequestId(), "->", got.GetReplicaId(), "of", len(got.GetCandidates()), "candidate")
	}
	fmt.Printf("%+v\n", af.Stats())
	// Output:
	// req-1 -> vllm-0 of 1 candidate
	// {Written:1 Dropped:0 Rotations:0 Errors:0}
}
