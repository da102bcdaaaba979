package vllm

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// goldenWant is the decoding gen_golden.py derives from the spec.
type goldenWant struct {
	Time   float64        `json:"time"`
	Rank   *int           `json:"rank"`
	Events []goldenEvent  `json:"events"`
	Drops  map[string]int `json:"drops"`
	Error  *string        `json:"error"`
}

type goldenEvent struct {
	Kind        string   `json:"kind"`
	BlockHashes []uint64 `json:"block_hashes"`
	Parent      *uint64  `json:"parent"`
	TokenIDs    []uint32 `json:"token_ids"`
	BlockSize   int      `json:"block_size"`
	LoRAName    string   `json:"lora_name"`
	Medium      string   `json:"medium"`
	GroupIdx    int      `json:"group_idx"`
	SpecKind    string   `json:"spec_kind"`
}

func toGolden(e Event) goldenEvent {
	g := goldenEvent{
		Kind: e.Kind.String(), BlockHashes: append([]uint64{}, e.BlockHashes...),
		TokenIDs: append([]uint32{}, e.TokenIDs...), BlockSize: e.BlockSize,
		LoRAName: e.LoRAName, Medium: e.Medium, GroupIdx: e.GroupIdx, SpecKind: e.SpecKind,
	}
	if e.HasParent {
		p := e.Parent
		g.Parent = &p
	}
	return g
}

var goldenErrors = map[string]error{"malformed": ErrMalformed, "too_deep": ErrTooDeep, "too_large": ErrTooLarge}

func TestDecodeGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.msgpack"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden fixtures (run testdata/gen_golden.py): %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".msgpack")
		t.Run(name, func(t *testing.T) {
			payload, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(strings.TrimSuffix(file, ".msgpack") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var want goldenWant
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			dec, err := NewDecoder(DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			got, err := dec.Decode(payload)
			if want.Error != nil {
				if !errors.Is(err, goldenErrors[*want.Error]) {
					t.Fatalf("err = %v, want %s", err, *want.Error)
				}
				if len(got.Events) != 0 || got.Drops.Total() != 0 {
					t.Fatalf("failed decode returned partial state: %+v", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			checkGolden(t, got, want)
		})
	}
}

func checkGolden(t *testing.T, got Payload, want goldenWant) {
	t.Helper()
	if got.Time != want.Time {
		t.Errorf("time = %v, want %v", got.Time, want.Time)
	}
	if (want.Rank != nil) != got.HasRank || (want.Rank != nil && *want.Rank != got.Rank) {
		t.Errorf("rank = %d (present %v), want %v", got.Rank, got.HasRank, want.Rank)
	}
	gotEvents := make([]goldenEvent, len(got.Events))
	for i, e := range got.Events {
		gotEvents[i] = toGolden(e)
	}
	if !reflect.DeepEqual(gotEvents, want.Events) {
		t.Errorf("events:\n got %+v\nwant %+v", gotEvents, want.Events)
	}
	for _, r := range DropReasons() {
		if got.Drops.Count(r) != want.Drops[r.String()] {
			t.Errorf("drops[%s] = %d, want %d", r, got.Drops.Count(r), want.Drops[r.String()])
		}
	}
	for _, e := range got.Events {
		if e.Tier() == "" {
			t.Errorf("accepted event with unknown medium %q", e.Medium)
		}
	}
}
