package switchyard_test

import (
	"context"
	"fmt"
	"log"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// A data plane picks a replica per request and streams the request's
// lifecycle through a Reporter.
func Example() {
	addr, stop := realServer()
	defer stop()
	ctx := context.Background()

	c, err := switchyard.Dial(addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if _, err := c.RegisterReplica(ctx, &v1.Replica{Id: "vllm-0", Model: "llama"}); err != nil {
		log.Fatal(err)
	}
	rep, err := c.NewReporter()
	if err != nil {
		log.Fatal(err)
	}

	pick, err := c.Pick(ctx, &v1.PickReplicaRequest{
		RequestId: "req-1", Model: "llama", Prompt: switchyard.TokenPrompt(make([]uint32, 100)),
	})
	if err != nil {
		log.Fatal(err)
	}
	_ = rep.Report(switchyard.Admitted("req-1", pick.GetReplicaId(), 0, 0))
	_ = rep.Report(switchyard.FirstToken("req-1", pick.GetReplicaId()))
	_ = rep.Report(switchyard.Done("req-1", pick.GetReplicaId(), 20, v1.CompletionStatus_COMPLETION_STATUS_OK))
	if err := rep.Close(ctx); err != nil {
		log.Fatal(err)
	}

	st := rep.Stats()
	fmt.Println("chose", pick.GetReplicaId(), "for", pick.GetPromptTokens(), "tokens")
	fmt.Println("delivered", st.Delivered, "applied", st.Applied, "dropped", st.Dropped)
	// Output:
	// chose vllm-0 for 100 tokens
	// delivered 3 applied 3 dropped 0
}

// Pick returns the chosen replica and ranked fallbacks; draining replicas
// are left out.
func ExampleClient_Pick() {
	c, stop := exampleFleet("m", "a", "b", "c")
	defer stop()
	ctx := context.Background()
	if _, err := c.SetReplicaState(ctx, "c", v1.ReplicaState_REPLICA_STATE_DRAINING); err != nil {
		log.Fatal(err)
	}

	resp, err := c.Pick(ctx, &v1.PickReplicaRequest{
		RequestId: "r1", Model: "m", Prompt: switchyard.TextPrompt("hello"), DryRun: true,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("replicas ranked:", 1+len(resp.GetFallbacks()))
	for _, cand := range resp.GetCandidates() {
		if cand.GetIneligibleReason() != "" {
			fmt.Println(cand.GetReplicaId(), "is", cand.GetIneligibleReason())
		}
	}
	// Output:
	// replicas ranked: 2
	// c is draining
}

// An engine sidecar publishes the engine's KV events; the router's index
// then knows the replica caches the prompt's prefix.
func ExampleKVPublisher() {
	c, stop := exampleFleet("llama", "vllm-0")
	defer stop()
	ctx := context.Background()

	pub, err := c.NewKVPublisher("vllm-0")
	if err != nil {
		log.Fatal(err)
	}
	prompt := make([]uint32, 32) // two 16-token blocks
	for i := range prompt {
		prompt[i] = uint32(i)
	}
	err = pub.Publish(ctx, switchyard.StoredEvent(&v1.BlockStored{BlockHashes: []uint64{101, 102}, TokenIds: prompt}))
	if err != nil {
		log.Fatal(err)
	}
	totals, err := pub.Close(ctx)
	if err != nil {
		log.Fatal(err)
	}

	pick, err := c.Pick(ctx, &v1.PickReplicaRequest{RequestId: "r1", Model: "llama", Prompt: switchyard.TokenPrompt(prompt), DryRun: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("events applied:", totals.GetEventsApplied(), "cached tokens:", pick.GetCachedTokens())
	// Output: events applied: 1 cached tokens: 32
}

// exampleFleet starts a server, dials it and registers replicas of model;
// stop closes both.
func exampleFleet(model string, replicas ...string) (c *switchyard.Client, stop func()) {
	addr, stopServer := realServer()
	c, err := switchyard.Dial(addr)
	if err != nil {
		log.Fatal(err)
	}
	for _, id := range replicas {
		if _, err := c.RegisterReplica(context.Background(), &v1.Replica{Id: id, Model: model}); err != nil {
			log.Fatal(err)
		}
	}
	return c, func() { c.Close(); stopServer() }
}
