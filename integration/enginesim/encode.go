package enginesim

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

// Encoding is the layout of events inside a vLLM EventBatch payload.
type Encoding string

// The two event layouts vLLM versions in the field emit.
const (
	// EncodingArray is the positional, tagged layout of vLLM up to about v0.23:
	// ["BlockStored", block_hashes, parent, token_ids, block_size, lora_id, medium, lora_name].
	EncodingArray Encoding = "array"
	// EncodingMap is the layout of vLLM v0.26 and later: one map per event, tagged under "type".
	EncodingMap Encoding = "map"
)

// ParseEncoding checks an encoding name ("array" or "map").
func ParseEncoding(s string) (Encoding, error) {
	switch e := Encoding(s); e {
	case EncodingArray, EncodingMap:
		return e, nil
	}
	return "", fmt.Errorf("%w: event encoding %q (want array or map)", ErrInvalid, s)
}

// Encoder turns events into vLLM EventBatch payloads: the msgpack array
// [ts, events, data_parallel_rank?], integers in their most compact width as msgspec writes
// them, trailing default fields omitted. An Encoder is not safe for concurrent use.
type Encoder struct {
	enc      Encoding
	rank     int
	withRank bool
	buf      bytes.Buffer
	mp       *msgpack.Encoder
}

// NewEncoder returns an Encoder for layout enc. rank < 0 omits data_parallel_rank (a
// deployment without data parallelism); otherwise every batch carries it.
func NewEncoder(enc Encoding, rank int) (*Encoder, error) {
	if _, err := ParseEncoding(string(enc)); err != nil {
		return nil, err
	}
	e := &Encoder{enc: enc, rank: rank, withRank: rank >= 0}
	e.mp = msgpack.NewEncoder(&e.buf)
	return e, nil
}

// Encode returns the payload of one batch stamped ts (seconds since the Unix epoch). The
// result is a new slice the caller owns. Events of an unknown kind are an error.
func (e *Encoder) Encode(ts float64, events []vllm.Event) ([]byte, error) {
	e.buf.Reset()
	n := 2
	if e.withRank {
		n = 3
	}
	w := &errWriter{mp: e.mp}
	w.do(e.mp.EncodeArrayLen(n))
	w.do(e.mp.EncodeFloat64(ts))
	w.do(e.mp.EncodeArrayLen(len(events)))
	for i := range events {
		if err := e.event(w, &events[i]); err != nil {
			return nil, fmt.Errorf("event %d: %w", i, err)
		}
	}
	if e.withRank {
		w.do(e.mp.EncodeInt(int64(e.rank)))
	}
	if w.err != nil {
		return nil, fmt.Errorf("encode batch: %w", w.err)
	}
	return bytes.Clone(e.buf.Bytes()), nil
}

// field is one named event field and how to write it (nil write = msgpack nil).
type field struct {
	name  string
	write func()
}

func (e *Encoder) event(w *errWriter, ev *vllm.Event) error {
	var fields []field
	switch ev.Kind {
	case vllm.BlockStored:
		fields = []field{
			{"block_hashes", func() { w.hashes(ev.BlockHashes) }},
			{"parent_block_hash", w.optHash(ev.Parent, ev.HasParent)},
			{"token_ids", func() { w.tokens(ev.TokenIDs) }},
			{"block_size", func() { w.do(e.mp.EncodeInt(int64(ev.BlockSize))) }},
			{"lora_id", nil},
			{"medium", w.optString(ev.Medium)},
			{"lora_name", w.optString(ev.LoRAName)},
		}
	case vllm.BlockRemoved:
		fields = []field{
			{"block_hashes", func() { w.hashes(ev.BlockHashes) }},
			{"medium", w.optString(ev.Medium)},
		}
	case vllm.AllBlocksCleared:
	default:
		return fmt.Errorf("%w: event kind %d", ErrInvalid, ev.Kind)
	}
	if e.enc == EncodingMap {
		w.do(e.mp.EncodeMapLen(1 + len(fields)))
		w.do(e.mp.EncodeString("type"))
		w.do(e.mp.EncodeString(ev.Kind.String()))
		for _, f := range fields {
			w.do(e.mp.EncodeString(f.name))
			w.value(f.write)
		}
		return nil
	}
	w.do(e.mp.EncodeArrayLen(1 + len(fields)))
	w.do(e.mp.EncodeString(ev.Kind.String()))
	for _, f := range fields {
		w.value(f.write)
	}
	return nil
}

// errWriter keeps the first msgpack error so encoding code reads straight.
type errWriter struct {
	mp  *msgpack.Encoder
	err error
}

func (w *errWriter) do(err error) {
	if w.err == nil {
		w.err = err
	}
}

func (w *errWriter) value(write func()) {
	if write == nil {
		w.do(w.mp.EncodeNil())
		return
	}
	write()
}

func (w *errWriter) hashes(hs []uint64) {
	w.do(w.mp.EncodeArrayLen(len(hs)))
	for _, h := range hs {
		w.do(w.mp.EncodeUint(h))
	}
}

func (w *errWriter) tokens(ts []uint32) {
	w.do(w.mp.EncodeArrayLen(len(ts)))
	for _, t := range ts {
		w.do(w.mp.EncodeUint(uint64(t)))
	}
}

func (w *errWriter) optHash(h uint64, ok bool) func() {
	if !ok {
		return nil
	}
	return func() { w.do(w.mp.EncodeUint(h)) }
}

func (w *errWriter) optString(s string) func() {
	if s == "" {
		return nil
	}
	return func() { w.do(w.mp.EncodeString(s)) }
}
