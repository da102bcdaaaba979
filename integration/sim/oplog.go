package sim

// kvOp is one KV event of an engine step: a removal (s == nil) or a run of newly stored blocks.
type kvOp struct {
	s        *seq
	hash     uint64 // removed block's engine hash
	from, to int32  // stored blocks [from, to) of s
}

// opLog collects a step's KV events in the order they happened, published at the step's end.
type opLog struct{ ops []kvOp }

func (l *opLog) removed(h uint64) { l.ops = append(l.ops, kvOp{hash: h}) }
func (l *opLog) stored(s *seq, from, to int) {
	l.ops = append(l.ops, kvOp{s: s, from: int32(from), to: int32(to)})
}
func (l *opLog) reset() { l.ops = l.ops[:0] }
