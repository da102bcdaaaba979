package sim

// seq is one request on an engine (vLLM's Request): its tokens, progress and block table.
type seq struct {
	req            int    // workload request index
	rid            string // router request id
	tokens         []uint32
	prompt, output int
	known          int // tokens known: prompt + generated
	computed       int // tokens whose KV is computed
	generated      int
	hashes         []uint64 // engine hashes of full blocks of known tokens, in chain order
	blocks         []int32  // block table
	registered     int      // leading blocks registered in the prefix cache
	cachedPrompt   int      // prompt tokens found cached at first admission (-1 before)
	order          uint64   // admission order, for LIFO preemption
	sched          int      // tokens scheduled in the current step
	preemptions    int
	done           bool
}

func (s *seq) reset(req int, rid string, tokens []uint32, prompt int) {
	*s = seq{
		req: req, rid: rid, tokens: tokens, prompt: prompt, output: len(tokens) - prompt,
		known: prompt, hashes: s.hashes[:0], blocks: s.blocks[:0], cachedPrompt: -1,
	}
}

// hashUpTo extends the block hashes to n full blocks (n·bs ≤ known).
func (s *seq) hashUpTo(n int, root uint64, bs int) {
	for b := len(s.hashes); b < n; b++ {
		parent := root
		if b > 0 {
			parent = s.hashes[b-1]
		}
		s.hashes = append(s.hashes, engineHash(parent, s.tokens[b*bs:(b+1)*bs]))
	}
}

// decoding reports whether the scheduled work is one decode token (not prefill or recompute).
func (s *seq) decoding() bool { return s.generated > 0 && s.computed == s.known-1 }

func ceilDiv(a, b int) int { return (a + b - 1) / b }
