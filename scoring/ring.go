package scoring

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/zeebo/xxh3"
)

// ringSuccessors is how many distinct replicas the ring precomputes clockwise from each virtual
// node (the owner and its fallbacks; Ray's ConsistentHashRouter tries two fallbacks).
const ringSuccessors = 4

// HashRing is a consistent-hash ring of replicas with virtual nodes. It is deterministic: the
// same members and node count give the same ring in every process (xxh3-64 of the member id
// followed by a zero byte and the virtual node number, big-endian), so several routers agree
// on a session's owner.
type HashRing struct {
	virtualNodes int
	members      []string // sorted
	points       []uint64 // sorted vnode hashes
	owner        []int32  // member index of each point
	succ         []int32  // per point: the first ringSuccessors distinct members clockwise (-1 pads)
}

// NewHashRing builds the ring over members with virtualNodes points each (at least 1).
func NewHashRing(members []string, virtualNodes int) *HashRing {
	virtualNodes = max(1, virtualNodes)
	r := &HashRing{virtualNodes: virtualNodes, members: slices.Clone(members)}
	slices.Sort(r.members)
	r.members = slices.Compact(r.members)
	type vnode struct {
		h uint64
		m int32
	}
	vs := make([]vnode, 0, len(r.members)*virtualNodes)
	var buf []byte
	for m, id := range r.members {
		for v := 0; v < virtualNodes; v++ {
			// Hashing the node number as input, not as xxh3's seed: seeded
			// hashes of ids of 3 bytes or fewer cluster badly on the ring.
			buf = binary.BigEndian.AppendUint32(append(append(buf[:0], id...), 0), uint32(v))
			vs = append(vs, vnode{xxh3.Hash(buf), int32(m)})
		}
	}
	slices.SortFunc(vs, func(a, b vnode) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.m, b.m)) })
	r.points = make([]uint64, len(vs))
	r.owner = make([]int32, len(vs))
	for i, v := range vs {
		r.points[i], r.owner[i] = v.h, v.m
	}
	k := min(ringSuccessors, len(r.members))
	r.succ = make([]int32, len(vs)*ringSuccessors)
	for i := range vs {
		row := r.succ[i*ringSuccessors : (i+1)*ringSuccessors]
		n := 0
		for j := 0; n < k; j++ {
			m := r.owner[(i+j)%len(vs)]
			if !slices.Contains(row[:n], m) {
				row[n] = m
				n++
			}
		}
		for ; n < ringSuccessors; n++ {
			row[n] = -1
		}
	}
	return r
}

// Members returns the ring's replica ids, sorted.
func (r *HashRing) Members() []string { return slices.Clone(r.members) }

// Owner returns the replica owning key (the first virtual node clockwise from its hash), or ""
// for an empty ring.
func (r *HashRing) Owner(key string) string {
	if len(r.points) == 0 {
		return ""
	}
	return r.members[r.owner[r.start(HashKey(key))]]
}

// HashKey is the ring's 64-bit hash of a session or request key.
func HashKey(key string) uint64 { return xxh3.HashString(key) }

// start is the index of the first point at or after h, wrapping.
func (r *HashRing) start(h uint64) int {
	i, _ := slices.BinarySearch(r.points, h)
	if i == len(r.points) {
		i = 0
	}
	return i
}

// member returns the index of id in members, or -1.
func (r *HashRing) member(id string) int {
	if i, ok := slices.BinarySearch(r.members, id); ok {
		return i
	}
	return -1
}
