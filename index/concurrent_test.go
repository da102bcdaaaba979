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
	var started, stored atomic.Int64 // blocks whose store began / returned
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
			started.Store(int64(i + 1))
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
				after := int(started.Load())
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

// TestSeqlockReadsAreNeverTorn hammers one shard: a writer inserts and
// deletes keys between stable ones (backward shifts move keys, tables grow
// and shrink, overflow indexes are reused) and deletes and re-inserts each
// stable key inside one critical section, while readers look the stable keys
// up and must always find exactly their own entry.
func TestSeqlockReadsAreNeverTorn(t *testing.T) {
	var sh shard
	sh.init(0)
	const stable = 64
	want := func(m uint64) entry { return mkEntry(uint16(m), 1, false, 0) }
	keys := make([]uint64, stable)
	for i := range keys {
		keys[i] = mix(uint64(i + 1))
		sh.begin()
		sh.insert(keys[i], want(keys[i]), 0)
		sh.end()
	}
	ops := 200_000
	if testing.Short() || raceEnabled {
		ops = 30_000
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				m := keys[n%stable]
				if e, set, ok := sh.lookup(m); !ok || set != nil || e != want(m) {
					t.Errorf("key %x: got %x %v, want %x", m, e, ok, want(m))
					return
				}
			}
		}()
	}
	for i := range ops {
		m := mix(uint64(1000 + i%300))
		sh.begin()
		if _, j, ok := sh.tab.Load().get(m); ok {
			if e := entry(sh.tab.Load().at(j).ent.Load()); e.isOvf() {
				sh.freeOvf(e.ovfIndex())
			}
			sh.remove(j)
		} else if i%2 == 0 {
			sh.insert(m, ovfRef(sh.putOvf(&ovfSet{ents: []entry{1, 2}})), 0)
		} else {
			sh.insert(m, mkEntry(7, 2, false, 0), 0)
		}
		sh.end()
		// Move a stable key within one critical section: readers that
		// overlap it must retry, never miss it or see another key's entry.
		k := keys[i%stable]
		sh.begin()
		_, j, _ := sh.tab.Load().get(k)
		sh.remove(j)
		sh.insert(k, want(k), 0)
		sh.end()
	}
	close(stop)
	wg.Wait()
}
