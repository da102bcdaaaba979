package scoring

// consistentHash is session affinity (Ray's ConsistentHashRouter): the session id, else the
// request id, is hashed onto a ring of the model's replicas with virtual_nodes points each; the
// owner serves it, and when the owner is not an eligible candidate (draining, not listed) the
// next distinct replicas clockwise do. Sessions are balanced in number, not in tokens.
type consistentHash struct{ configured }

var consistentHashSpecs = []ParamSpec{
	{Name: "virtual_nodes", Default: 100, Min: 1, Max: 10000, Doc: "ring points per replica (Ray: num_virtual_nodes)"},
}

func newConsistentHash() consistentHash {
	return consistentHash{configured{defaults(consistentHashSpecs)}}
}

// Name returns "consistent_hash".
func (consistentHash) Name() string { return PolicyConsistentHash }

// WithParams applies overrides.
func (p consistentHash) WithParams(over map[string]float64) (Policy, error) {
	ps, err := p.ps.with(p.Name(), over)
	return consistentHash{configured{ps}}, err
}

// Rank puts the key's owner first, then its ring successors, then the rest in candidate order.
func (p consistentHash) Rank(in *PolicyInput, c []Candidate) {
	key := in.SessionID
	if key == "" {
		key = in.RequestID
	}
	ring := in.Ring(int(p.ps.vals[0]))
	if len(ring.points) == 0 {
		sortByKey(c)
		return
	}
	start := ring.start(HashKey(key))
	row := ring.succ[start*ringSuccessors : (start+1)*ringSuccessors]
	found := false
	for i := range c {
		c[i].key = float64(ringSuccessors + i)
		m := int32(ring.member(c[i].ReplicaID))
		for j, s := range row {
			if s == m && m >= 0 {
				c[i].key, found = float64(j), true
			}
		}
	}
	if !found { // none of the precomputed successors is a candidate: walk on around the ring
		for j := range ring.points {
			id := ring.members[ring.owner[(start+j)%len(ring.points)]]
			if i := candidateIndex(c, id); i >= 0 {
				c[i].key = -1
				break
			}
		}
	}
	sortByKey(c)
}

func candidateIndex(c []Candidate, id string) int {
	for i := range c {
		if c[i].ReplicaID == id {
			return i
		}
	}
	return -1
}
