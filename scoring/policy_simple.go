package scoring

// roundRobin cycles through the candidates in order with a per-model cursor (SGLang's and
// Serve's round robin): load-blind and cache-blind, the floor every policy should beat.
type roundRobin struct{ noParams }

// Name returns "round_robin".
func (roundRobin) Name() string { return PolicyRoundRobin }

// WithParams accepts no parameters.
func (p roundRobin) WithParams(over map[string]float64) (Policy, error) {
	return p, rejectParams(p.Name(), over)
}

// Rank rotates the candidates so that the cursor's one comes first.
func (roundRobin) Rank(in *PolicyInput, c []Candidate) {
	k := int(in.Next() % uint64(len(c)))
	for i := range c {
		c[i].key = float64((i - k + len(c)) % len(c))
	}
	sortByKey(c)
}

// random picks uniformly at random; fallbacks are a random permutation.
type random struct{ noParams }

// Name returns "random".
func (random) Name() string { return PolicyRandom }

// WithParams accepts no parameters.
func (p random) WithParams(over map[string]float64) (Policy, error) {
	return p, rejectParams(p.Name(), over)
}

// Rank shuffles the candidates.
func (random) Rank(in *PolicyInput, c []Candidate) {
	for i := len(c) - 1; i > 0; i-- { // Fisher-Yates
		j := in.Rand.IntN(i + 1)
		c[i], c[j] = c[j], c[i]
	}
}

// leastRequests picks the replica with the fewest active requests, ties at random.
type leastRequests struct{ noParams }

// Name returns "least_requests".
func (leastRequests) Name() string { return PolicyLeastRequests }

// WithParams accepts no parameters.
func (p leastRequests) WithParams(over map[string]float64) (Policy, error) {
	return p, rejectParams(p.Name(), over)
}

// Rank orders by active requests.
func (leastRequests) Rank(in *PolicyInput, c []Candidate) {
	for i := range c {
		c[i].key = float64(c[i].ActiveRequests)
	}
	rankByKey(c, in.Rand)
}

// powerOfTwo samples two candidates and takes the one with fewer active requests (Ray Serve's
// default replica scheduler); the other comes second, the rest follow by active requests.
type powerOfTwo struct{ noParams }

// Name returns "power_of_two".
func (powerOfTwo) Name() string { return PolicyPowerOfTwo }

// WithParams accepts no parameters.
func (p powerOfTwo) WithParams(over map[string]float64) (Policy, error) {
	return p, rejectParams(p.Name(), over)
}

// Rank samples two and puts the less loaded first.
func (powerOfTwo) Rank(in *PolicyInput, c []Candidate) {
	for i := range c {
		c[i].key = float64(c[i].ActiveRequests)
	}
	sortByKey(c)
	powerOfTwoToFront(c, in.Rand)
}

// kvAffinity maximises the exact KV-block prefix overlap (every tier), ties at random: the
// source article's PureKVCacheAffinityRouter, which herds requests sharing a system prompt onto
// the replica that cached it first. Kept as the baseline that shows the problem.
type kvAffinity struct{ noParams }

// Name returns "kv_affinity".
func (kvAffinity) Name() string { return PolicyKVAffinity }

// WithParams accepts no parameters.
func (p kvAffinity) WithParams(over map[string]float64) (Policy, error) {
	return p, rejectParams(p.Name(), over)
}

// Rank orders by overlap, longest first.
func (kvAffinity) Rank(in *PolicyInput, c []Candidate) {
	for i := range c {
		c[i].key = -float64(c[i].Overlap.Prefix)
	}
	rankByKey(c, in.Rand)
}
