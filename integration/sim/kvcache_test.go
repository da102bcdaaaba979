package sim

import (
	"slices"
	"testing"
)

func TestKVCacheEvictsLRUTailFirst(t *testing.T) {
	var log opLog
	c := newKVCache(4, &log)
	var blocks []int32
	for i := range 4 {
		b := c.allocate()
		c.register(b, uint64(100+i))
		blocks = append(blocks, b)
	}
	if c.nfree != 0 || c.used() != 4 {
		t.Fatalf("free %d used %d", c.nfree, c.used())
	}
	for i := len(blocks) - 1; i >= 0; i-- { // a finished request frees tail first
		c.release(blocks[i])
	}
	if b, ok := c.lookup(101); !ok || b != blocks[1] {
		t.Fatal("a freed block must stay cached")
	}
	c.acquire(blocks[0]) // a prefix hit takes block 100 out of the free list
	c.allocate()
	c.allocate()
	if !slices.Equal(logged(&log), []uint64{103, 102}) {
		t.Errorf("evicted %v, want the tail blocks 103 then 102", logged(&log))
	}
	if _, ok := c.lookup(103); ok {
		t.Error("an evicted block is still cached")
	}
	if _, ok := c.lookup(100); !ok {
		t.Error("an acquired block was evicted")
	}
}

func logged(l *opLog) []uint64 {
	var out []uint64
	for _, op := range l.ops {
		if op.s == nil {
			out = append(out, op.hash)
		}
	}
	return out
}

func TestEnginePreemptsLastAdmitted(t *testing.T) {
	e := newEngine(0, "e", EngineConfig{BlockSize: 16, NumBlocks: 8, MaxBatchedTokens: 64, MaxSeqs: 4}, 1)
	seqs := make([]*seq, 2)
	for i := range seqs {
		seqs[i] = &seq{}
		toks := make([]uint32, 80)
		for j := range toks {
			toks[j] = uint32(i*1000 + j)
		}
		seqs[i].reset(i, "", toks, 40)
		e.enqueue(seqs[i])
	}
	var out stepOutput
	finished := 0
	for steps := 0; finished < 2; steps++ {
		if steps > 1000 || !e.schedule() {
			t.Fatalf("stuck after %d steps with %d finished", steps, finished)
		}
		if e.kv.used() > 8 {
			t.Fatal("more blocks in use than the cache has")
		}
		out.reset()
		e.finishStep(&out, 16)
		finished += len(out.done)
		e.log.reset()
	}
	if seqs[0].preemptions != 0 || seqs[1].preemptions == 0 || e.preemptions != seqs[1].preemptions {
		t.Errorf("preemptions: first %d, second %d, engine %d; want only the later-admitted one preempted",
			seqs[0].preemptions, seqs[1].preemptions, e.preemptions)
	}
	if e.kv.used() != 0 {
		t.Errorf("%d blocks still used after both finished", e.kv.used())
	}
}
