package cli

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// generators holds the generator flags.
type generators struct {
	rl       workload.RLConfig
	sessions workload.MultiTurnConfig
}

func (g *generators) register(fs *flag.FlagSet) {
	g.rl = workload.DefaultRLConfig()
	r := &g.rl
	fs.IntVar(&r.Steps, "rl-steps", r.Steps, "rl: training steps (rollout groups)")
	fs.IntVar(&r.RolloutsPerStep, "rl-rollouts", r.RolloutsPerStep, "rl: rollouts per step")
	fs.IntVar(&r.Turns, "rl-turns", r.Turns, "rl: turns per rollout")
	fs.IntVar(&r.StartTokens, "rl-start", r.StartTokens, "rl: first prompt tokens")
	fs.IntVar(&r.SharedTokens, "rl-shared", r.SharedTokens, "rl: leading tokens of the first prompt shared by all rollouts (multiple of 512)")
	fs.IntVar(&r.TurnInputTokens, "rl-turn-input", r.TurnInputTokens, "rl: new input tokens appended before each later turn")
	fs.IntVar(&r.OutputTokens, "rl-output", r.OutputTokens, "rl: output tokens per turn")
	fs.IntVar(&r.Stragglers, "rl-stragglers", r.Stragglers, "rl: stragglers per step")
	fs.IntVar(&r.StragglerOutputTokens, "rl-straggler-output", r.StragglerOutputTokens, "rl: stragglers' last-turn output tokens")
	fs.IntVar(&r.Concurrency, "rl-concurrency", r.Concurrency, "rl: concurrent rollouts")
	fs.DurationVar(&r.ToolTime, "rl-tool-time", r.ToolTime, "rl: pause between a turn's completion and the next turn")
	fs.Uint64Var(&r.Seed, "rl-seed", r.Seed, "rl: seed choosing the stragglers")

	g.sessions = workload.DefaultMultiTurnConfig()
	m := &g.sessions
	fs.IntVar(&m.Sessions, "sessions-n", m.Sessions, "sessions: number of sessions")
	fs.Float64Var(&m.Rate, "sessions-rate", m.Rate, "sessions: Poisson session arrivals per second (0 = closed loop)")
	fs.IntVar(&m.Concurrency, "sessions-concurrency", m.Concurrency, "sessions: concurrent sessions when rate is 0")
	fs.IntVar(&m.SystemTokens, "sessions-system", m.SystemTokens, "sessions: shared system prompt tokens (multiple of 512)")
	fs.Float64Var(&m.TurnsMean, "sessions-turns", m.TurnsMean, "sessions: mean turns per session")
	fs.IntVar(&m.MaxTurns, "sessions-max-turns", m.MaxTurns, "sessions: most turns per session")
	fs.Float64Var(&m.FirstInputMean, "sessions-first-input", m.FirstInputMean, "sessions: mean new tokens of a first prompt")
	fs.Float64Var(&m.InputMean, "sessions-input", m.InputMean, "sessions: mean new input tokens of a later turn")
	fs.Float64Var(&m.OutputMean, "sessions-output", m.OutputMean, "sessions: mean output tokens per turn")
	fs.Float64Var(&m.Sigma, "sessions-sigma", m.Sigma, "sessions: log-normal spread of sizes")
	fs.DurationVar(&m.ThinkMean, "sessions-think", m.ThinkMean, "sessions: mean think time between turns")
	fs.IntVar(&m.MaxContext, "sessions-max-context", m.MaxContext, "sessions: most context tokens per session")
	fs.Uint64Var(&m.Seed, "sessions-seed", m.Seed, "sessions: generator seed")
}

// load reads or generates the workload named by spec: "rl", "sessions", or
// [mooncake:|agents:|azure:]PATH (a .csv is Azure, a directory agent sessions, anything else
// Mooncake JSONL).
func (g *generators) load(spec string) (*workload.Workload, error) {
	switch spec {
	case "":
		return nil, fmt.Errorf("%w: --workload is required", errUsage)
	case "rl":
		return workload.RLRollouts(g.rl)
	case "sessions":
		return workload.MultiTurnSessions(g.sessions)
	}
	kind, path, ok := strings.Cut(spec, ":")
	if !ok {
		kind, path = guessKind(spec), spec
	}
	switch kind {
	case "agents":
		return workload.ReadAgentDir(path)
	case "mooncake", "azure":
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if kind == "azure" {
			return workload.ReadAzureCSV(f, filepath.Base(path))
		}
		return workload.ReadMooncake(f, filepath.Base(path))
	}
	return nil, fmt.Errorf("%w: workload kind %q (want rl, sessions, mooncake:, agents: or azure:)", errUsage, kind)
}

func guessKind(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return "agents"
	}
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return "azure"
	}
	return "mooncake"
}
