package sim_test

import (
	"context"
	"fmt"

	"github.com/switchyard-llm/switchyard/integration/sim"
	"github.com/switchyard-llm/switchyard/integration/workload"
)

// Simulate a few RL rollouts on two replicas under two policies and compare.
func ExampleRunAll() {
	c := workload.DefaultRLConfig()
	c.Steps, c.Turns, c.Concurrency = 1, 2, 8
	w, err := workload.RLRollouts(c)
	if err != nil {
		panic(err)
	}
	variants, err := sim.ParseVariants("token_load,oracle")
	if err != nil {
		panic(err)
	}
	cfg := sim.Config{Replicas: 2, Engine: sim.DefaultEngine(), Replay: workload.ReplayConfig{Concurrency: c.Concurrency}}
	rep, err := sim.RunAll(context.Background(), w, cfg, variants, 1)
	if err != nil {
		panic(err)
	}
	for _, r := range rep.Results {
		fmt.Printf("%s: %d/%d completed, oracle=%v\n", r.Label, r.Completed, r.Issued, r.Oracle)
	}
	// Output:
	// token_load: 16/16 completed, oracle=false
	// oracle: 16/16 completed, oracle=true
}

func ExampleParseVariant() {
	v, err := sim.ParseVariant("cheap=token_load:prefill_load_scale=0.5:estimate=off")
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Label, v.Policy, v.Params["prefill_load_scale"], v.OutputEstimate)
	// Output: cheap token_load 0.5 false
}
