package workload

import (
	"slices"
	"testing"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		text   string
		pieces []string
	}{
		{"hello world", []string{"hell", "o", " wor", "ld"}},
		{"x = 12345;\n", []string{"x", " ", "=", " ", "123", "45", ";", "\n"}},
		{"  a", []string{" ", " a"}},
		{"", nil},
	} {
		var want []uint32
		for _, p := range tc.pieces {
			want = append(want, pieceID(p))
		}
		if got := Tokenize(nil, tc.text); !slices.Equal(got, want) {
			t.Errorf("Tokenize(%q) = %v, want %v", tc.text, got, want)
		}
	}
}

func TestTokenizeKeepsPrefixes(t *testing.T) {
	a := "system: you are an agent.\nuser: fix the bug\n"
	b := a + "assistant: looking at main.go\n"
	ta, tb := Tokenize(nil, a), Tokenize(nil, b)
	if !slices.Equal(tb[:len(ta)], ta) {
		t.Error("appending text changed the tokens of the prefix")
	}
}

func TestAssignIDsContinuesPartialBlocks(t *testing.T) {
	seq := func(n int, salt uint32) []uint32 {
		s := make([]uint32, n)
		for i := range s {
			s[i] = uint32(i) + salt*1000003
		}
		return s
	}
	a := newIDAssigner()
	base := seq(1100, 0)
	got := [][]uint64{a.assign(base[:600]), a.assign(base), a.assign(append(seq(700, 0)[:700:700], seq(400, 7)...))}
	want := [][]uint64{{0, 1}, {0, 1, 2}, {0, 3, 4}}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("assign %d = %v, want %v", i, got[i], want[i])
		}
	}
}
