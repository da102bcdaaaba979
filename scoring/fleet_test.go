package scoring

import (
	"context"
	"errors"
	"testing"
)

func TestRegisterValidation(t *testing.T) {
	r, _ := newTestRouter(t, 0, Config{})
	ctx := context.Background()
	tests := []struct {
		name string
		rep  Replica
		want error
	}{
		{"empty id", Replica{Model: "m"}, ErrInvalid},
		{"empty model", Replica{ID: "a"}, ErrInvalid},
		{"negative kv blocks", Replica{ID: "a", Model: "m", KVBlocks: -1}, ErrInvalid},
		{"negative batch", Replica{ID: "a", Model: "m", MaxBatchedTokens: -1}, ErrInvalid},
		{"bad state", Replica{ID: "a", Model: "m", State: 9}, ErrInvalid},
		{"ok", Replica{ID: "a", Model: "m", KVBlocks: 100}, nil},
		{"update same model", Replica{ID: "a", Model: "m", Address: "x:1"}, nil},
		{"model change", Replica{ID: "a", Model: "other"}, ErrConflict},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Register(ctx, tc.rep)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	st, err := r.Replica("a")
	if err != nil {
		t.Fatal(err)
	}
	if st.Address != "x:1" || st.State != StateReady || st.Model != "m" {
		t.Fatalf("after update: %+v", st.Replica)
	}
	if got := len(r.Replicas("")); got != 1 {
		t.Fatalf("rejected registrations left state: %d replicas", got)
	}
}

func TestFleetLifecycle(t *testing.T) {
	r, _ := newTestRouter(t, 0, Config{})
	ctx := context.Background()
	labels := map[string]string{"zone": "a"}
	for _, rep := range []Replica{{ID: "b", Model: "m", Labels: labels}, {ID: "a", Model: "m"}, {ID: "c", Model: "n"}} {
		if _, err := r.Register(ctx, rep); err != nil {
			t.Fatal(err)
		}
	}
	labels["zone"] = "mutated"
	if st, _ := r.Replica("b"); st.Labels["zone"] != "a" {
		t.Fatalf("labels not copied on register: %v", st.Labels)
	}
	if got := ids(r.Replicas("")); got != "a,b,c" {
		t.Fatalf("Replicas(all) = %s", got)
	}
	if got := ids(r.Replicas("m")); got != "a,b" {
		t.Fatalf("Replicas(m) = %s", got)
	}
	if err := r.SetState(ctx, "a", StateDraining); err != nil {
		t.Fatal(err)
	}
	d := mustPick(t, r, PickRequest{RequestID: "q", Prompt: Prompt{Text: "hello"}})
	if d.ReplicaID != "b" {
		t.Fatalf("picked %s, want the only ready replica b", d.ReplicaID)
	}
	if err := r.SetState(ctx, "zz", StateReady); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("SetState unknown: %v", err)
	}
	if err := r.SetState(ctx, "a", 0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("SetState 0: %v", err)
	}
	if err := r.Deregister(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if err := r.Deregister(ctx, "b"); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("second Deregister: %v", err)
	}
	if l := totalLoad(r); l != (Load{}) {
		t.Fatalf("deregister left load %+v", l)
	}
	if c := r.Counters(); c.Deregistered != 1 {
		t.Fatalf("freed by deregister: %d, want 1", c.Deregistered)
	}
	if res := r.ApplyLifecycle(ctx, []LifecycleEvent{event("q", EventDone)}); res.UnknownRequest != 1 {
		t.Fatalf("event for a request freed by deregister: %+v", res)
	}
	if _, err := r.Pick(ctx, PickRequest{RequestID: "q2", Model: "m", Prompt: Prompt{Text: "x"}}); !errors.Is(err, ErrNoReplica) {
		t.Fatalf("only draining replica left: err = %v", err)
	}
	if err := r.Deregister(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Pick(ctx, PickRequest{RequestID: "q3", Model: "m", Prompt: Prompt{Text: "x"}}); !errors.Is(err, ErrUnknownModel) {
		t.Fatalf("no replicas left: err = %v", err)
	}
	if _, err := r.Replica("a"); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("Replica after deregister: %v", err)
	}
}

func TestKVEventsResolveReplica(t *testing.T) {
	r, _ := newTestRouter(t, 1, Config{})
	if err := r.ClearKV("nope", 0); !errors.Is(err, ErrUnknownReplica) {
		t.Fatalf("ClearKV unknown: %v", err)
	}
	if err := r.ClearKV("r0", -1); !errors.Is(err, ErrInvalid) {
		t.Fatalf("ClearKV negative rank: %v", err)
	}
	if err := r.ClearKV("r0", 0); err != nil {
		t.Fatalf("ClearKV: %v", err)
	}
	if r.Index("m") == nil || r.Index("zz") != nil {
		t.Fatal("Index lookup by model")
	}
}

func ids(sts []ReplicaStatus) string {
	s := ""
	for i, st := range sts {
		if i > 0 {
			s += ","
		}
		s += st.ID
	}
	return s
}
