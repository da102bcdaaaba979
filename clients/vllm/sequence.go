package vllm

import "context"

// sequence runs before the live batch seq is applied. It makes the Sink's
// state ready for seq: restarts reset it, gaps are replayed or reset, and a
// first contact (or the first batch after a restart) catches up from the
// replay buffer when there is one.
func (s *stream) sequence(ctx context.Context, seq uint64) {
	c := &s.sub.c
	suspect := s.suspect
	s.suspect = false
	switch {
	case !s.have:
		s.catchUp(ctx, seq)
	case seq == s.last+1 && (!suspect || s.replay == ""):
	case seq <= s.last:
		c.restarts.Add(1)
		s.log.Warn("vllm events: sequence went back, engine restarted", "last", s.last, "seq", seq)
		s.restarted(ctx)
		s.catchUp(ctx, seq)
	default:
		if seq != s.last+1 {
			c.gaps.Add(1)
			s.log.Warn("vllm events: sequence gap", "last", s.last, "seq", seq)
		}
		s.fillGap(ctx, seq)
	}
}

// restarted forgets the previous process: its entries and its groups.
func (s *stream) restarted(ctx context.Context) {
	s.reset(ctx, ResetRestart)
	s.dec.Reset()
	s.have, s.tsKnown = false, false
}

// fillGap replays the batches after s.last and before seq. It asks from
// s.last itself so the engine's copy of that batch can be compared with what
// was applied: a different timestamp means a different process, i.e. a
// restart hidden behind higher sequence numbers. After a reconnect it runs
// even without a gap (seq == s.last+1), just for that comparison; then only a
// different process resets.
func (s *stream) fillGap(ctx context.Context, seq uint64) {
	gap := seq != s.last+1
	if s.replay == "" || seq-s.last-1 > s.sub.opts.maxReplayGap {
		s.reset(ctx, ResetGap)
		return
	}
	switch s.replayRange(ctx, s.last, seq, true) {
	case replayCovered:
		s.sub.c.replaysOK.Add(1)
	case replayOtherProcess:
		s.sub.c.replaysFailed.Add(1)
		s.sub.c.restarts.Add(1)
		s.log.Warn("vllm events: replay shows a restarted engine", "last", s.last, "seq", seq)
		s.restarted(ctx)
		s.catchUp(ctx, seq)
	default:
		s.sub.c.replaysFailed.Add(1)
		if gap {
			s.reset(ctx, ResetGap)
		}
	}
}

// catchUp applies what the replay buffer holds before seq, when the stream
// has no history (first contact, or just restarted). Any contiguous run of
// batches ending right before seq is safe to apply: it can only miss blocks,
// never keep a removed one. A run with a hole is undone by a reset.
func (s *stream) catchUp(ctx context.Context, seq uint64) {
	if s.replay == "" || seq == 0 {
		return
	}
	start := uint64(0)
	if seq > s.sub.opts.maxReplayGap {
		start = seq - s.sub.opts.maxReplayGap
	}
	switch s.replayRange(ctx, start, seq, false) {
	case replayCovered:
		s.sub.c.replaysOK.Add(1)
	default:
		s.sub.c.replaysFailed.Add(1)
		if s.dirty {
			s.reset(ctx, ResetGap)
		}
	}
}

// applyLive applies a live batch. An undecodable batch leaves the Sink's
// state unknown, so it resets the replica; the sequence still advances.
func (s *stream) applyLive(ctx context.Context, seq uint64, payload []byte) {
	p, err := s.dec.Decode(payload)
	if err != nil {
		s.sub.c.malformedPayloads.Add(1)
		s.log.Warn("vllm events: undecodable batch", "seq", seq, "err", err)
		s.have, s.last, s.tsKnown = true, seq, false
		s.reset(ctx, ResetMalformed)
		return
	}
	s.apply(ctx, seq, p, false)
}

// apply hands a decoded batch to the Sink and advances the sequence.
func (s *stream) apply(ctx context.Context, seq uint64, p Payload, replayed bool) {
	c := &s.sub.c
	s.have, s.last, s.lastTS, s.tsKnown = true, seq, p.Time, true
	if p.HasRank {
		s.rank = p.Rank
	}
	c.countDrops(&p.Drops)
	c.batches.Add(1)
	if replayed {
		c.replayedBatches.Add(1)
	}
	if len(p.Events) == 0 {
		return
	}
	c.countEvents(p.Events)
	b := Batch{Replica: s.ep.Replica, Rank: s.rank, Seq: seq, Time: p.Time, Replayed: replayed, Events: p.Events}
	if err := s.sub.sink.ApplyBatch(ctx, b); err != nil {
		if ctx.Err() != nil {
			return
		}
		c.sinkErrors.Add(1)
		s.log.Error("vllm events: sink failed to apply batch", "seq", seq, "err", err)
		s.reset(ctx, ResetSinkError)
		return
	}
	s.dirty = true
}

// reset drops the Sink's entries for this stream.
func (s *stream) reset(ctx context.Context, reason ResetReason) {
	s.sub.c.resets.of(reason).Add(1)
	s.sub.sink.ResetReplica(ctx, s.ep.Replica, s.rank, reason)
	s.dirty = false
}
