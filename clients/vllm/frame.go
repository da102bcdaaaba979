package vllm

import (
	"encoding/binary"
	"fmt"
)

// EndSeq is the sequence number of the replay socket's end-of-replay marker.
const EndSeq uint64 = 0xFFFFFFFFFFFFFFFF

// Frame is one live message of vLLM's PUB socket.
type Frame struct {
	Topic   []byte
	Seq     uint64
	Payload []byte
}

// ParseFrames checks a live message: exactly [topic, seq (8 bytes,
// big-endian), payload]. The result aliases the given frames.
func ParseFrames(frames [][]byte) (Frame, error) {
	if len(frames) != 3 {
		return Frame{}, fmt.Errorf("%w: got %d", ErrFrameCount, len(frames))
	}
	seq, err := parseSeq(frames[1])
	if err != nil {
		return Frame{}, err
	}
	return Frame{Topic: frames[0], Seq: seq, Payload: frames[2]}, nil
}

func parseSeq(b []byte) (uint64, error) {
	if len(b) != 8 {
		return 0, fmt.Errorf("%w: got %d bytes", ErrSeqFrame, len(b))
	}
	return binary.BigEndian.Uint64(b), nil
}

// ParseReplayReply checks one message a DEALER receives from vLLM's replay
// ROUTER: ["", topic, seq, payload] or, from older engines, ["", seq, payload].
// A Frame with Seq == EndSeq marks the end of the replay.
func ParseReplayReply(frames [][]byte) (Frame, error) {
	if len(frames) < 3 || len(frames) > 4 || len(frames[0]) != 0 {
		return Frame{}, fmt.Errorf("%w: want [\"\", topic?, seq, payload], got %d frames", ErrReplayReply, len(frames))
	}
	var f Frame
	if len(frames) == 4 {
		f.Topic = frames[1]
	}
	seq, err := parseSeq(frames[len(frames)-2])
	if err != nil {
		return Frame{}, fmt.Errorf("%w: %w", ErrReplayReply, err)
	}
	f.Seq, f.Payload = seq, frames[len(frames)-1]
	return f, nil
}

// replayRequest builds the DEALER request for batches from start on: ["", start].
func replayRequest(start uint64) [][]byte {
	return [][]byte{{}, binary.BigEndian.AppendUint64(nil, start)}
}
