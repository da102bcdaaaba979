package scoring

import (
	"context"
	"testing"
)

// TestDecisionCarriesReplicaAddress checks that a decision names the chosen
// replica's address as registered when it was made, so the server answers
// without a second lookup.
func TestDecisionCarriesReplicaAddress(t *testing.T) {
	r, _ := newTestRouter(t, 0, Config{})
	ctx := context.Background()
	for _, rep := range []Replica{{ID: "a", Model: "m", Address: "10.0.0.1:8000"}, {ID: "b", Model: "m", Address: "10.0.0.2:8000"}} {
		if _, err := r.Register(ctx, rep); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]string{"a": "10.0.0.1:8000", "b": "10.0.0.2:8000"}
	for _, id := range []string{"q1", "q2", "q3"} {
		d := mustPick(t, r, PickRequest{RequestID: id, Prompt: Prompt{Text: id}})
		if d.ReplicaAddress != want[d.ReplicaID] {
			t.Fatalf("%s: chose %s with address %q, want %q", id, d.ReplicaID, d.ReplicaAddress, want[d.ReplicaID])
		}
	}
	if _, err := r.Register(ctx, Replica{ID: "a", Model: "m", Address: "10.0.0.9:8000"}); err != nil {
		t.Fatal(err)
	}
	d := mustPick(t, r, PickRequest{RequestID: "q4", Prompt: Prompt{Text: "q4"}, Candidates: []string{"a"}})
	if d.ReplicaAddress != "10.0.0.9:8000" {
		t.Fatalf("after re-registering: address %q", d.ReplicaAddress)
	}
}
