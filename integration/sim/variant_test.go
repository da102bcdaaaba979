package sim

import (
	"errors"
	"reflect"
	"testing"
)

func TestParseVariant(t *testing.T) {
	for _, tc := range []struct {
		spec string
		want Variant
	}{
		{"token_load", Variant{Label: "token_load", Policy: "token_load", OutputEstimate: true}},
		{"token_load:estimate=off", Variant{Label: "token_load:estimate=off", Policy: "token_load"}},
		{"oracle", Variant{Label: "oracle", Policy: "token_load", Oracle: true}},
		{"tl2=token_load:prefill_load_scale=2:estimate=on", Variant{Label: "tl2", Policy: "token_load", OutputEstimate: true,
			Params: map[string]float64{"prefill_load_scale": 2}}},
	} {
		got, err := ParseVariant(tc.spec)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseVariant(%q) = %+v, %v; want %+v", tc.spec, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "=x", "token_load:estimate=maybe", "token_load:scale", "token_load:x=abc"} {
		if _, err := ParseVariant(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseVariant(%q): err = %v, want ErrInvalid", bad, err)
		}
	}
	if _, err := ParseVariants("a=token_load,a=kv_affinity"); !errors.Is(err, ErrInvalid) {
		t.Errorf("duplicate labels: err = %v", err)
	}
}

func TestUnknownPolicyOrParam(t *testing.T) {
	w := mustWorkload(t)
	for _, spec := range []string{"nope", "token_load:nope=1"} {
		v, _ := ParseVariant(spec)
		if _, err := Run(t.Context(), w, Config{Replicas: 1, Engine: tinyEngine}, v); err == nil {
			t.Errorf("%s: no error", spec)
		}
	}
	if _, err := Run(t.Context(), w, Config{Replicas: 1, Engine: EngineConfig{BlockSize: 16, NumBlocks: 1, MaxBatchedTokens: 32, MaxSeqs: 1}}, Variant{Policy: "random"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("cache below one step's budget: %v", err)
	}
	if _, err := Run(t.Context(), w, Config{Replicas: 1, Engine: tinyEngine, RouterBlockSize: 5}, Variant{Policy: "random"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("router block size not dividing the engine's: %v", err)
	}
}
