package scoring

// Ray's prefix tree evicts a replica's least recently used text once it passes
// eviction_threshold_chars, down to eviction_target_chars; SGLang's tree is similar. The tracker
// keeps the same bound on its per-replica measure of recently routed, not-yet-matched prompt.
const (
	treeEvictThreshold = 400_000
	treeEvictTarget    = 360_000
)

type treeEntry struct {
	at   int64 // unix nanoseconds
	size int64
}

// treeSize approximates the size of the prefix tree a Ray or SGLang router would hold for one
// replica: the prompt routed to it that did not match what it already had, forgotten after a
// window (the approximate index's TTL) or oldest-first beyond the eviction threshold.
type treeSize struct {
	q     []treeEntry // FIFO from head
	head  int
	total int64
}

func (t *treeSize) add(at, size int64) {
	if size <= 0 {
		return
	}
	if t.head > 64 && t.head*2 > len(t.q) { // compact: amortised, no steady-state allocation
		n := copy(t.q, t.q[t.head:])
		t.q, t.head = t.q[:n], 0
	}
	t.q = append(t.q, treeEntry{at: at, size: size})
	t.total += size
	if t.total > treeEvictThreshold {
		for t.total > treeEvictTarget && t.head < len(t.q) {
			t.pop()
		}
	}
}

func (t *treeSize) pop() {
	t.total -= t.q[t.head].size
	t.q[t.head] = treeEntry{}
	t.head++
}

// value forgets entries older than window before now and returns the size.
func (t *treeSize) value(now, window int64) int64 {
	for t.head < len(t.q) && now-t.q[t.head].at >= window {
		t.pop()
	}
	return t.total
}
