package scoring

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/switchyard-llm/switchyard/index"
)

// storeBlocks indexes n confirmed device blocks of toks on replica (block size 16).
func storeBlocks(t *testing.T, r *Router, replica string, toks []uint32) {
	t.Helper()
	n := len(toks) / 16
	hashes := make([]uint64, n)
	for i := range hashes {
		hashes[i] = uint64(1000 + i)
	}
	if err := r.ApplyStored(replica, 0, index.Stored{BlockHashes: hashes, TokenIDs: toks[:n*16], BlockSize: 16}); err != nil {
		t.Fatal(err)
	}
}

func TestQuarantineTakesReplicaOutAndRestoreStartsClean(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRouter(t, 2, Config{BlockSize: 16})
	toks := tokens(1, 0, 64)
	storeBlocks(t, r, "r0", toks)
	pick := func(id string, cands ...string) (*Decision, error) {
		return r.Pick(ctx, PickRequest{RequestID: id, Model: "m", Prompt: Prompt{Tokens: toks}, Candidates: cands})
	}
	d, err := pick("before", "r0")
	if err != nil || d.ReplicaID != "r0" || d.CachedTokens != 64 {
		t.Fatalf("pick before quarantine: %+v, %v", d, err)
	}

	freed, err := r.Quarantine(ctx, "r0")
	if err != nil || freed != 1 {
		t.Fatalf("Quarantine = %d, %v; want the one reserved request freed", freed, err)
	}
	if q, _ := r.Quarantined("r0"); !q {
		t.Fatal("r0 not reported quarantined")
	}
	st, _ := r.Replica("r0")
	if st.CachedBlocks != ([index.NumTiers]int{}) || st.Load.ActiveRequests != 0 {
		t.Errorf("quarantined r0 keeps blocks %v and %d requests", st.CachedBlocks, st.Load.ActiveRequests)
	}
	if st.State != StateReady {
		t.Errorf("registered state changed to %s; quarantine must not overwrite it", st.State)
	}
	for i := range 8 {
		d, err := pick(fmt.Sprintf("during-%d", i))
		if err != nil || d.ReplicaID != "r1" {
			t.Fatalf("pick during quarantine went to %v (%v), want r1", d, err)
		}
	}
	d, err = pick("listed", "r0", "r1")
	if err != nil || d.Candidates[0].ReplicaID != "r0" || d.Candidates[0].Ineligible != IneligibleUnhealthy {
		t.Fatalf("quarantined r0 among the candidates: %+v, %v; want ineligible %q", d.Candidates, err, IneligibleUnhealthy)
	}
	if _, err := pick("only-r0", "r0"); !errors.Is(err, ErrNoReplica) {
		t.Errorf("pick restricted to the quarantined replica = %v, want ErrNoReplica", err)
	}
	// Events still arriving from it are applied, but the return clears them: it starts clean.
	storeBlocks(t, r, "r0", toks)
	ok, err := r.Restore(ctx, "r0")
	if err != nil || !ok {
		t.Fatalf("Restore = %v, %v", ok, err)
	}
	if ok, _ := r.Restore(ctx, "r0"); ok {
		t.Error("second Restore reported a change")
	}
	st, _ = r.Replica("r0")
	if st.CachedBlocks != ([index.NumTiers]int{}) {
		t.Errorf("restored r0 starts with blocks %v, want none", st.CachedBlocks)
	}
	if d, err := pick("after", "r0"); err != nil || d.ReplicaID != "r0" {
		t.Fatalf("pick after restore: %v, %v", d, err)
	}
}

func TestSetStateKeepsQuarantine(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRouter(t, 2, Config{})
	if _, err := r.Quarantine(ctx, "r0"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetState(ctx, "r0", StateReady); err != nil {
		t.Fatal(err)
	}
	if q, _ := r.Quarantined("r0"); !q {
		t.Fatal("SetState lifted the quarantine")
	}
	if err := r.SetState(ctx, "r0", StateDraining); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, "r0"); err != nil {
		t.Fatal(err)
	}
	if st, _ := r.Replica("r0"); st.State != StateDraining {
		t.Fatalf("restored replica is %s, want the draining state set while quarantined", st.State)
	}
	d, err := r.Pick(ctx, PickRequest{RequestID: "x", Model: "m", Prompt: Prompt{Tokens: tokens(2, 0, 32)}})
	if err != nil || d.ReplicaID != "r1" {
		t.Fatalf("restored draining replica took a pick: %v, %v", d, err)
	}
}

func TestQuarantineKeepsDrainingState(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRouter(t, 2, Config{})
	if err := r.SetState(ctx, "r0", StateDraining); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Quarantine(ctx, "r0"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Restore(ctx, "r0"); err != nil {
		t.Fatal(err)
	}
	d, err := r.Pick(ctx, PickRequest{RequestID: "x", Model: "m", Prompt: Prompt{Tokens: tokens(2, 0, 32)}})
	if err != nil || d.ReplicaID != "r1" {
		t.Fatalf("restored draining replica took a pick: %v, %v", d, err)
	}
}

func TestLivenessUnknownReplica(t *testing.T) {
	ctx := context.Background()
	r, _ := newTestRouter(t, 1, Config{})
	if _, err := r.Quarantine(ctx, "nope"); !errors.Is(err, ErrUnknownReplica) {
		t.Errorf("Quarantine(nope) = %v", err)
	}
	if _, err := r.Restore(ctx, "nope"); !errors.Is(err, ErrUnknownReplica) {
		t.Errorf("Restore(nope) = %v", err)
	}
	if _, err := r.Quarantined("nope"); !errors.Is(err, ErrUnknownReplica) {
		t.Errorf("Quarantined(nope) = %v", err)
	}
}
