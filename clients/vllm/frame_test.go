package vllm

import (
	"bytes"
	"errors"
	"testing"
)

var seq7 = []byte{0, 0, 0, 0, 0, 0, 0, 7}

func TestParseFrames(t *testing.T) {
	tests := []struct {
		name    string
		frames  [][]byte
		wantErr error
	}{
		{"valid", [][]byte{[]byte("kv@a@m"), seq7, []byte{0x92}}, nil},
		{"empty topic and payload", [][]byte{{}, seq7, {}}, nil},
		{"two frames", [][]byte{seq7, []byte{0x92}}, ErrFrameCount},
		{"four frames", [][]byte{{}, {}, seq7, []byte{0x92}}, ErrFrameCount},
		{"no frames", nil, ErrFrameCount},
		{"short seq", [][]byte{{}, seq7[:4], {}}, ErrSeqFrame},
		{"long seq", [][]byte{{}, append(seq7, 0), {}}, ErrSeqFrame},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseFrames(tc.frames)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && (f.Seq != 7 || !bytes.Equal(f.Topic, tc.frames[0]) || !bytes.Equal(f.Payload, tc.frames[2])) {
				t.Fatalf("got %+v", f)
			}
		})
	}
}

func TestParseReplayReply(t *testing.T) {
	end := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	tests := []struct {
		name    string
		frames  [][]byte
		topic   string
		seq     uint64
		wantErr bool
	}{
		{"with topic", [][]byte{{}, []byte("kv"), seq7, {1}}, "kv", 7, false},
		{"without topic", [][]byte{{}, seq7, {1}}, "", 7, false},
		{"end marker", [][]byte{{}, end, {}}, "", EndSeq, false},
		{"missing delimiter", [][]byte{[]byte("x"), seq7, {1}}, "", 0, true},
		{"too few", [][]byte{{}, seq7}, "", 0, true},
		{"too many", [][]byte{{}, {}, {}, seq7, {1}}, "", 0, true},
		{"bad seq", [][]byte{{}, {1, 2}, {1}}, "", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseReplayReply(tc.frames)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if err != nil {
				if !errors.Is(err, ErrReplayReply) {
					t.Fatalf("err %v does not wrap ErrReplayReply", err)
				}
				return
			}
			if string(f.Topic) != tc.topic || f.Seq != tc.seq {
				t.Fatalf("got topic %q seq %d", f.Topic, f.Seq)
			}
		})
	}
}
