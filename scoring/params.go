package scoring

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// ParamSpec describes one tunable coefficient of a policy: its default (the peer's) and the
// closed range a value must lie in.
type ParamSpec struct {
	Name     string
	Default  float64
	Min, Max float64
	Doc      string
}

// paramSet is a policy's parameter values in Specs order; copied on WithParams.
type paramSet struct {
	specs []ParamSpec
	vals  []float64
}

func defaults(specs []ParamSpec) paramSet {
	v := make([]float64, len(specs))
	for i, s := range specs {
		v[i] = s.Default
	}
	return paramSet{specs: specs, vals: v}
}

// with validates overrides by name and range and returns a new set; ps is unchanged on error.
func (ps paramSet) with(policy string, over map[string]float64) (paramSet, error) {
	if len(over) == 0 {
		return ps, nil
	}
	out := paramSet{specs: ps.specs, vals: append([]float64(nil), ps.vals...)}
	names := make([]string, 0, len(over))
	for n := range over {
		names = append(names, n)
	}
	sort.Strings(names) // deterministic error for several bad names
	for _, n := range names {
		v := over[n]
		i := ps.find(n)
		if i < 0 {
			return ps, fmt.Errorf("%w: policy %s has no parameter %q (has: %s)", ErrInvalid, policy, n, ps.names())
		}
		s := ps.specs[i]
		if math.IsNaN(v) || v < s.Min || v > s.Max {
			return ps, fmt.Errorf("%w: policy %s parameter %s = %v outside [%v, %v]", ErrInvalid, policy, n, v, s.Min, s.Max)
		}
		out.vals[i] = v
	}
	return out, nil
}

func (ps paramSet) find(name string) int {
	for i, s := range ps.specs {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func (ps paramSet) names() string {
	if len(ps.specs) == 0 {
		return "none"
	}
	n := make([]string, len(ps.specs))
	for i, s := range ps.specs {
		n[i] = s.Name
	}
	return strings.Join(n, ", ")
}

// asMap returns the values by name.
func (ps paramSet) asMap() map[string]float64 {
	m := make(map[string]float64, len(ps.specs))
	for i, s := range ps.specs {
		m[s.Name] = ps.vals[i]
	}
	return m
}

// configured is embedded by policies with coefficients: it holds their values and answers
// Specs and Params for them.
type configured struct{ ps paramSet }

// Specs lists the policy's parameters with defaults and ranges.
func (c configured) Specs() []ParamSpec { return c.ps.specs }

// Params returns the effective parameter values by name.
func (c configured) Params() map[string]float64 { return c.ps.asMap() }
