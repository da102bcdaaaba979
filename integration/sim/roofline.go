package sim

import (
	"fmt"
	"time"
)

// WeightPoint is the weight-read time of a step computing Tokens tokens (a MoE reads more
// experts as the batch grows).
type WeightPoint struct {
	Tokens int
	MS     float64
}

// Roofline is a first-principles step-time model of one engine:
//
//	t_step = max(weights(T), T·FLOPsPerToken/(PeakFLOPS·MFU))                 T = tokens in the step
//	       + Σ_prefill 4·AttnDim·AttnLayers·c·(p + c/2) / (PeakFLOPS·MFU)    chunk c after p cached tokens
//	       + DecodeContext·KVBytesPerToken / (HBMBandwidth·BandwidthEfficiency)
//
// weights(T) interpolates Weights linearly (flat beyond the last point).
type Roofline struct {
	Label               string
	Weights             []WeightPoint
	FLOPsPerToken       float64 // 2 × active parameters
	AttnDim             int     // query heads × head dimension
	AttnLayers          int     // layers with full attention (sliding-window layers neglected)
	KVBytesPerToken     float64
	PeakFLOPS           float64
	MFU                 float64
	HBMBandwidth        float64 // bytes/s
	BandwidthEfficiency float64
}

// GPTOSS120BH200 is a gpt-oss-120b-class MoE (5.1B active parameters, 36 layers of which 18
// full attention, 64 heads × 64, BF16 KV 36,864 B/token) on one H200 (989 TFLOPS dense BF16
// at MFU 0.4, 4.8 TB/s HBM at 80%), with decode weight-read times 1.3 / 7.1 / 14.6 / 16.5 ms at
// 1 / 16 / 64 / ≥128 tokens.
func GPTOSS120BH200() Roofline {
	return Roofline{
		Label:         "roofline-gpt-oss-120b-h200",
		Weights:       []WeightPoint{{1, 1.3}, {16, 7.1}, {64, 14.6}, {128, 16.5}},
		FLOPsPerToken: 2 * 5.1e9, AttnDim: 64 * 64, AttnLayers: 18, KVBytesPerToken: 36864,
		PeakFLOPS: 989e12, MFU: 0.4, HBMBandwidth: 4.8e12, BandwidthEfficiency: 0.8,
	}
}

// GPTOSS120BH200Engine is the KV cache such a replica has: ≈ 60 GB of HBM left after weights
// and activations at 36,864 B/token ≈ 1.6M tokens, in 16-token blocks.
func GPTOSS120BH200Engine() EngineConfig {
	return EngineConfig{BlockSize: 16, NumBlocks: 102400, MaxBatchedTokens: 8192, MaxSeqs: 256, MaxModelLen: 131072}
}

// Name returns the model's label.
func (r Roofline) Name() string { return r.Label }

// Validate checks that every constant is usable.
func (r Roofline) Validate() error {
	if len(r.Weights) == 0 || r.FLOPsPerToken <= 0 || r.PeakFLOPS <= 0 || r.MFU <= 0 ||
		r.HBMBandwidth <= 0 || r.BandwidthEfficiency <= 0 || r.AttnDim < 0 || r.AttnLayers < 0 || r.KVBytesPerToken < 0 {
		return fmt.Errorf("%w: roofline %q: every constant must be positive", ErrInvalid, r.Label)
	}
	for i := 1; i < len(r.Weights); i++ {
		if r.Weights[i].Tokens <= r.Weights[i-1].Tokens {
			return fmt.Errorf("%w: roofline %q: weight points must have increasing tokens", ErrInvalid, r.Label)
		}
	}
	return nil
}

// StepTime implements StepModel.
func (r Roofline) StepTime(b *Batch) time.Duration {
	t := b.PrefillTokens + b.Decodes
	if t == 0 {
		return 0
	}
	flops := r.PeakFLOPS * r.MFU
	sec := max(r.weightMS(t)/1e3, float64(t)*r.FLOPsPerToken/flops)
	for _, c := range b.Prefills {
		ct := float64(c.Tokens)
		sec += 4 * float64(r.AttnDim) * float64(r.AttnLayers) * ct * (float64(c.Context) + ct/2) / flops
	}
	sec += float64(b.DecodeContext) * r.KVBytesPerToken / (r.HBMBandwidth * r.BandwidthEfficiency)
	return msDuration(sec * 1e3)
}

// weightMS interpolates the weight-read time of a step of t tokens.
func (r Roofline) weightMS(t int) float64 {
	w := r.Weights
	if t <= w[0].Tokens {
		return w[0].MS
	}
	for i := 1; i < len(w); i++ {
		if t <= w[i].Tokens {
			f := float64(t-w[i-1].Tokens) / float64(w[i].Tokens-w[i-1].Tokens)
			return w[i-1].MS + f*(w[i].MS-w[i-1].MS)
		}
	}
	return w[len(w)-1].MS
}
