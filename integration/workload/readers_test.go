package workload

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

func TestReadAgentDir(t *testing.T) {
	w, err := ReadAgentDir("testdata/agents")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Requests) != 3 || w.Tokenization != TokenizerName {
		t.Fatalf("got %d requests, tokenization %q", len(w.Requests), w.Tokenization)
	}
	want := []struct {
		session string
		at      time.Duration
	}{{"s1", 0}, {"s2.jsonl", time.Second}, {"s1", 2 * time.Second}}
	for i, x := range want {
		if r := w.Requests[i]; r.SessionID != x.session || r.Timestamp != x.at {
			t.Errorf("request %d: session %q at %v, want %q at %v", i, r.SessionID, r.Timestamp, x.session, x.at)
		}
	}
	if w.Next(0) != 2 || !w.Extends(0) {
		t.Errorf("s1's second turn should follow and extend its first: next %d extends %v", w.Next(0), w.Extends(0))
	}
	first := Tokenize(nil, "You are a helpful agent.\nTask: list files.\n")
	if w.Requests[0].InputLength != len(first) || w.Requests[0].OutputLength != len(Tokenize(nil, "ls -la")) {
		t.Errorf("lengths %d/%d", w.Requests[0].InputLength, w.Requests[0].OutputLength)
	}
	if w.Requests[0].HashIDs[0] != w.Requests[2].HashIDs[0] || w.Requests[0].HashIDs[0] == w.Requests[1].HashIDs[0] {
		t.Error("a continued partial block should keep its id, a diverging one should not")
	}
}

func TestReadAgentTurnsErrors(t *testing.T) {
	for _, row := range []string{`{"input": "a", "output": "b"}`, `{"timestamp": 1, "output": "b"}`, `{"timestamp": 1, "input": "a"}`, `nope`} {
		if _, err := ReadAgentTurns(strings.NewReader(row), "f", "s"); !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%s: err = %v", row, err)
		}
	}
}

func TestReadAzureCSV(t *testing.T) {
	f, err := os.Open("testdata/azure_small.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ReadAzureCSV(f, "azure")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Requests) != 3 || w.Dropped["zero_tokens"] != 1 {
		t.Fatalf("%d requests, dropped %v", len(w.Requests), w.Dropped)
	}
	r := w.Requests[1]
	if r.InputLength != 1396 || r.OutputLength != 109 || r.Timestamp != 4314579*time.Microsecond || len(r.HashIDs) != 3 {
		t.Errorf("row 2 = %+v", r)
	}
	if w.Requests[0].HashIDs[0] == r.HashIDs[0] {
		t.Error("Azure prompts must not share ids")
	}
	for _, bad := range []string{"A,B,C\n", "TIMESTAMP,ContextTokens,GeneratedTokens\nx,1,1\n", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6,-1,1\n"} {
		if _, err := ReadAzureCSV(strings.NewReader(bad), "bad"); !errors.Is(err, ErrFormat) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
