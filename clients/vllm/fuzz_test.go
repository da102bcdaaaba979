package vllm

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// goldenPayloads returns the golden payloads, to seed fuzzing; testdata/fuzz
// holds the committed corpus on top of them.
func goldenPayloads(f *testing.F) [][]byte {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.msgpack"))
	var out [][]byte
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func FuzzDecode(f *testing.F) {
	for _, b := range goldenPayloads(f) {
		f.Add(b)
	}
	lim := DefaultLimits()
	lim.MaxPayloadBytes = 1 << 20
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := NewDecoder(lim)
		if err != nil {
			t.Fatal(err)
		}
		p, err := dec.Decode(data)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrTooDeep) {
				t.Fatalf("unclassified error: %v", err)
			}
			if len(p.Events) != 0 || p.Drops.Total() != 0 {
				t.Fatalf("error with partial result: %+v", p)
			}
			return
		}
		for i, e := range p.Events {
			if msg := invalidEvent(e, lim); msg != "" {
				t.Fatalf("event %d accepted but %s: %+v", i, msg, e)
			}
		}
		again, _ := NewDecoder(lim)
		q, err := again.Decode(data)
		if err != nil || !reflect.DeepEqual(p, q) {
			t.Fatalf("decoding is not deterministic: %v", err)
		}
	})
}

// invalidEvent returns what is wrong with an event the decoder accepted.
func invalidEvent(e Event, lim Limits) string {
	if _, ok := TierOf(e.Medium); !ok {
		return "medium unknown"
	}
	switch e.Kind {
	case AllBlocksCleared:
		return ""
	case BlockRemoved:
		if len(e.BlockHashes) == 0 {
			return "no hashes"
		}
		return ""
	case BlockStored:
		switch {
		case len(e.BlockHashes) == 0 || len(e.BlockHashes) > lim.MaxBlocksPerEvent:
			return "hash count out of range"
		case e.BlockSize < 1 || e.BlockSize > lim.MaxBlockSize:
			return "block size out of range"
		case len(e.TokenIDs) != 0 && len(e.TokenIDs) != e.BlockSize*len(e.BlockHashes):
			return "token count mismatch"
		case !FullAttention(e.SpecKind):
			return "not full attention"
		}
		return ""
	}
	return "unknown kind"
}

func binaryBE(b []byte) uint64 {
	var v uint64
	for _, c := range b {
		v = v<<8 | uint64(c)
	}
	return v
}

func FuzzParseFrames(f *testing.F) {
	f.Add([]byte("kv@a@m"), seq7, []byte{0x92, 0xcb}, uint8(3))
	f.Add([]byte{}, seq7[:3], []byte{}, uint8(3))
	f.Add([]byte{}, seq7, []byte{1}, uint8(4))
	f.Add([]byte("x"), seq7, []byte{}, uint8(0))
	f.Fuzz(func(t *testing.T, a, b, c []byte, n uint8) {
		frames := [][]byte{a, b, c, a, b, c}[:n%7]
		fr, err := ParseFrames(frames)
		valid := len(frames) == 3 && len(b) == 8
		if valid != (err == nil) {
			t.Fatalf("%d frames, seq %d bytes: err = %v", len(frames), len(b), err)
		}
		if err == nil && (fr.Seq != binaryBE(b) || len(fr.Payload) != len(c) || len(fr.Topic) != len(a)) {
			t.Fatalf("payload not passed through")
		}
		rep, err := ParseReplayReply(frames)
		if err == nil {
			if len(frames[0]) != 0 || len(frames) < 3 || len(frames) > 4 || len(frames[len(frames)-2]) != 8 {
				t.Fatalf("accepted bad replay reply %q", frames)
			}
			if len(frames) == 3 && rep.Topic != nil {
				t.Fatalf("topic from a 3-frame reply")
			}
		} else if !errors.Is(err, ErrReplayReply) {
			t.Fatalf("unclassified error %v", err)
		}
	})
}
