package scoring

// prefixAffinity is Ray's PrefixCacheAffinityRouter over the router's own routing history (the
// approximate index fed by its decisions): if the active-request spread exceeds
// imbalanced_threshold it falls back to power of two choices; otherwise, when the best match
// covers at least match_rate_threshold of the prompt, it chooses among the replicas with the
// longest match, else among those with the smallest prefix tree — by power of two choices in
// either set. Tier-blind and not eviction-aware, as the original.
type prefixAffinity struct{ configured }

const (
	paMatchRate = iota
	paImbalanced
)

var prefixAffinitySpecs = []ParamSpec{
	{Name: "match_rate_threshold", Default: 0.1, Min: 0, Max: 1, Doc: "matched share of the prompt needed to follow the match"},
	{Name: "imbalanced_threshold", Default: inf, Min: 0, Max: inf, Doc: "active-request spread beyond which power of two choices is used (Ray: infinite; docs: 10)"},
}

func newPrefixAffinity() prefixAffinity {
	return prefixAffinity{configured{defaults(prefixAffinitySpecs)}}
}

// Name returns "prefix_affinity".
func (prefixAffinity) Name() string { return PolicyPrefixAffinity }

// WithParams applies overrides.
func (p prefixAffinity) WithParams(over map[string]float64) (Policy, error) {
	ps, err := p.ps.with(p.Name(), over)
	return prefixAffinity{configured{ps}}, err
}

// Rank applies Ray's rule; the chosen set comes first, the rest by match then load.
func (p prefixAffinity) Rank(in *PolicyInput, c []Candidate) {
	lo, hi := loadSpread(c)
	if float64(hi-lo) > p.ps.vals[paImbalanced] {
		for i := range c {
			c[i].key = float64(c[i].ActiveRequests)
		}
		sortByKey(c)
		powerOfTwoToFront(c, in.Rand)
		return
	}
	best := bestPrefix(c)
	useMatch := best > 0 && matchRate(in, best) >= p.ps.vals[paMatchRate]
	var smallest int64 = -1
	if !useMatch {
		for i := range c {
			if smallest < 0 || c[i].TreeSize < smallest {
				smallest = c[i].TreeSize
			}
		}
	}
	n := 0 // size of the chosen set
	for i := range c {
		chosen := (useMatch && c[i].Overlap.Prefix == best) || (!useMatch && c[i].TreeSize == smallest)
		c[i].key = float64(c[i].ActiveRequests) - float64(c[i].Overlap.Prefix)*1e-9
		if !chosen {
			c[i].key += 1e12
		} else {
			n++
		}
	}
	sortByKey(c)
	powerOfTwoToFront(c[:n], in.Rand)
}

// loadSpread returns the least and most active requests among c.
func loadSpread(c []Candidate) (lo, hi int) {
	lo, hi = c[0].ActiveRequests, c[0].ActiveRequests
	for i := range c {
		lo, hi = min(lo, c[i].ActiveRequests), max(hi, c[i].ActiveRequests)
	}
	return lo, hi
}

// bestPrefix returns the longest prefix overlap among c, in units.
func bestPrefix(c []Candidate) int {
	best := 0
	for i := range c {
		best = max(best, c[i].Overlap.Prefix)
	}
	return best
}

// matchRate is the share of the prompt a prefix of units covers (Ray's matched chars / chars).
func matchRate(in *PolicyInput, units int) float64 {
	if in.PromptSize <= 0 {
		return 0
	}
	return min(1, float64(units*in.UnitSize)/float64(in.PromptSize))
}
