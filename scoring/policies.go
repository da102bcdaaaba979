package scoring

import (
	"fmt"
	"math"
	"slices"
)

// Built-in policy names, for Config, PickRequest.Policy and NewPolicy. Each is a baseline from
// a peer router with that peer's defaults (see Policy.Specs), or switchyard's token_load.
const (
	// PolicyRoundRobin cycles through the candidates with a per-model cursor: load- and
	// cache-blind, the floor every policy should beat.
	PolicyRoundRobin = "round_robin"
	// PolicyRandom picks uniformly at random.
	PolicyRandom = "random"
	// PolicyLeastRequests picks the fewest active requests, ties at random.
	PolicyLeastRequests = "least_requests"
	// PolicyPowerOfTwo samples two candidates and takes the one with fewer active requests
	// (Ray Serve's default scheduler).
	PolicyPowerOfTwo = "power_of_two"
	// PolicyConsistentHash is session affinity (Ray's ConsistentHashRouter): session id, else
	// request id, on a deterministic 64-bit ring with virtual_nodes (100) points per replica;
	// ring successors serve when the owner is not an eligible candidate.
	PolicyConsistentHash = "consistent_hash"
	// PolicyPrefixAffinity is Ray's PrefixCacheAffinityRouter over the router's own decisions
	// (the approximate index): follow the longest match when it covers match_rate_threshold
	// (0.1) of the prompt, else the smallest tree; power of two within either set, or over all
	// when the active-request spread exceeds imbalanced_threshold (infinite).
	PolicyPrefixAffinity = "prefix_affinity"
	// PolicyCacheAware is SGLang's switch: shortest queue when max−min > balance_abs_threshold
	// (64) and max > min·balance_rel_threshold (1.5); else the best match when it covers more
	// than cache_threshold (0.3) of the prompt; else the smallest tree.
	PolicyCacheAware = "cache_aware"
	// PolicyKVAffinity maximises the exact KV-block overlap, ties at random: the source
	// article's PureKVCacheAffinityRouter, which herds requests sharing a system prompt.
	PolicyKVAffinity = "kv_affinity"
	// PolicyTokenLoad is the default: the Dynamo / Ray KVAwareRouter cost over prefill still to
	// compute (tier-credited overlap), decode blocks (projected over expected output) and
	// active requests; argmin, or softmax sampling at temperature > 0.
	PolicyTokenLoad = "token_load"
)

var inf = math.Inf(1)

// builtins returns a fresh instance of every built-in policy with its peer's defaults.
func builtins() []Policy {
	return []Policy{
		roundRobin{}, random{}, leastRequests{}, powerOfTwo{},
		newConsistentHash(), newPrefixAffinity(), newCacheAware(), kvAffinity{}, newTokenLoad(),
	}
}

// PolicyNames lists the built-in policy names, sorted.
func PolicyNames() []string {
	var n []string
	for _, p := range builtins() {
		n = append(n, p.Name())
	}
	slices.Sort(n)
	return n
}

// NewPolicy returns the built-in policy called name with params applied over its defaults.
// ErrUnknownPolicy for an unknown name; ErrInvalid for a bad parameter name or value.
func NewPolicy(name string, params map[string]float64) (Policy, error) {
	for _, p := range builtins() {
		if p.Name() == name {
			return p.WithParams(params)
		}
	}
	return nil, fmt.Errorf("%w: %q (have: %v)", ErrUnknownPolicy, name, PolicyNames())
}

// buildPolicies makes the Router's policy table: built-ins plus extras, each with the
// server-level parameters of cfg.PolicyParams.
func buildPolicies(extra []Policy, params map[string]map[string]float64) (map[string]Policy, error) {
	out := make(map[string]Policy)
	for _, p := range builtins() {
		out[p.Name()] = p
	}
	for _, p := range extra {
		if p == nil || p.Name() == "" {
			return nil, fmt.Errorf("%w: extra policy without a name", ErrInvalid)
		}
		if _, dup := out[p.Name()]; dup {
			return nil, fmt.Errorf("%w: extra policy %q collides with an existing one", ErrInvalid, p.Name())
		}
		out[p.Name()] = p
	}
	for name, over := range params {
		p, ok := out[name]
		if !ok {
			return nil, fmt.Errorf("%w: parameters given for %q", ErrUnknownPolicy, name)
		}
		q, err := p.WithParams(over)
		if err != nil {
			return nil, fmt.Errorf("policy_params: %w", err)
		}
		out[name] = q
	}
	return out, nil
}

// noParams is embedded by policies without coefficients.
type noParams struct{}

// Specs returns nil: the policy has no parameters.
func (noParams) Specs() []ParamSpec { return nil }

// Params returns an empty map: the policy has no parameters.
func (noParams) Params() map[string]float64 { return map[string]float64{} }

func rejectParams(name string, over map[string]float64) error {
	if len(over) == 0 {
		return nil
	}
	_, err := paramSet{}.with(name, over)
	return err
}
