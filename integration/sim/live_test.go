package sim

import (
	"errors"
	"slices"
	"testing"
)

// runLive steps l until every request finished and returns the step results' tokens and KV ops.
func runLive(t *testing.T, l *Live) ([]TokenOut, []KVOp) {
	t.Helper()
	var toks []TokenOut
	var kv []KVOp
	var res StepResult
	for steps := 0; ; steps++ {
		if steps > 10_000 {
			t.Fatal("engine never went idle")
		}
		d, busy := l.Step()
		if !busy {
			return toks, kv
		}
		if d <= 0 {
			t.Fatalf("step of %v", d)
		}
		l.Finish(&res)
		toks = append(toks, res.Tokens...)
		for _, op := range res.KV {
			op.Hashes, op.TokenIDs = slices.Clone(op.Hashes), slices.Clone(op.TokenIDs)
			kv = append(kv, op)
		}
	}
}

func TestLiveServesAndReusesPrefix(t *testing.T) {
	l, err := NewLive(EngineConfig{BlockSize: 4, NumBlocks: 32, MaxBatchedTokens: 64, MaxSeqs: 4}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	prompt := []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}
	first := append(slices.Clone(prompt), 100, 101, 102)
	if err := l.Add("a", first, len(prompt)); err != nil {
		t.Fatal(err)
	}
	toks, kv := runLive(t, l)
	var got []uint32
	for _, tk := range toks {
		if tk.ID != "a" {
			t.Fatalf("token for %q", tk.ID)
		}
		got = append(got, tk.Token)
	}
	if !slices.Equal(got, []uint32{100, 101, 102}) || !toks[len(toks)-1].Done || toks[0].CachedPrompt != 0 {
		t.Fatalf("tokens %v (last %+v)", got, toks[len(toks)-1])
	}
	stored := 0
	for _, op := range kv {
		if !op.Removed {
			stored += len(op.Hashes)
			if len(op.TokenIDs) != 4*len(op.Hashes) {
				t.Errorf("stored op with %d hashes and %d tokens", len(op.Hashes), len(op.TokenIDs))
			}
		}
	}
	// 9 prompt tokens + 2 computed output tokens = 11: two full blocks.
	if stored != 2 || l.Stats().CachedBlocks != 2 || len(l.CachedHashes()) != 2 {
		t.Fatalf("stored %d blocks, cache %d (%v)", stored, l.Stats().CachedBlocks, l.CachedHashes())
	}
	// The same prompt again hits the two cached blocks (8 tokens).
	if err := l.Add("b", append(slices.Clone(prompt), 7), len(prompt)); err != nil {
		t.Fatal(err)
	}
	toks, _ = runLive(t, l)
	if len(toks) != 1 || toks[0].CachedPrompt != 8 {
		t.Fatalf("second request: %+v, want 8 cached prompt tokens", toks)
	}
	st := l.Stats()
	if st.PrefixQueries != 18 || st.PrefixHits != 8 || st.Running != 0 || st.Waiting != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestLiveRejectsAndAborts(t *testing.T) {
	l, err := NewLive(EngineConfig{BlockSize: 4, NumBlocks: 8, MaxBatchedTokens: 16, MaxSeqs: 2}, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	long := make([]uint32, 40)
	for _, tc := range []struct {
		name   string
		id     string
		tokens []uint32
		prompt int
	}{
		{"no output", "x", []uint32{1, 2}, 2},
		{"no prompt", "x", []uint32{1, 2}, 0},
		{"too long", "x", long, 20},
	} {
		if err := l.Add(tc.id, tc.tokens, tc.prompt); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Add = %v, want ErrInvalid", tc.name, err)
		}
	}
	if err := l.Add("a", []uint32{1, 2, 3, 4, 5, 6}, 5); err != nil {
		t.Fatal(err)
	}
	if err := l.Add("a", []uint32{1, 2}, 1); !errors.Is(err, ErrInvalid) {
		t.Errorf("duplicate id: %v", err)
	}
	if !l.Abort("a") || l.Abort("a") {
		t.Error("Abort of a waiting request: want true once")
	}
	if _, busy := l.Step(); busy {
		t.Error("engine busy after its only request was aborted")
	}
	if err := l.Add("b", []uint32{1, 2, 3, 4, 5, 6, 7, 8, 9}, 5); err != nil {
		t.Fatal(err)
	}
	var res StepResult
	if _, busy := l.Step(); !busy {
		t.Fatal("idle with a request")
	}
	l.Finish(&res)
	if !l.Abort("b") {
		t.Fatal("Abort of a running request")
	}
	if st := l.Stats(); st.UsedBlocks != 0 || st.Running != 0 {
		t.Errorf("after abort: %+v", st)
	}
}
