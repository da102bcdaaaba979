package sim

import (
	"cmp"
	"slices"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// PooledHitRate is the token-weighted prefix hit rate of one LRU prefix cache of capacity
// blocks of bs tokens serving w's requests one at a time in timestamp order: each request
// reuses its cached prefix, then its prompt and output blocks are cached and released tail
// first, as an engine would. It is the yardstick of a perfectly pooled cache (no concurrency,
// no routing). Requests longer than the cache are skipped.
func PooledHitRate(w *workload.Workload, bs, capacity int) float64 {
	order := make([]int, len(w.Requests))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(w.Requests[a].Timestamp, w.Requests[b].Timestamp) })
	c := newKVCache(capacity, nil)
	root := workload.Mix64(0x706f6f6c)
	var toks []uint32
	var hashes []uint64
	var blocks []int32
	var hit, prompt int64
	for _, i := range order {
		r := &w.Requests[i]
		toks = w.Tokens(toks[:0], i)
		n := len(toks) - 1 // the last token's KV is never computed
		need := ceilDiv(n, bs)
		if need > capacity {
			continue
		}
		hashes = hashes[:0]
		parent := root
		for b := 0; b < n/bs; b++ {
			parent = engineHash(parent, toks[b*bs:(b+1)*bs])
			hashes = append(hashes, parent)
		}
		k, limit := 0, (r.InputLength-1)/bs
		for k < limit {
			if _, ok := c.lookup(hashes[k]); !ok {
				break
			}
			k++
		}
		hit += int64(k * bs)
		prompt += int64(r.InputLength)
		blocks = blocks[:0]
		for b := range need {
			if b < len(hashes) {
				if ex, ok := c.lookup(hashes[b]); ok {
					c.acquire(ex)
					blocks = append(blocks, ex)
					continue
				}
			}
			nb := c.allocate()
			if b < len(hashes) {
				c.register(nb, hashes[b])
			}
			blocks = append(blocks, nb)
		}
		for j := len(blocks) - 1; j >= 0; j-- {
			c.release(blocks[j])
		}
	}
	return ratio(float64(hit), float64(prompt))
}
