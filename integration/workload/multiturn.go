package workload

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// MultiTurnConfig parameterises heterogeneous multi-turn sessions in the spirit of coding
// agents: a shared system prompt, sessions whose length and per-turn sizes vary widely
// (log-normal, with a per-session scale), heavy reuse within a session.
type MultiTurnConfig struct {
	Sessions       int           // number of sessions
	Rate           float64       // session arrivals per second (Poisson); 0 = all at t=0 (replay closed loop)
	Concurrency    int           // suggested closed-loop concurrency when Rate is 0
	SystemTokens   int           // shared system prompt; a multiple of BlockTokens
	TurnsMean      float64       // mean turns per session
	MaxTurns       int           // cap on turns per session
	FirstInputMean float64       // mean new tokens of a session's first prompt after the system prompt
	InputMean      float64       // mean new input tokens of a later turn (tool results, user text)
	OutputMean     float64       // mean output tokens per turn
	Sigma          float64       // log-normal spread of per-turn sizes and of the per-session scale
	ThinkMean      time.Duration // mean (exponential) pause between a turn's completion and the next
	MaxContext     int           // a session ends before its context would exceed this
	Seed           uint64
}

// DefaultMultiTurnConfig returns 200 sessions of a coding-agent-like shape, closed loop at
// concurrency 16.
func DefaultMultiTurnConfig() MultiTurnConfig {
	return MultiTurnConfig{
		Sessions: 200, Concurrency: 16, SystemTokens: 2048, TurnsMean: 8, MaxTurns: 64,
		FirstInputMean: 1500, InputMean: 600, OutputMean: 400, Sigma: 1.0,
		ThinkMean: time.Second, MaxContext: 131072, Seed: 1,
	}
}

func (c MultiTurnConfig) validate() error {
	switch {
	case c.Sessions <= 0, c.TurnsMean < 1, c.MaxTurns <= 0:
		return fmt.Errorf("%w: sessions: sessions and max turns must be positive and turns mean ≥ 1", ErrInvalid)
	case c.Rate < 0 || math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0):
		return fmt.Errorf("%w: sessions: rate %v must be a non-negative number", ErrInvalid, c.Rate)
	case c.Rate == 0 && c.Concurrency <= 0:
		return fmt.Errorf("%w: sessions: rate 0 needs a positive concurrency", ErrInvalid)
	case c.SystemTokens < 0 || c.SystemTokens%BlockTokens != 0:
		return fmt.Errorf("%w: sessions: system tokens %d must be a non-negative multiple of %d", ErrInvalid, c.SystemTokens, BlockTokens)
	case c.FirstInputMean < 1, c.InputMean < 1, c.OutputMean < 1:
		return fmt.Errorf("%w: sessions: input and output means must be ≥ 1", ErrInvalid)
	case c.Sigma < 0, c.ThinkMean < 0:
		return fmt.Errorf("%w: sessions: sigma and think time must not be negative", ErrInvalid)
	case c.MaxContext <= c.SystemTokens:
		return fmt.Errorf("%w: sessions: max context %d must exceed the system prompt", ErrInvalid, c.MaxContext)
	}
	return nil
}

// MultiTurnSessions generates the workload: session "s<k>" arrives at its Poisson timestamp
// (or 0), each later turn is issued an exponential think time after the previous completes.
func MultiTurnSessions(c MultiTurnConfig) (*Workload, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	w := &Workload{
		Name: fmt.Sprintf("sessions(n=%d,rate=%g,system=%d,turns=%g,first=%g,input=%g,output=%g,sigma=%g,think=%v)",
			c.Sessions, c.Rate, c.SystemTokens, c.TurnsMean, c.FirstInputMean, c.InputMean, c.OutputMean, c.Sigma, c.ThinkMean),
		Tokenization: "hash ids expanded (ExpandBlock)",
		Dropped:      map[string]int{},
	}
	if c.Rate == 0 {
		w.Concurrency = c.Concurrency
	}
	rnd := rand.New(rand.NewPCG(c.Seed, 0x6d74))
	var src idSource
	var system growingContext
	system.extend(c.SystemTokens, &src)
	var at time.Duration
	for k := range c.Sessions {
		if c.Rate > 0 {
			at += time.Duration(rnd.ExpFloat64() / c.Rate * float64(time.Second))
		}
		scale := logNormal(rnd, 1, c.Sigma)
		turns := min(c.MaxTurns, 1+int(logNormal(rnd, c.TurnsMean-1+0.5, c.Sigma)))
		ctx := growingContext{ids: append([]uint64(nil), system.ids...), length: system.length}
		input := sizeOf(rnd, c.FirstInputMean*scale, c.Sigma)
		for t := range turns {
			out := sizeOf(rnd, c.OutputMean*scale, c.Sigma)
			if ctx.length+input+out > c.MaxContext {
				break
			}
			ctx.extend(input, &src)
			req := ctx.request(out)
			req.SessionID, req.Timestamp = fmt.Sprintf("s%d", k), at
			if t > 0 {
				req.Delay = time.Duration(rnd.ExpFloat64() * float64(c.ThinkMean))
				req.HasDelay = true
			}
			w.Requests = append(w.Requests, req)
			ctx.extend(out, &src)
			input = sizeOf(rnd, c.InputMean*scale, c.Sigma)
		}
	}
	return w, w.Finalize()
}

// logNormal draws a log-normal value with the given mean and log-space spread sigma.
func logNormal(rnd *rand.Rand, mean, sigma float64) float64 {
	return mean * math.Exp(sigma*rnd.NormFloat64()-sigma*sigma/2)
}

// sizeOf draws a token count ≥ 1 around mean.
func sizeOf(rnd *rand.Rand, mean, sigma float64) int {
	return max(1, int(math.Round(logNormal(rnd, mean, sigma))))
}
