package workload

import (
	"slices"
	"testing"
)

func TestExpandSharesPrefixes(t *testing.T) {
	w := &Workload{Requests: []Request{
		{InputLength: 600, OutputLength: 3, HashIDs: []uint64{5, 6}},
		{InputLength: 700, OutputLength: 3, HashIDs: []uint64{5, 9}},
	}}
	if err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	a, b := w.PromptTokens(nil, 0), w.PromptTokens(nil, 1)
	if len(a) != 600 || len(b) != 700 {
		t.Fatalf("lengths %d, %d", len(a), len(b))
	}
	if !slices.Equal(a[:512], b[:512]) {
		t.Error("equal first ids gave different tokens")
	}
	if slices.Equal(a[512:600], b[512:600]) {
		t.Error("different second ids gave equal tokens")
	}
	if !slices.Equal(ExpandBlock(nil, 6, 88), a[512:]) {
		t.Error("a partial block is not the start of its id's expansion")
	}
	if slices.Equal(w.OutputTokens(nil, 0), w.OutputTokens(nil, 1)) {
		t.Error("unrelated requests generated equal tokens")
	}
	for _, tok := range a {
		if tok >= Vocab {
			t.Fatalf("token %d outside the vocabulary", tok)
		}
	}
}

func TestOutputContinuesNextPrompt(t *testing.T) {
	w := &Workload{Requests: []Request{
		{InputLength: 100, OutputLength: 60, HashIDs: []uint64{1}, SessionID: "s"},
		{InputLength: 140, OutputLength: 2, HashIDs: []uint64{1}, SessionID: "s"},
		{InputLength: 10, OutputLength: 2, HashIDs: []uint64{3}, SessionID: "s"},
	}}
	if err := w.Finalize(); err != nil {
		t.Fatal(err)
	}
	next := w.PromptTokens(nil, 1)
	out := w.OutputTokens(nil, 0)
	if len(out) != 60 || !slices.Equal(out[:40], next[100:140]) {
		t.Errorf("output does not continue the next prompt")
	}
	if slices.Equal(out[40:], ExpandBlock(nil, 1, 160)[140:]) {
		t.Error("output beyond the next prompt should be unique tokens")
	}
	if w.Extends(1) {
		t.Error("turn 2 is not extended by turn 3")
	}
	all := w.Tokens(nil, 0)
	if !slices.Equal(all[:100], w.PromptTokens(nil, 0)) || !slices.Equal(all[100:], out) {
		t.Error("Tokens is not prompt then output")
	}
}
