package sim

import (
	"math"
	"testing"
	"time"
)

func TestPolynomialStepTime(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    Batch
		ms   float64 // hand-computed
	}{
		{"prefill 1000", Batch{PrefillTokens: 1000}, 0.4209989 + 15.18344 + 16.50142},
		{"prefill 8192", Batch{PrefillTokens: 8192}, 4.209989e-7*8192*8192 + 1.518344e-2*8192 + 16.50142},
		{"decode u=0.5", Batch{Decodes: 3, DecodeContext: 512, CapacityTokens: 1024}, -25.74*0.25 + 54.01*0.5 + 5.74},
		{"decode u capped at 1", Batch{Decodes: 9, DecodeContext: 5000, CapacityTokens: 1024}, -25.74 + 54.01 + 5.74},
		{"decode empty cache", Batch{Decodes: 1, DecodeContext: 0, CapacityTokens: 1024}, 5.74},
		{"mixed", Batch{PrefillTokens: 1000, Decodes: 1, DecodeContext: 256, CapacityTokens: 1024},
			0.4209989 + 15.18344 + 16.50142 + (-25.74*0.0625 + 54.01*0.25 + 5.74)},
		{"nothing", Batch{}, 0},
	} {
		got := Polynomial{}.StepTime(&tc.b)
		if want := time.Duration(math.Round(tc.ms * 1e6)); got != want {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}

func TestRooflineStepTime(t *testing.T) {
	r := GPTOSS120BH200()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	flops := 989e12 * 0.4
	for _, tc := range []struct {
		name string
		b    Batch
		ms   float64
	}{
		// batch of 1: weight reads (1.3 ms) dominate compute; KV read of 1,000 tokens × 36,864 B at 3.84 TB/s.
		{"decode 1", Batch{Decodes: 1, DecodeContext: 1000}, 1.3 + 1000*36864/3.84e12*1e3},
		// 40 tokens: weights interpolated between 16 (7.1 ms) and 64 (14.6 ms).
		{"decode 40", Batch{Decodes: 40, DecodeContext: 40000}, 7.1 + 24.0/48*7.5 + 40000*36864/3.84e12*1e3},
		{"decode 300", Batch{Decodes: 300}, 16.5},
		// 8,192-token chunk after 4,096 cached: compute-bound linear part plus attention.
		{"prefill chunk", Batch{PrefillTokens: 8192, Prefills: []Chunk{{Tokens: 8192, Context: 4096}}},
			(8192*2*5.1e9/flops + 4*4096*18*8192*(4096+4096)/flops) * 1e3},
	} {
		got := r.StepTime(&tc.b)
		if want := time.Duration(math.Round(tc.ms * 1e6)); math.Abs(float64(got-want)) > 1 {
			t.Errorf("%s: %v, want %v", tc.name, got, want)
		}
	}
}
