package sim

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard-llm/switchyard/scoring"
)

// PolicyOracle is the simulation-only reference policy: token_load told every request's true
// output length (as the expected-output hint) with the learned estimate off, showing how far
// a policy is from clairvoyance about output lengths.
const PolicyOracle = "oracle"

// Variant is one routing configuration to simulate.
type Variant struct {
	Label  string             // name in tables and plots
	Policy string             // scoring policy name
	Params map[string]float64 // coefficient overrides
	// OutputEstimate turns the router's learned output-length estimate on.
	OutputEstimate bool
	// Oracle passes every request's true output length as its hint.
	Oracle bool
}

// ParseVariant parses "[label=]policy[:key=value...]". policy is a scoring policy or "oracle";
// key "estimate" (on|off, default on; off for oracle) switches the learned output-length
// estimate, any other key is a policy coefficient. The label defaults to the spec itself.
func ParseVariant(spec string) (Variant, error) {
	spec = strings.TrimSpace(spec)
	head, rest, _ := strings.Cut(spec, ":")
	v := Variant{Label: spec, Policy: head, OutputEstimate: true}
	if label, name, ok := strings.Cut(head, "="); ok {
		v.Label, v.Policy = label, name
	}
	if v.Label == "" || v.Policy == "" {
		return v, fmt.Errorf("%w: policy spec %q: want [label=]policy[:key=value...]", ErrInvalid, spec)
	}
	if v.Policy == PolicyOracle {
		v.Policy, v.Oracle, v.OutputEstimate = scoring.PolicyTokenLoad, true, false
	}
	if rest == "" {
		return v, nil
	}
	for _, kv := range strings.Split(rest, ":") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return v, fmt.Errorf("%w: policy spec %q: %q is not key=value", ErrInvalid, spec, kv)
		}
		if k == "estimate" {
			switch val {
			case "on":
				v.OutputEstimate = true
			case "off":
				v.OutputEstimate = false
			default:
				return v, fmt.Errorf("%w: policy spec %q: estimate=%q, want on or off", ErrInvalid, spec, val)
			}
			continue
		}
		f, err := strconv.ParseFloat(val, 64)
		if err != nil {
			return v, fmt.Errorf("%w: policy spec %q: %s=%q is not a number", ErrInvalid, spec, k, val)
		}
		if v.Params == nil {
			v.Params = map[string]float64{}
		}
		v.Params[k] = f
	}
	return v, nil
}

// ParseVariants parses a comma-separated list of specs; labels must be unique.
func ParseVariants(list string) ([]Variant, error) {
	var out []Variant
	seen := map[string]bool{}
	for _, s := range strings.Split(list, ",") {
		if strings.TrimSpace(s) == "" {
			continue
		}
		v, err := ParseVariant(s)
		if err != nil {
			return nil, err
		}
		if seen[v.Label] {
			return nil, fmt.Errorf("%w: policy %q listed twice", ErrInvalid, v.Label)
		}
		seen[v.Label] = true
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no policy given", ErrInvalid)
	}
	return out, nil
}
