package index

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestConcurrentMatchSeesEveryCompletedStore: while one writer extends a
// chain on "r" block by block and another churns unrelated blocks through the
// same shards (inserts, removals, growth, shrinking, overflow sets), readers
// must see every block stored before their Match started and nothing stored
// after it ended; without a lock on the read path, a torn read would show up
// as a missing block.
func TestConcurrentMatchSeesEveryCompletedStore(t *testing.T) {
	const chain = 300
	ix := newIndex(Config{BlockSize: 4}, 2) // few shards: more contention
	tokens := toks(1, chain*4)
	hashes := HashTokens(nil, tokens, 4, "")
	var stored atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // chain writer
		defer wg.Done()
		defer close(done)
		for i := range chain {
			ev := Stored{BlockHashes: []uint64{uint64(i + 1)}, TokenIDs: tokens[i*4 : i*4+4]}
			if i > 0 {
				ev.Parent, ev.HasParent = uint64(i), true
			}
			if err := ix.ApplyStored("r", 0, ev); err != nil {
				t.Error(err)
				return
			}
			stored.Store(int64(i + 1))
		}
	}()
	go func() { // churn writer
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			e := uint64(i%500 + 1)
			_ = ix.ApplyStored("s", 0, Stored{BlockHashes: []uint64{e}, TokenIDs: toks(int(e)*7, 4)})
			if i%3 == 0 {
				_ = ix.ApplyRemoved("s", 0, Removed{BlockHashes: []uint64{uint64((i/3)%500 + 1)}})
			}
			if i%50 == 0 {
				ix.Predict("s", hashes[:i%chain], 0) // overflow sets on the chain's blocks
			}
		}
	}()
	readers := 2
	wg.Add(readers)
	for range readers {
		go func() {
			defer wg.Done()
			out := make([]Overlap, 2)
			last := 0
			for {
				before := int(stored.Load())
				out = ix.Match(hashes, []string{"r", "s"}, out)
				after := int(stored.Load())
				o := out[0]
				if o.Prefix < before || o.Prefix > after || o.Prefix < last || o.Device != o.Prefix || o.Tiers[TierDevice] != o.Prefix {
					t.Errorf("match %+v with %d..%d stored, previous %d", o, before, after, last)
					return
				}
				last = o.Prefix
				if before == chain {
					return
				}
			}
		}()
	}
	wg.Wait()
}
