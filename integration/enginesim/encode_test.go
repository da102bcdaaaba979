package enginesim

import (
	"errors"
	"reflect"
	"testing"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

// TestEncoderRoundTrip encodes batches in both layouts and decodes them with clients/vllm's
// Decoder, the consumer switchyard runs against real engines.
func TestEncoderRoundTrip(t *testing.T) {
	stored := vllm.Event{
		Kind: vllm.BlockStored, BlockHashes: []uint64{1<<63 + 12345, 7}, Parent: 1<<64 - 1, HasParent: true,
		TokenIDs: []uint32{1, 2, 3, 4, 70000, 6, 7, 8}, BlockSize: 4, Medium: "GPU",
	}
	first := vllm.Event{Kind: vllm.BlockStored, BlockHashes: []uint64{3}, TokenIDs: []uint32{9, 9, 9, 9}, BlockSize: 4, Medium: "GPU", LoRAName: "adapter"}
	removed := vllm.Event{Kind: vllm.BlockRemoved, BlockHashes: []uint64{1<<63 + 12345, 3}, Medium: "GPU"}
	cleared := vllm.Event{Kind: vllm.AllBlocksCleared}
	cases := []struct {
		name   string
		enc    Encoding
		rank   int
		events []vllm.Event
	}{
		{"array all kinds", EncodingArray, -1, []vllm.Event{stored, first, removed, cleared}},
		{"map all kinds", EncodingMap, -1, []vllm.Event{stored, first, removed, cleared}},
		{"array with rank", EncodingArray, 3, []vllm.Event{removed}},
		{"map with rank", EncodingMap, 0, []vllm.Event{first}},
		{"empty batch", EncodingArray, -1, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			enc, err := NewEncoder(tc.enc, tc.rank)
			if err != nil {
				t.Fatal(err)
			}
			payload, err := enc.Encode(1789095808.83, tc.events)
			if err != nil {
				t.Fatal(err)
			}
			dec, err := vllm.NewDecoder(vllm.DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			got, err := dec.Decode(payload)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got.Time != 1789095808.83 {
				t.Errorf("ts = %v", got.Time)
			}
			if got.HasRank != (tc.rank >= 0) || (got.HasRank && got.Rank != tc.rank) {
				t.Errorf("rank = %d (has %v), want %d", got.Rank, got.HasRank, tc.rank)
			}
			if got.Drops != (vllm.Drops{}) {
				t.Errorf("decoder dropped events: %+v", got.Drops)
			}
			want := tc.events
			if want == nil {
				want = []vllm.Event{}
			}
			if !reflect.DeepEqual(got.Events, want) {
				t.Errorf("events differ\n got %+v\nwant %+v", got.Events, want)
			}
		})
	}
}

func TestEncoderRejects(t *testing.T) {
	if _, err := NewEncoder("yaml", -1); !errors.Is(err, ErrInvalid) {
		t.Errorf("NewEncoder(yaml) = %v, want ErrInvalid", err)
	}
	enc, err := NewEncoder(EncodingMap, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := enc.Encode(1, []vllm.Event{{Kind: 99}}); !errors.Is(err, ErrInvalid) {
		t.Errorf("Encode(kind 99) = %v, want ErrInvalid", err)
	}
}
