package integration

import (
	"context"
	"testing"
	"time"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/integration/vllmpub"
)

// blockEvent is a vLLM BlockStored of n 16-token blocks with engine hashes
// first..first+n-1, whose tokens continue the sequence from block `first`.
func blockEvent(first, n int, parent any) map[string]any {
	hashes := make([]uint64, n)
	toks := make([]int, 16*n)
	for i := range hashes {
		hashes[i] = uint64(1_000_000 + first + i)
	}
	for i := range toks {
		toks[i] = 16*first + i
	}
	return map[string]any{"type": "BlockStored", "block_hashes": hashes, "parent_block_hash": parent,
		"token_ids": toks, "block_size": 16, "medium": "GPU"}
}

// engineHash is blockEvent's engine hash of block i.
func engineHash(i int) uint64 { return uint64(1_000_000 + i) }

// TestVLLMEventsThroughServer runs the Python stand-in vLLM engine against
// the real server: a replica registered with kv_events is subscribed to, its
// blocks show in PickReplica's overlap, a forced gap is replayed, an engine
// restart clears the replica, and a killed engine is reconnected to.
func TestVLLMEventsThroughServer(t *testing.T) {
	vllmpub.Require(t)
	addr := startServer(t)
	conn := grpcConn(t, addr)
	replicas, router := v1.NewReplicaServiceClient(conn), v1.NewRouterServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	pub, rep := vllmpub.FreeAddr(t), vllmpub.FreeAddr(t)
	args := []string{"--pub", pub, "--replay", rep, "--topic", "kv@engine-a@m"}
	py := vllmpub.Start(t, 1, args...)
	if _, err := replicas.RegisterReplica(ctx, &v1.RegisterReplicaRequest{Replica: &v1.Replica{
		Id: "engine-a", Model: "m", KvEvents: &v1.KVEventSource{Endpoint: pub, ReplayEndpoint: rep, Topic: "kv@"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := replicas.RegisterReplica(ctx, &v1.RegisterReplicaRequest{Replica: &v1.Replica{Id: "engine-b", Model: "m"}}); err != nil {
		t.Fatal(err)
	}
	list, err := replicas.ListReplicas(ctx, &v1.ListReplicasRequest{})
	if err != nil || list.GetReplicas()[0].GetReplica().GetKvEvents().GetEndpoint() != pub {
		t.Fatalf("ListReplicas does not show engine-a's event source: %v %v", list, err)
	}

	deviceBlocks := func() int64 {
		list, err := replicas.ListReplicas(ctx, &v1.ListReplicasRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range list.GetReplicas() {
			if st.GetReplica().GetId() == "engine-a" {
				return st.GetCache().GetDeviceBlocks()
			}
		}
		return -1
	}
	waitBlocks := func(what string, want int64) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for deviceBlocks() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: engine-a holds %d device blocks, want %d", what, deviceBlocks(), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// A PUB drops what it sends before the subscription is up; the first
	// batch the server sees may also be caught up through replay. Either way
	// the 4 blocks arrive.
	py.Send([]map[string]any{blockEvent(0, 4, nil)}, "map", "int", true)
	deadline := time.Now().Add(20 * time.Second)
	for deviceBlocks() != 4 {
		if time.Now().After(deadline) {
			t.Fatalf("first blocks never arrived (engine-a holds %d)", deviceBlocks())
		}
		py.Do(map[string]any{"op": "ping"})
		time.Sleep(50 * time.Millisecond)
		if deviceBlocks() != 4 {
			py.Send([]map[string]any{{"type": "BlockRemoved", "block_hashes": []uint64{999}, "medium": "GPU"}}, "array", "int", true)
		}
	}

	prompt := make([]uint32, 16*7+5)
	for i := range prompt {
		prompt[i] = uint32(i)
	}
	pick := func(id string) *v1.PickReplicaResponse {
		t.Helper()
		resp, err := router.PickReplica(ctx, &v1.PickReplicaRequest{RequestId: id, Model: "m", DryRun: true, Policy: "kv_affinity",
			Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: prompt}}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	if resp := pick("p1"); resp.GetReplicaId() != "engine-a" || resp.GetCachedTokens() != 64 {
		t.Fatalf("pick after 4 stored blocks = %s with %d cached tokens, want engine-a with 64", resp.GetReplicaId(), resp.GetCachedTokens())
	}

	// A batch the live stream never carries (a forced gap) is replayed from
	// the engine's ROUTER socket, so the chain stays whole.
	py.Send([]map[string]any{blockEvent(4, 2, engineHash(3))}, "array", "bin", false)
	py.Send([]map[string]any{blockEvent(6, 1, engineHash(5))}, "map", "int", true)
	waitBlocks("after the replayed gap", 7)
	if resp := pick("p2"); resp.GetCachedTokens() != 7*16 {
		t.Fatalf("pick after the gap: %d cached tokens, want %d", resp.GetCachedTokens(), 7*16)
	}

	// The engine restarts: its sequence resets and its old blocks are gone.
	py.Do(map[string]any{"op": "restart"})
	py.Send([]map[string]any{blockEvent(100, 1, nil)}, "map", "int", true)
	waitBlocks("after the engine restarted", 1)
	if resp := pick("p3"); resp.GetCachedTokens() != 0 {
		t.Fatalf("pick after the restart still sees %d cached tokens", resp.GetCachedTokens())
	}

	// The engine is killed and comes back on the same ports: the server
	// reconnects, sees the new process's sequence and rebuilds from it.
	py.Kill()
	py2 := vllmpub.Start(t, 2, args...)
	deadline = time.Now().Add(20 * time.Second)
	for deviceBlocks() != 3 {
		if time.Now().After(deadline) {
			t.Fatalf("no blocks from the restarted engine (engine-a holds %d)", deviceBlocks())
		}
		py2.Send([]map[string]any{{"type": "AllBlocksCleared"}, blockEvent(0, 3, nil)}, "map", "int", true)
		time.Sleep(100 * time.Millisecond)
	}
	if resp := pick("p4"); resp.GetCachedTokens() != 48 {
		t.Fatalf("pick after reconnecting: %d cached tokens, want 48", resp.GetCachedTokens())
	}

	// Deregistering the replica ends the subscription and drops its blocks.
	if _, err := replicas.DeregisterReplica(ctx, &v1.DeregisterReplicaRequest{ReplicaId: "engine-a"}); err != nil {
		t.Fatal(err)
	}
	if resp := pick("p5"); resp.GetReplicaId() != "engine-b" || resp.GetCachedTokens() != 0 {
		t.Fatalf("pick after deregistering engine-a = %s with %d cached", resp.GetReplicaId(), resp.GetCachedTokens())
	}
}
