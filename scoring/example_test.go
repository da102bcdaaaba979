package scoring_test

import (
	"context"
	"fmt"

	"github.com/switchyard-llm/switchyard/scoring"
)

// A data plane registers replicas, asks for a replica per request, and reports the request's
// lifecycle so that the token load stays current.
func Example() {
	ctx := context.Background()
	r, err := scoring.NewRouter(scoring.Config{Seed: 1})
	if err != nil {
		panic(err)
	}
	defer r.Close()
	for _, id := range []string{"a", "b"} {
		if _, err := r.Register(ctx, scoring.Replica{ID: id, Model: "llama"}); err != nil {
			panic(err)
		}
	}
	prompt := make([]uint32, 64)
	d, err := r.Pick(ctx, scoring.PickRequest{RequestID: "req-1", Model: "llama", Prompt: scoring.Prompt{Tokens: prompt}})
	if err != nil {
		panic(err)
	}
	st, _ := r.Replica(d.ReplicaID)
	fmt.Println(d.Policy, "booked:", st.Load.ActiveRequests, "request,", st.Load.PrefillTokens, "prefill tokens")

	r.ApplyLifecycle(ctx, []scoring.LifecycleEvent{
		{RequestID: "req-1", Kind: scoring.EventFirstToken},
		{RequestID: "req-1", Kind: scoring.EventDone, OutputTokens: 10, Status: "ok"},
	})
	st, _ = r.Replica(d.ReplicaID)
	fmt.Println("after done:", st.Load.ActiveRequests, "requests")
	// Output:
	// token_load booked: 1 request, 64 prefill tokens
	// after done: 0 requests
}

// ExampleRouter_Pick_dryRun scores a prompt with another policy and overridden coefficients
// without booking anything.
func ExampleRouter_Pick_dryRun() {
	ctx := context.Background()
	r, _ := scoring.NewRouter(scoring.Config{Seed: 1})
	_, _ = r.Register(ctx, scoring.Replica{ID: "a", Model: "llama"})
	_, _ = r.Register(ctx, scoring.Replica{ID: "b", Model: "llama", State: scoring.StateDraining})
	d, err := r.Pick(ctx, scoring.PickRequest{
		Model: "llama", Prompt: scoring.Prompt{Text: "You are a helpful assistant."},
		Policy: scoring.PolicyTokenLoad, Params: map[string]float64{"active_request_weight": 2},
		DryRun: true,
	})
	if err != nil {
		panic(err)
	}
	for _, c := range d.Candidates {
		fmt.Printf("%s rank=%d ineligible=%q\n", c.ReplicaID, c.Rank, c.Ineligible)
	}
	// Output:
	// a rank=1 ineligible=""
	// b rank=0 ineligible="draining"
}

// ExampleNewPolicy lists a policy's coefficients with their defaults.
func ExampleNewPolicy() {
	p, _ := scoring.NewPolicy(scoring.PolicyCacheAware, map[string]float64{"cache_threshold": 0.5})
	for _, s := range p.Specs() {
		fmt.Printf("%s default=%v now=%v\n", s.Name, s.Default, p.Params()[s.Name])
	}
	// Output:
	// cache_threshold default=0.3 now=0.5
	// balance_abs_threshold default=64 now=64
	// balance_rel_threshold default=1.5 now=1.5
}
