package workload

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// RLConfig parameterises the async RL rollout workload of the source article: each training
// step runs RolloutsPerStep multi-turn rollouts; every turn generates OutputTokens that are
// appended, with the next turn's input, to the rollout's context; Stragglers rollouts per step
// generate StragglerOutputTokens on their last turn. Rollouts run closed loop, Concurrency at
// a time, in step order.
type RLConfig struct {
	Steps                 int           // training steps (rollout groups)
	RolloutsPerStep       int           // rollouts per step (article: 8)
	Turns                 int           // turns per rollout (article: 10)
	StartTokens           int           // first prompt length (article: 2K)
	SharedTokens          int           // leading tokens of the first prompt shared by every rollout (system prompt, tool schema); a multiple of BlockTokens
	TurnInputTokens       int           // new input appended before each later turn (environment / tool output)
	OutputTokens          int           // tokens generated per turn (article: 1K)
	Stragglers            int           // rollouts per step whose last turn is long (article: 2)
	StragglerOutputTokens int           // their last turn's output (article: 8K)
	Concurrency           int           // concurrent rollouts (article: 16)
	ToolTime              time.Duration // pause between a turn's completion and the next turn
	Seed                  uint64        // which rollouts of a step straggle
}

// DefaultRLConfig is the source article's setting; SharedTokens and TurnInputTokens, which it
// does not state, are 1024 and 512, and 16 steps are run.
func DefaultRLConfig() RLConfig {
	return RLConfig{
		Steps: 16, RolloutsPerStep: 8, Turns: 10, StartTokens: 2048, SharedTokens: 1024,
		TurnInputTokens: 512, OutputTokens: 1024, Stragglers: 2, StragglerOutputTokens: 8192,
		Concurrency: 16, Seed: 1,
	}
}

func (c RLConfig) validate() error {
	switch {
	case c.Steps <= 0, c.RolloutsPerStep <= 0, c.Turns <= 0:
		return fmt.Errorf("%w: rl: steps, rollouts per step and turns must be positive", ErrInvalid)
	case c.StartTokens <= 0, c.OutputTokens <= 0, c.StragglerOutputTokens <= 0:
		return fmt.Errorf("%w: rl: start, output and straggler output tokens must be positive", ErrInvalid)
	case c.SharedTokens < 0 || c.SharedTokens > c.StartTokens || c.SharedTokens%BlockTokens != 0:
		return fmt.Errorf("%w: rl: shared tokens %d must be a multiple of %d in [0, start tokens %d]", ErrInvalid, c.SharedTokens, BlockTokens, c.StartTokens)
	case c.TurnInputTokens < 0, c.ToolTime < 0:
		return fmt.Errorf("%w: rl: turn input tokens and tool time must not be negative", ErrInvalid)
	case c.Stragglers < 0 || c.Stragglers > c.RolloutsPerStep:
		return fmt.Errorf("%w: rl: stragglers %d outside [0, rollouts per step %d]", ErrInvalid, c.Stragglers, c.RolloutsPerStep)
	case c.Concurrency <= 0:
		return fmt.Errorf("%w: rl: concurrency must be positive", ErrInvalid)
	}
	return nil
}

// RLRollouts generates the workload: one session per rollout ("step<s>/rollout<r>"), all
// first turns at timestamp 0 in step order, later turns issued ToolTime after the previous
// turn completes.
func RLRollouts(c RLConfig) (*Workload, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	w := &Workload{
		Name: fmt.Sprintf("rl(steps=%d,rollouts=%d,turns=%d,start=%d,shared=%d,turn_input=%d,output=%d,stragglers=%d@%d,concurrency=%d)",
			c.Steps, c.RolloutsPerStep, c.Turns, c.StartTokens, c.SharedTokens, c.TurnInputTokens,
			c.OutputTokens, c.Stragglers, c.StragglerOutputTokens, c.Concurrency),
		Tokenization: "hash ids expanded (ExpandBlock)",
		Concurrency:  c.Concurrency,
		Dropped:      map[string]int{},
	}
	var src idSource
	var shared growingContext
	shared.extend(c.SharedTokens, &src)
	rnd := rand.New(rand.NewPCG(c.Seed, 0x726c))
	for s := range c.Steps {
		straggles := make([]bool, c.RolloutsPerStep)
		for _, k := range rnd.Perm(c.RolloutsPerStep)[:c.Stragglers] {
			straggles[k] = true
		}
		for r := range c.RolloutsPerStep {
			ctx := growingContext{ids: append([]uint64(nil), shared.ids...), length: shared.length}
			ctx.extend(c.StartTokens-c.SharedTokens, &src)
			id := fmt.Sprintf("step%d/rollout%d", s, r)
			for t := range c.Turns {
				out := c.OutputTokens
				if t == c.Turns-1 && straggles[r] {
					out = c.StragglerOutputTokens
				}
				req := ctx.request(out)
				req.SessionID = id
				if t > 0 {
					req.Delay, req.HasDelay = c.ToolTime, true
				}
				w.Requests = append(w.Requests, req)
				ctx.extend(out+c.TurnInputTokens, &src)
			}
		}
	}
	return w, w.Finalize()
}
