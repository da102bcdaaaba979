package server

import (
	"testing"
	"time"

	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// pickWire builds encodings of PickReplicaRequest by hand, so the tests can produce shapes a
// Go client never sends.
type pickWire []byte

func (w pickWire) str(num protowire.Number, s string) pickWire {
	return protowire.AppendString(protowire.AppendTag(w, num, protowire.BytesType), s)
}

func (w pickWire) bytes(num protowire.Number, b []byte) pickWire {
	return protowire.AppendBytes(protowire.AppendTag(w, num, protowire.BytesType), b)
}

func (w pickWire) varint(num protowire.Number, v uint64) pickWire {
	return protowire.AppendVarint(protowire.AppendTag(w, num, protowire.VarintType), v)
}

// packed encodes a TokenIds holding vs as one packed run.
func packed(vs ...uint64) []byte {
	var run []byte
	for _, v := range vs {
		run = protowire.AppendVarint(run, v)
	}
	return pickWire(nil).bytes(fieldIDs, run)
}

func head() pickWire { return pickWire(nil).str(1, "req-1").str(2, "model-a") }

func TestUnmarshalPickMatchesProto(t *testing.T) {
	big := make([]uint64, 5000)
	for i := range big {
		big[i] = uint64(i*7919) % (1 << 21) // 1- to 3-byte varints
	}
	cases := []struct {
		name string
		wire []byte
		fast bool // decoded by the dedicated loop, not handed to proto.Unmarshal
	}{
		{"common shape", head().bytes(3, packed(1, 127, 128, 16383, 16384, 1<<21-1)), true},
		{"many tokens", head().bytes(3, packed(big...)), true},
		{"fields after the prompt", pickWire(nil).bytes(3, packed(5, 6)).str(1, "r").varint(13, 1).str(11, "p"), true},
		{"values beyond 32 bits are truncated", head().bytes(3, packed(1<<32+5, 1<<63, 1<<35-1)), true},
		{"unknown fields kept", head().varint(99, 7).bytes(3, packed(9)).str(98, "x"), true},
		{"empty packed run", head().bytes(3, packed()), true},
		{"token_ids twice merges", head().bytes(3, packed(1, 2)).bytes(3, packed(3)), false},
		{"text after token_ids wins", head().bytes(3, packed(1, 2)).str(5, "hello"), false},
		{"block hashes before token_ids", head().bytes(4, pickWire(nil).bytes(1, []byte{1, 2})).bytes(3, packed(4)), false},
		{"empty token_ids message", head().bytes(3, nil), false},
		{"unpacked ids", head().bytes(3, pickWire(nil).varint(1, 4).varint(1, 5)), false},
		{"two packed runs", head().bytes(3, append(packed(1), packed(2)...)), false},
		{"unknown field inside TokenIds", head().bytes(3, append(packed(1), pickWire(nil).varint(2, 3)...)), false},
		{"truncated varint in the run", head().bytes(3, pickWire(nil).bytes(fieldIDs, []byte{0x81, 0x82})), false},
		{"over-long varint", head().bytes(3, pickWire(nil).bytes(fieldIDs, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})), false},
		{"token_ids with the wrong wire type", head().varint(3, 1), false},
		{"truncated message", head().bytes(3, packed(1, 2, 3))[:12], false},
		{"no prompt", head(), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, run, ok := locateTokens(tc.wire)
			if ok {
				_, ok = decodeTokens(run)
			}
			if ok != tc.fast {
				t.Errorf("fast path taken = %v, want %v", ok, tc.fast)
			}
			checkSameAsProto(t, tc.wire)
		})
	}
}

// checkSameAsProto fails unless unmarshalPick and the gRPC and Connect codecs decode b as
// proto.Unmarshal does (same message, or an error from both).
func checkSameAsProto(t *testing.T, b []byte) {
	t.Helper()
	var want v1.PickReplicaRequest
	wantErr := proto.Unmarshal(b, &want)
	decoders := map[string]func(*v1.PickReplicaRequest) error{
		"unmarshalPick": func(m *v1.PickReplicaRequest) error { return unmarshalPick(b, m) },
		"connect":       func(m *v1.PickReplicaRequest) error { return pickCodec{}.Unmarshal(b, m) },
		"grpc": func(m *v1.PickReplicaRequest) error {
			half := len(b) / 2 // two buffers, as a message split over frames arrives
			return grpcPickCodec{}.Unmarshal(mem.BufferSlice{mem.SliceBuffer(b[:half]), mem.SliceBuffer(b[half:])}, m)
		},
	}
	for name, dec := range decoders {
		got := &v1.PickReplicaRequest{RequestId: "stale", Prompt: &v1.PickReplicaRequest_Text{Text: "stale"}}
		err := dec(got)
		switch {
		case (err != nil) != (wantErr != nil):
			t.Fatalf("%s: error %v, proto.Unmarshal: %v", name, err, wantErr)
		case err == nil && !proto.Equal(got, &want):
			t.Fatalf("%s: decoded %v, proto.Unmarshal %v", name, got, &want)
		}
	}
}

func TestPickCodecOtherMessages(t *testing.T) {
	in := &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{{RequestId: "a", ReplicaId: "r"}}}
	roundTrips := map[string]func(out *v1.ReportLifecycleRequest) error{
		"connect": func(out *v1.ReportLifecycleRequest) error {
			b, err := pickCodec{}.Marshal(in)
			if err != nil {
				return err
			}
			return pickCodec{}.Unmarshal(b, out)
		},
		"grpc": func(out *v1.ReportLifecycleRequest) error {
			bs, err := grpcPickCodec{}.Marshal(in)
			if err != nil {
				return err
			}
			return grpcPickCodec{}.Unmarshal(bs, out)
		},
	}
	for name, rt := range roundTrips {
		var out v1.ReportLifecycleRequest
		if err := rt(&out); err != nil || !proto.Equal(in, &out) {
			t.Fatalf("%s round trip: %v %v", name, &out, err)
		}
	}
	b, _ := pickCodec{}.Marshal(in)
	if _, err := (pickCodec{}).Marshal(42); err == nil {
		t.Fatal("marshalled a non-message")
	}
	if err := (pickCodec{}).Unmarshal(b, new(int)); err == nil {
		t.Fatal("unmarshalled into a non-message")
	}
}

func FuzzUnmarshalPick(f *testing.F) {
	f.Add([]byte(head().bytes(3, packed(1, 300, 70000))))
	f.Add([]byte(head().bytes(3, packed(1)).bytes(3, packed(2))))
	f.Add([]byte(head().bytes(3, packed(1)).str(5, "t")))
	f.Add([]byte(head().bytes(3, pickWire(nil).bytes(fieldIDs, []byte{0x80}))))
	f.Fuzz(func(t *testing.T, b []byte) { checkSameAsProto(t, b) })
}

// BenchmarkUnmarshalPick decodes a PickReplicaRequest with an 8,192-token prompt; the floor,
// measured in the same run, is proto.Unmarshal of the same bytes.
func BenchmarkUnmarshalPick(b *testing.B) {
	ids := make([]uint32, 8192)
	for i := range ids {
		ids[i] = uint32(i*2654435761>>7) % (1 << 17)
	}
	wire, err := proto.Marshal(&v1.PickReplicaRequest{RequestId: "bench-1", Model: "m",
		Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}})
	if err != nil {
		b.Fatal(err)
	}
	const floorN = 2000
	t0 := time.Now()
	for range floorN {
		var m v1.PickReplicaRequest
		if err := proto.Unmarshal(wire, &m); err != nil {
			b.Fatal(err)
		}
	}
	floor := time.Since(t0) / floorN
	b.SetBytes(int64(len(wire)))
	b.ReportAllocs()
	for b.Loop() {
		var m v1.PickReplicaRequest
		if err := unmarshalPick(wire, &m); err != nil {
			b.Fatal(err)
		}
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(floor.Nanoseconds()), "proto-ns")
	b.ReportMetric(float64(per)/float64(floor), "x-proto")
}
