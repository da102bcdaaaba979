package scoring

import "math"

// tokenLoad is the default policy: the Dynamo / Ray KVAwareRouter cost, lowest wins.
//
//	prefill(w) = prefill_load_scale · max(0, (active_prefill_tokens(w) + ISL)/B − credit(w))
//	credit(w)  = overlap_credit·device + host_hit_weight·host + disk_hit_weight·disk   (overlap blocks by best tier)
//	decode(w)  = held_blocks(w) + output_weight·remaining_output_blocks(w) + new_blocks(w)
//	cost(w)    = prefill(w) + decode(w) + active_request_weight · active_requests(w)
//
// KV overlap is the estimate of the prefill a replica would save, not the objective. new_blocks
// is this request's prompt blocks not already held by active requests there.
// remaining_output_blocks projects the active requests' decode over their expected output
// (hints or learned estimates, decaying as they generate); output_weight 0 gives the peers'
// behaviour of counting only what is active now. Temperature 0 takes the argmin (ties at
// random); T > 0 samples with p ∝ exp(−((cost−min)/(max−min))/T).
type tokenLoad struct{ configured }

const (
	tlPrefillScale = iota
	tlOverlapCredit
	tlHostWeight
	tlDiskWeight
	tlActiveWeight
	tlTemperature
	tlOutputWeight
)

var tokenLoadSpecs = []ParamSpec{
	{Name: "prefill_load_scale", Default: 1, Min: 0, Max: 1e6, Doc: "weight of the uncached prefill blocks"},
	{Name: "overlap_credit", Default: 1, Min: 0, Max: 100, Doc: "credit per overlapping device-tier block"},
	{Name: "host_hit_weight", Default: 0.75, Min: 0, Max: 100, Doc: "credit per overlapping block whose best tier is host (CPU) memory"},
	{Name: "disk_hit_weight", Default: 0.25, Min: 0, Max: 100, Doc: "credit per overlapping block whose best tier is disk"},
	{Name: "active_request_weight", Default: 0, Min: 0, Max: 1e6, Doc: "cost per active request"},
	{Name: "temperature", Default: 0, Min: 0, Max: 1e3, Doc: "0 = argmin; > 0 = softmax sampling over range-normalised costs"},
	{Name: "output_weight", Default: 1, Min: 0, Max: 100, Doc: "weight of active requests' expected remaining output blocks (0 = count only what is held)"},
}

func newTokenLoad() tokenLoad { return tokenLoad{configured{defaults(tokenLoadSpecs)}} }

// Name returns "token_load".
func (tokenLoad) Name() string { return PolicyTokenLoad }

// WithParams applies overrides.
func (p tokenLoad) WithParams(over map[string]float64) (Policy, error) {
	ps, err := p.ps.with(p.Name(), over)
	return tokenLoad{configured{ps}}, err
}

// Rank writes every candidate's cost and orders them, best first.
func (p tokenLoad) Rank(in *PolicyInput, c []Candidate) {
	v := p.ps.vals
	b := float64(in.BlockSize)
	unitBlocks := in.UnitTokens / b
	isl := float64(in.PromptTokens)
	for i := range c {
		t := &c[i].Overlap.Tiers
		credit := (v[tlOverlapCredit]*float64(t[0]) + v[tlHostWeight]*float64(t[1]) + v[tlDiskWeight]*float64(t[2])) * unitBlocks
		prefill := math.Max(0, (float64(c[i].PrefillTokens)+isl)/b-credit)
		decode := c[i].decodeProjected(v[tlOutputWeight]) + c[i].NewBlocks
		c[i].Cost = v[tlPrefillScale]*prefill + decode + v[tlActiveWeight]*float64(c[i].ActiveRequests)
		c[i].key = c[i].Cost
	}
	sortByKey(c)
	if t := v[tlTemperature]; t > 0 {
		softmaxToFront(c, t, in.Rand)
		return
	}
	tieToFront(c, in.Rand)
}
