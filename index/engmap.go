package index

import "math/bits"

// engMap is the writer-only engine-hash -> router-hash map of one (replica,
// rank): open addressing with linear probing and backward-shift deletion,
// keys stored mixed (0 marks an empty slot). It holds one entry per engine
// block the engine reported, so its footprint matters: 16 bytes a slot at a
// fill of 64-80% (a Go map of the same pairs needs about 36 bytes an entry).
type engMap struct {
	slots []engSlot
	used  int
}

type engSlot struct{ k, v uint64 }

func (g *engMap) home(m uint64) int {
	hi, _ := bits.Mul64(m, uint64(len(g.slots)))
	return int(hi)
}

// find returns the slot of engine hash e, or of the empty slot ending its probe.
func (g *engMap) find(e uint64) (int, bool) {
	if len(g.slots) == 0 {
		return -1, false
	}
	m := mix(e)
	for i := g.home(m); ; {
		switch g.slots[i].k {
		case m:
			return i, true
		case 0:
			return i, false
		}
		if i++; i == len(g.slots) {
			i = 0
		}
	}
}

func (g *engMap) get(e uint64) (uint64, bool) {
	i, ok := g.find(e)
	if !ok {
		return 0, false
	}
	return g.slots[i].v, true
}

func (g *engMap) put(e, v uint64) {
	i, ok := g.find(e)
	if ok {
		g.slots[i].v = v
		return
	}
	if (g.used+1)*maxLoadDen > len(g.slots)*maxLoadNum {
		g.rehash(grownCap(len(g.slots)))
		i, _ = g.find(e)
	}
	g.slots[i] = engSlot{mix(e), v}
	g.used++
}

func (g *engMap) del(e uint64) {
	i, ok := g.find(e)
	if !ok {
		return
	}
	n := len(g.slots)
	for j := i; ; {
		if j++; j == n {
			j = 0
		}
		k := g.slots[j].k
		if k == 0 {
			break
		}
		if h := g.home(k); movable(i, j, h) {
			g.slots[i] = g.slots[j]
			i = j
		}
	}
	g.slots[i] = engSlot{}
	g.used--
	if n > minTableCap && g.used*5 < n {
		g.rehash(max(minTableCap, g.used*2))
	}
}

func (g *engMap) rehash(n int) {
	old := g.slots
	g.slots = make([]engSlot, n)
	for _, s := range old {
		if s.k != 0 {
			i := g.home(s.k)
			for g.slots[i].k != 0 {
				if i++; i == n {
					i = 0
				}
			}
			g.slots[i] = s
		}
	}
}

func (g *engMap) len() int { return g.used }

// values calls f with every router hash in the map.
func (g *engMap) values(f func(v uint64)) {
	for _, s := range g.slots {
		if s.k != 0 {
			f(s.v)
		}
	}
}

func (g *engMap) reset() { *g = engMap{} }
