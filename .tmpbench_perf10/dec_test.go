package tmpbench

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

func payload() []byte {
	ids := make([]uint32, 8192)
	for i := range ids {
		ids[i] = uint32((i*2654435761)>>7) % 131072
	}
	b, _ := proto.Marshal(&v1.PickReplicaRequest{RequestId: "bench-abc-123", Model: "bench", Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}})
	return b
}

func BenchmarkProto(b *testing.B) {
	p := payload()
	for b.Loop() {
		var m v1.PickReplicaRequest
		if err := proto.Unmarshal(p, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func decode(dst []uint32, p []byte) []uint32 {
	for len(p) > 0 {
		c := p[0]
		if c < 0x80 {
			dst = append(dst, uint32(c))
			p = p[1:]
			continue
		}
		if len(p) >= 3 && p[1] < 0x80 {
			dst = append(dst, uint32(c&0x7f)|uint32(p[1])<<7)
			p = p[2:]
			continue
		}
		if len(p) >= 3 && p[2] < 0x80 {
			dst = append(dst, uint32(c&0x7f)|uint32(p[1]&0x7f)<<7|uint32(p[2])<<14)
			p = p[3:]
			continue
		}
		v, n := protowire.ConsumeVarint(p)
		if n < 0 {
			return nil
		}
		dst = append(dst, uint32(v))
		p = p[n:]
	}
	return dst
}

func BenchmarkCustom(b *testing.B) {
	p := payload()
	buf := make([]uint32, 0, 8192)
	// locate field 3 then field 1 by hand (test only)
	for b.Loop() {
		q := p
		for len(q) > 0 {
			num, typ, n := protowire.ConsumeTag(q)
			q = q[n:]
			if num == 3 && typ == protowire.BytesType {
				inner, n := protowire.ConsumeBytes(q)
				q = q[n:]
				_, _, n2 := protowire.ConsumeTag(inner)
				packed, _ := protowire.ConsumeBytes(inner[n2:])
				buf = decode(buf[:0], packed)
				continue
			}
			n = protowire.ConsumeFieldValue(num, typ, q)
			q = q[n:]
		}
	}
	if len(buf) != 8192 {
		b.Fatal(len(buf))
	}
}

func BenchmarkCustomAlloc(b *testing.B) {
	p := payload()
	var buf []uint32
	for b.Loop() {
		q := p
		for len(q) > 0 {
			num, typ, n := protowire.ConsumeTag(q)
			q = q[n:]
			if num == 3 && typ == protowire.BytesType {
				inner, n := protowire.ConsumeBytes(q)
				q = q[n:]
				_, _, n2 := protowire.ConsumeTag(inner)
				packed, _ := protowire.ConsumeBytes(inner[n2:])
				buf = decode(make([]uint32, 0, 8192), packed)
				continue
			}
			n = protowire.ConsumeFieldValue(num, typ, q)
			q = q[n:]
		}
	}
	if len(buf) != 8192 {
		b.Fatal(len(buf))
	}
}
