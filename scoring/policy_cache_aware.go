package scoring

// cacheAware is SGLang's cache-aware switch (not a weighted score). Load is active requests.
// When max−min > balance_abs_threshold and max > min·balance_rel_threshold it routes to the
// shortest queue; otherwise, when the best match covers more than cache_threshold of the prompt,
// to the best-matching replica; otherwise to the replica with the smallest prefix tree (SGLang's
// smallest tenant, which is the least-loaded one while trees are empty). Ties at random.
type cacheAware struct{ configured }

const (
	caCache = iota
	caAbs
	caRel
)

var cacheAwareSpecs = []ParamSpec{
	{Name: "cache_threshold", Default: 0.3, Min: 0, Max: 1, Doc: "matched share of the prompt above which the best match wins"},
	{Name: "balance_abs_threshold", Default: 64, Min: 0, Max: inf, Doc: "active-request spread that, with the relative one, means imbalance"},
	{Name: "balance_rel_threshold", Default: 1.5, Min: 0, Max: inf, Doc: "max/min active-request ratio that, with the absolute one, means imbalance"},
}

func newCacheAware() cacheAware { return cacheAware{configured{defaults(cacheAwareSpecs)}} }

// Name returns "cache_aware".
func (cacheAware) Name() string { return PolicyCacheAware }

// WithParams applies overrides.
func (p cacheAware) WithParams(over map[string]float64) (Policy, error) {
	ps, err := p.ps.with(p.Name(), over)
	return cacheAware{configured{ps}}, err
}

// Rank applies SGLang's switch; the rest follow by the same key.
func (p cacheAware) Rank(in *PolicyInput, c []Candidate) {
	imbalanced := p.imbalanced(loadSpread(c))
	best := bestPrefix(c)
	for i := range c {
		switch {
		case imbalanced:
			c[i].key = float64(c[i].ActiveRequests)
		case best > 0 && matchRate(in, best) > p.ps.vals[caCache]:
			c[i].key = -float64(c[i].Overlap.Prefix)
		default:
			c[i].key = float64(c[i].TreeSize)
		}
	}
	rankByKey(c, in.Rand)
}

// imbalanced reports whether SGLang's switch would route to the shortest queue for these loads.
func (p cacheAware) imbalanced(lo, hi int) bool {
	return float64(hi-lo) > p.ps.vals[caAbs] && float64(hi) > float64(lo)*p.ps.vals[caRel]
}
