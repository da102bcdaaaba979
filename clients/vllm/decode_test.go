package vllm

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// pack encodes v with the msgpack library, for hand-built payloads.
func pack(t testing.TB, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func storedRow(group int, spec string, hashes ...uint64) []any {
	tokens := make([]int, len(hashes))
	return []any{"BlockStored", hashes, nil, tokens, 1, nil, "GPU", nil, nil, group, spec}
}

func TestDecodeLimits(t *testing.T) {
	small := DefaultLimits()
	small.MaxEvents, small.MaxBlocksPerEvent, small.MaxTokensPerEvent, small.MaxPayloadBytes = 2, 2, 2, 200
	tests := []struct {
		name    string
		batch   []any
		wantErr error
		drop    DropReason
	}{
		{"events over limit", []any{1.0, []any{[]any{"AllBlocksCleared"}, []any{"AllBlocksCleared"}, []any{"AllBlocksCleared"}}}, ErrTooLarge, noDrop},
		{"blocks over limit", []any{1.0, []any{[]any{"BlockRemoved", []uint64{1, 2, 3}}}}, nil, DropTooLarge},
		{"tokens over limit", []any{1.0, []any{[]any{"BlockStored", []uint64{1}, nil, []int{1, 2, 3}, 3}}}, nil, DropTooLarge},
		{"payload over limit", []any{1.0, []any{[]any{"BlockRemoved", make([]uint64, 2), string(make([]byte, 300))}}}, ErrTooLarge, noDrop},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dec, err := NewDecoder(small)
			if err != nil {
				t.Fatal(err)
			}
			p, err := dec.Decode(pack(t, tc.batch))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if tc.drop != noDrop && (p.Drops.Count(tc.drop) != 1 || len(p.Events) != 0) {
				t.Fatalf("want one %s drop, got %+v", tc.drop, p)
			}
		})
	}
}

func TestDecoderRemembersGroups(t *testing.T) {
	dec, err := NewDecoder(DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	removal := pack(t, []any{1.0, []any{[]any{"BlockRemoved", []uint64{9}, "GPU", 1}}})
	steps := []struct {
		name     string
		payload  []byte
		reset    bool
		accepted int
	}{
		{"removal from an unannounced group applies", removal, false, 1},
		{"store in a sliding-window group is skipped", pack(t, []any{1.0, []any{storedRow(1, "sliding_window", 9)}}), false, 0},
		{"later removal from that group is skipped", removal, false, 0},
		{"after Reset the group is unknown again", removal, true, 1},
	}
	for _, s := range steps {
		if s.reset {
			dec.Reset()
		}
		p, err := dec.Decode(s.payload)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if len(p.Events) != s.accepted || p.Drops.Total() != 1-s.accepted {
			t.Fatalf("%s: accepted %d dropped %v", s.name, len(p.Events), p.Drops)
		}
	}
}

// TestDecodeHostileMemory checks that length headers claiming gigabytes cost
// no more than the payload: a decoder trusting them would allocate ~32 GiB.
func TestDecodeHostileMemory(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "err_huge_*.msgpack"))
	if len(files) < 4 {
		t.Fatalf("want the err_huge_* fixtures, found %d", len(files))
	}
	dec, err := NewDecoder(DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		payload, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		const runs = 50
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range runs {
			if _, err := dec.Decode(payload); err == nil {
				t.Fatalf("%s: decoded without error", f)
			}
		}
		runtime.ReadMemStats(&after)
		if per := (after.TotalAlloc - before.TotalAlloc) / runs; per > 64<<10 {
			t.Errorf("%s: %d bytes allocated per decode of a %d-byte payload", f, per, len(payload))
		}
	}
}

func TestLimitsValidate(t *testing.T) {
	l := DefaultLimits()
	if err := l.Validate(); err != nil {
		t.Fatalf("default limits invalid: %v", err)
	}
	l.MaxDepth = 0
	if _, err := NewDecoder(l); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("MaxDepth 0 accepted: %v", err)
	}
}

func TestTierOf(t *testing.T) {
	tests := []struct {
		medium string
		tier   Tier
		ok     bool
	}{
		{"", TierDevice, true}, {"GPU", TierDevice, true}, {"gpu", TierDevice, true},
		{"CPU", TierHost, true}, {"DISK", TierDisk, true}, {"tape", "", false},
	}
	for _, tc := range tests {
		tier, ok := TierOf(tc.medium)
		if tier != tc.tier || ok != tc.ok {
			t.Errorf("TierOf(%q) = %q, %v; want %q, %v", tc.medium, tier, ok, tc.tier, tc.ok)
		}
	}
}
