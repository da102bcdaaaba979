package vllm

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/go-zeromq/zmq4"
)

// replayOutcome is how a replay exchange ended.
type replayOutcome uint8

const (
	// replayCovered: every batch up to the target was applied.
	replayCovered replayOutcome = iota
	// replayShort: the engine could not supply the range (not buffered, hole,
	// timeout, unreachable, malformed reply).
	replayShort
	// replayOtherProcess: the engine's copy of the last applied batch differs.
	replayOtherProcess
)

var (
	errReplayHole  = errors.New("replay has a hole")
	errReplayEnded = errors.New("replay ended early")
)

// replayRange asks the replay socket for batches from start on and applies
// those before upto, in order. With verify, start is the last applied batch
// and is compared rather than applied; without, replay may begin at any
// sequence the buffer still holds. The exchange is bounded by the replay timeout.
func (s *stream) replayRange(ctx context.Context, start, upto uint64, verify bool) replayOutcome {
	rctx, cancel := context.WithTimeout(ctx, s.sub.opts.replayTimeout)
	defer cancel()
	sock := zmq4.NewDealer(rctx, zmq4.WithDialerMaxRetries(0), zmq4.WithDialerTimeout(s.sub.opts.dialTimeout))
	defer sock.Close()
	if err := sock.Dial(s.replay); err != nil {
		s.log.Warn("vllm events: replay unreachable", "endpoint", s.replay, "err", err)
		return replayShort
	}
	if err := sock.SendMulti(zmq4.NewMsgFrom(replayRequest(start)...)); err != nil {
		s.log.Warn("vllm events: replay request failed", "err", err)
		return replayShort
	}
	run := replayRun{next: start, upto: upto, verify: verify, jump: !verify}
	if verify {
		run.next = start + 1
	}
	for run.next < upto || run.verify {
		msg, err := sock.Recv()
		if err != nil {
			s.log.Warn("vllm events: replay incomplete", "next", run.next, "upto", upto, "err", err)
			return replayShort
		}
		f, err := ParseReplayReply(msg.Frames)
		if err != nil {
			s.sub.c.malformedFrames.Add(1)
			s.log.Warn("vllm events: bad replay reply", "err", err)
			return replayShort
		}
		if out, err := s.replayed(ctx, f, &run); err != nil {
			s.log.Warn("vllm events: replay failed", "next", run.next, "upto", upto, "err", err)
			return out
		}
	}
	return replayCovered
}

// replayRun is the progress of one replay exchange.
type replayRun struct {
	next, upto uint64 // next sequence to apply; the live batch waiting
	verify     bool   // the next reply may be the copy of batch next-1 to compare
	jump       bool   // the run may still start past next (catch-up)
}

// replayed handles one reply.
func (s *stream) replayed(ctx context.Context, f Frame, run *replayRun) (replayOutcome, error) {
	verify, jump := run.verify, run.jump
	run.verify = false
	switch {
	case verify && f.Seq == run.next-1:
		p, err := s.dec.Decode(f.Payload)
		if err != nil {
			s.sub.c.malformedPayloads.Add(1)
			return replayShort, err
		}
		if s.tsKnown && math.Float64bits(p.Time) != math.Float64bits(s.lastTS) {
			return replayOtherProcess, fmt.Errorf("batch %d has ts %v, the applied one had %v", f.Seq, p.Time, s.lastTS)
		}
		return replayCovered, nil
	case f.Seq < run.next:
		return replayCovered, nil // already applied
	case run.next >= run.upto:
		return replayCovered, nil // nothing missing; the copy to compare is gone
	case f.Seq == EndSeq:
		return replayShort, errReplayEnded
	case f.Seq >= run.upto, f.Seq > run.next && !jump:
		return replayShort, fmt.Errorf("%w: got %d, want %d", errReplayHole, f.Seq, run.next)
	}
	p, err := s.dec.Decode(f.Payload)
	if err != nil {
		s.sub.c.malformedPayloads.Add(1)
		return replayShort, err
	}
	run.jump = false
	s.apply(ctx, f.Seq, p, true)
	run.next = f.Seq + 1
	return replayCovered, nil
}
