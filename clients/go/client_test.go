package switchyard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// realClient starts the real server and returns a client for it with two
// replicas of model "m" registered.
func realClient(t *testing.T) *switchyard.Client {
	t.Helper()
	addr, stop := realServer()
	t.Cleanup(stop)
	c := dialFast(t, addr)
	for _, id := range []string{"a", "b"} {
		if _, err := c.RegisterReplica(context.Background(), &v1.Replica{Id: id, Model: "m"}); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestClientErrors(t *testing.T) {
	c := realClient(t)
	ctx := context.Background()
	tests := []struct {
		name    string
		call    func() error
		want    error
		mention string
	}{
		{"pick without prompt", func() error {
			_, err := c.Pick(ctx, &v1.PickReplicaRequest{RequestId: "r", Model: "m"})
			return err
		}, switchyard.ErrInvalidArgument, "prompt"},
		{"pick for an unknown model", func() error {
			_, err := c.Pick(ctx, &v1.PickReplicaRequest{RequestId: "r", Model: "other", Prompt: switchyard.TextPrompt("x")})
			return err
		}, switchyard.ErrNotFound, "PickReplica"},
		{"pick with every replica draining", func() error {
			if _, err := c.RegisterReplica(ctx, &v1.Replica{Id: "d0", Model: "d", State: v1.ReplicaState_REPLICA_STATE_DRAINING}); err != nil {
				return err
			}
			_, err := c.Pick(ctx, &v1.PickReplicaRequest{RequestId: "r", Model: "d", Prompt: switchyard.TextPrompt("x")})
			return err
		}, switchyard.ErrUnavailable, "PickReplica"},
		{"deregister unknown", func() error { return c.DeregisterReplica(ctx, "nobody") }, switchyard.ErrNotFound, "DeregisterReplica"},
		{"drain unknown", func() error {
			_, err := c.SetReplicaState(ctx, "nobody", v1.ReplicaState_REPLICA_STATE_DRAINING)
			return err
		}, switchyard.ErrNotFound, "SetReplicaState"},
		{"move a replica to another model", func() error {
			_, err := c.RegisterReplica(ctx, &v1.Replica{Id: "a", Model: "other"})
			return err
		}, switchyard.ErrConflict, "RegisterReplica"},
		{"report an event without request id", func() error {
			_, err := c.ReportLifecycle(ctx, switchyard.FirstToken("", "a"))
			return err
		}, switchyard.ErrInvalidArgument, "request_id"},
		{"expired context", func() error {
			ctx, cancel := context.WithTimeout(ctx, -time.Second)
			defer cancel()
			_, err := c.ListReplicas(ctx, "")
			return err
		}, context.DeadlineExceeded, "ListReplicas"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) || !strings.Contains(err.Error(), tt.mention) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.want, tt.mention)
			}
		})
	}
}

func TestClientPickReportList(t *testing.T) {
	c := realClient(t)
	ctx := context.Background()
	pick, err := c.Pick(ctx, &v1.PickReplicaRequest{RequestId: "r1", Model: "m", Prompt: switchyard.TokenPrompt(make([]uint32, 64))})
	if err != nil {
		t.Fatal(err)
	}
	if len(pick.GetFallbacks()) != 1 || pick.GetFallbacks()[0] == pick.GetReplicaId() {
		t.Fatalf("pick = %v, want one fallback other than the choice", pick)
	}
	active := func() (n int64) {
		list, err := c.ListReplicas(ctx, "m")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range list {
			n += r.GetLoad().GetActiveRequests()
		}
		return n
	}
	if got := active(); got != 1 {
		t.Fatalf("active requests after pick = %d, want 1", got)
	}
	counts, err := c.ReportLifecycle(ctx, switchyard.Admitted("r1", pick.GetReplicaId(), 64, 0),
		switchyard.Done("r1", pick.GetReplicaId(), 8, v1.CompletionStatus_COMPLETION_STATUS_OK),
		switchyard.Done("never-picked", "", 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if counts.GetApplied() != 2 || counts.GetUnknownRequest() != 1 {
		t.Fatalf("counts = %v, want 2 applied, 1 unknown request", counts)
	}
	if got := active(); got != 0 {
		t.Fatalf("active requests after done = %d, want 0", got)
	}
}

func TestNewWrapsExistingConnection(t *testing.T) {
	addr, stop := realServer()
	t.Cleanup(stop)
	owner := dialFast(t, addr)
	if _, err := owner.RegisterReplica(context.Background(), &v1.Replica{Id: "a", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	// New over a connection the caller keeps: Close leaves it open.
	conn := dialConn(t, addr)
	c := switchyard.New(conn)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	list, err := switchyard.New(conn).ListReplicas(context.Background(), "m")
	if err != nil || len(list) != 1 {
		t.Fatalf("ListReplicas over the kept connection = %v, %v; want one replica", list, err)
	}
}
