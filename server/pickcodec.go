package server

import (
	"encoding/binary"
	"fmt"
	"math/bits"

	"connectrpc.com/connect"
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// The server's protobuf codec, for gRPC and Connect alike. It encodes and decodes every
// message as the standard codecs do, except the token ids of a PickReplicaRequest: a prompt
// of 8,192 tokens is 8,192 packed varints, which the generic decoder spends about 30 µs on
// (45 µs under load: the largest single cost of a pick in the router's profile); the loop
// below takes two thirds of that (BenchmarkUnmarshalPick, docs/performance.md).
// Anything but the common shape — one token_ids field holding one packed run — is left to
// proto.Unmarshal, so the result is always what proto.Unmarshal would give.

// pickCodec is the Connect codec (connect.WithCodec); grpcPickCodec is the gRPC one
// (grpc.ForceServerCodecV2).
type pickCodec struct{}

var (
	_ connect.Codec    = pickCodec{}
	_ encoding.CodecV2 = grpcPickCodec{}
)

// Name is the content subtype the codec serves.
func (pickCodec) Name() string { return grpcproto.Name }

// grpcStd is grpc's standard proto codec, which pools the buffers of large messages.
func grpcStd() encoding.CodecV2 { return encoding.GetCodecV2(grpcproto.Name) }

// Marshal implements connect.Codec.
func (c pickCodec) Marshal(v any) ([]byte, error) { return c.MarshalAppend(nil, v) }

// MarshalAppend lets Connect encode into its pooled buffers.
func (pickCodec) MarshalAppend(dst []byte, v any) ([]byte, error) {
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("server: cannot marshal %T: not a protobuf message", v)
	}
	return proto.MarshalOptions{}.MarshalAppend(dst, m)
}

// Unmarshal implements connect.Codec.
func (pickCodec) Unmarshal(b []byte, v any) error { return unmarshalMessage(b, v) }

// IsBinary implements connect.Codec.
func (pickCodec) IsBinary() bool { return true }

// grpcPickCodec adapts pickCodec to gRPC's buffer slices.
type grpcPickCodec struct{}

func (grpcPickCodec) Name() string { return grpcproto.Name }

func (grpcPickCodec) Marshal(v any) (mem.BufferSlice, error) { return grpcStd().Marshal(v) }

func (grpcPickCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if _, ok := v.(*v1.PickReplicaRequest); !ok {
		return grpcStd().Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshalMessage(buf.ReadOnlyData(), v)
}

func unmarshalMessage(b []byte, v any) error {
	if req, ok := v.(*v1.PickReplicaRequest); ok {
		return unmarshalPick(b, req)
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("server: cannot unmarshal into %T: not a protobuf message", v)
	}
	return proto.Unmarshal(b, m)
}

// Field numbers of PickReplicaRequest's prompt and of TokenIds.ids.
const (
	fieldTokenIDs    = 3
	fieldBlockHashes = 4
	fieldText        = 5
	fieldIDs         = 1
)

// unmarshalPick decodes a PickReplicaRequest, its token ids by decodeTokens when they come in
// the common shape, everything else by proto.Unmarshal.
func unmarshalPick(b []byte, req *v1.PickReplicaRequest) error {
	start, end, packed, ok := locateTokens(b)
	if !ok {
		return proto.Unmarshal(b, req)
	}
	ids, ok := decodeTokens(packed)
	if !ok {
		return proto.Unmarshal(b, req)
	}
	// The fields around token_ids are whole encoded messages themselves; merging them is
	// decoding their concatenation.
	req.Reset()
	merge := proto.UnmarshalOptions{Merge: true}
	if err := merge.Unmarshal(b[:start], req); err != nil {
		return err
	}
	if err := merge.Unmarshal(b[end:], req); err != nil {
		return err
	}
	req.Prompt = &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}
	return nil
}

// locateTokens finds the one token_ids field of an encoded PickReplicaRequest: its byte range
// and the packed varints of its one ids field. ok is false for any other shape (no or several
// token_ids fields, another prompt field, ids not as one packed run, bad encoding).
func locateTokens(b []byte) (start, end int, packed []byte, ok bool) {
	found := false
	for off := 0; off < len(b); {
		num, typ, n := protowire.ConsumeTag(b[off:])
		if n < 0 {
			return 0, 0, nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[off+n:])
		if m < 0 {
			return 0, 0, nil, false
		}
		switch num {
		case fieldBlockHashes, fieldText:
			return 0, 0, nil, false
		case fieldTokenIDs:
			if found || typ != protowire.BytesType {
				return 0, 0, nil, false
			}
			inner, _ := protowire.ConsumeBytes(b[off+n:])
			if packed, ok = packedIDs(inner); !ok {
				return 0, 0, nil, false
			}
			found, start, end = true, off, off+n+m
		}
		off += n + m
	}
	return start, end, packed, found
}

// packedIDs returns the packed run of an encoded TokenIds made of exactly one ids field.
func packedIDs(b []byte) ([]byte, bool) {
	if len(b) == 0 {
		return nil, false // no ids field: proto.Unmarshal gives the empty message
	}
	num, typ, n := protowire.ConsumeTag(b)
	if n < 0 || num != fieldIDs || typ != protowire.BytesType {
		return nil, false
	}
	p, m := protowire.ConsumeBytes(b[n:])
	if m < 0 || n+m != len(b) {
		return nil, false
	}
	return p, true
}

// decodeTokens decodes packed uint32 varints (values are truncated to 32 bits, as protobuf
// does). ok is false on a truncated or over-long varint. Token ids below 2^21 (every real
// vocabulary) take at most 3 bytes and are decoded inline; longer varints go through
// protowire. (Decoding a whole 8-byte word per step measured slower: the varints' random
// lengths make its inner loop mispredict.)
func decodeTokens(p []byte) ([]uint32, bool) {
	ids := make([]uint32, 0, countVarints(p))
	for len(p) > 0 {
		c := p[0]
		switch {
		case c < 0x80:
			ids = append(ids, uint32(c))
			p = p[1:]
			continue
		case len(p) >= 3 && p[1] < 0x80:
			ids = append(ids, uint32(c&0x7f)|uint32(p[1])<<7)
			p = p[2:]
			continue
		case len(p) >= 3 && p[2] < 0x80:
			ids = append(ids, uint32(c&0x7f)|uint32(p[1]&0x7f)<<7|uint32(p[2])<<14)
			p = p[3:]
			continue
		}
		v, n := protowire.ConsumeVarint(p)
		if n < 0 {
			return nil, false
		}
		ids = append(ids, uint32(v))
		p = p[n:]
	}
	return ids, true
}

// countVarints counts the bytes without a continuation bit: the number of varints in p.
func countVarints(p []byte) int {
	n := 0
	for len(p) >= 8 {
		n += bits.OnesCount64(^binary.LittleEndian.Uint64(p) & 0x8080808080808080)
		p = p[8:]
	}
	for _, c := range p {
		n += int(c>>7) ^ 1
	}
	return n
}
