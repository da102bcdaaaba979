package vllm

import "sync/atomic"

// Counters is a snapshot of a Subscriber's activity since New. Everything
// the Subscriber drops is counted here.
type Counters struct {
	// Batches counts batches applied (live and replayed); ReplayedBatches the
	// replayed ones among them.
	Batches, ReplayedBatches uint64
	// Events by type, accepted and passed to the Sink.
	Stored, Removed, Cleared uint64
	// BlocksStored and BlocksRemoved count block hashes in accepted events.
	BlocksStored, BlocksRemoved uint64
	// Dropped counts events not passed on, by reason (every reason present).
	Dropped map[DropReason]uint64
	// MalformedFrames counts live or replay messages with the wrong frame
	// layout; TopicMismatches live messages outside the subscribed topic;
	// MalformedPayloads batches whose payload could not be decoded.
	MalformedFrames, TopicMismatches, MalformedPayloads uint64
	// Gaps counts sequence jumps; ReplaysOK and ReplaysFailed the replay
	// attempts (gap fills and catch-ups) that did or did not cover their range.
	Gaps, ReplaysOK, ReplaysFailed uint64
	// Restarts counts publisher restarts detected (live or during replay).
	Restarts uint64
	// Resets counts Sink.ResetReplica calls by reason (every reason present).
	Resets map[ResetReason]uint64
	// DialFailures counts failed connect or bind attempts; Disconnects lost
	// connections; Reconnects connections re-established after a loss.
	DialFailures, Disconnects, Reconnects uint64
	// SinkErrors counts ApplyBatch failures.
	SinkErrors uint64
}

// counters is the live, atomically updated form of Counters.
type counters struct {
	batches, replayedBatches                            atomic.Uint64
	stored, removed, cleared                            atomic.Uint64
	blocksStored, blocksRemoved                         atomic.Uint64
	dropped                                             [numDropReasons]atomic.Uint64
	malformedFrames, topicMismatches, malformedPayloads atomic.Uint64
	gaps, replaysOK, replaysFailed, restarts            atomic.Uint64
	resets                                              resetCounters
	dialFailures, disconnects, reconnects, sinkErrors   atomic.Uint64
}

// resetCounters holds one counter per ResetReason.
type resetCounters struct {
	restart, gap, malformed, sinkError, removed atomic.Uint64
}

func (r *resetCounters) of(reason ResetReason) *atomic.Uint64 {
	switch reason {
	case ResetRestart:
		return &r.restart
	case ResetGap:
		return &r.gap
	case ResetMalformed:
		return &r.malformed
	case ResetSinkError:
		return &r.sinkError
	}
	return &r.removed
}

func (c *counters) countEvents(evs []Event) {
	for i := range evs {
		switch evs[i].Kind {
		case BlockStored:
			c.stored.Add(1)
			c.blocksStored.Add(uint64(len(evs[i].BlockHashes)))
		case BlockRemoved:
			c.removed.Add(1)
			c.blocksRemoved.Add(uint64(len(evs[i].BlockHashes)))
		case AllBlocksCleared:
			c.cleared.Add(1)
		}
	}
}

func (c *counters) countDrops(d *Drops) {
	for i, n := range d {
		if n != 0 {
			c.dropped[i].Add(uint64(n))
		}
	}
}

func (c *counters) snapshot() Counters {
	out := Counters{
		Batches: c.batches.Load(), ReplayedBatches: c.replayedBatches.Load(),
		Stored: c.stored.Load(), Removed: c.removed.Load(), Cleared: c.cleared.Load(),
		BlocksStored: c.blocksStored.Load(), BlocksRemoved: c.blocksRemoved.Load(),
		Dropped:         make(map[DropReason]uint64, numDropReasons),
		MalformedFrames: c.malformedFrames.Load(), TopicMismatches: c.topicMismatches.Load(),
		MalformedPayloads: c.malformedPayloads.Load(),
		Gaps:              c.gaps.Load(), ReplaysOK: c.replaysOK.Load(), ReplaysFailed: c.replaysFailed.Load(),
		Restarts:     c.restarts.Load(),
		Resets:       make(map[ResetReason]uint64),
		DialFailures: c.dialFailures.Load(), Disconnects: c.disconnects.Load(), Reconnects: c.reconnects.Load(),
		SinkErrors: c.sinkErrors.Load(),
	}
	for _, r := range DropReasons() {
		out.Dropped[r] = c.dropped[r].Load()
	}
	for _, r := range ResetReasons() {
		out.Resets[r] = c.resets.of(r).Load()
	}
	return out
}
