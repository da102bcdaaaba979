package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/gen/go/switchyard/v1/switchyardv1connect"
)

// TestOnePortServesEveryProtocol checks that one port answers gRPC health and
// reflection (what grpcurl needs) and plain JSON over HTTP/1.1 (what curl
// sends), and that client streams work over gRPC and Connect.
func TestOnePortServesEveryProtocol(t *testing.T) {
	addr := startServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn := grpcConn(t, addr)

	t.Run("grpc health", func(t *testing.T) {
		resp, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: switchyardv1connect.RouterServiceName})
		if err != nil || resp.GetStatus() != grpc_health_v1.HealthCheckResponse_SERVING {
			t.Fatalf("health = %v, %v; want SERVING", resp, err)
		}
	})

	t.Run("grpc reflection lists the services", func(t *testing.T) {
		stream, err := reflectionpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, s := range resp.GetListServicesResponse().GetService() {
			names = append(names, s.GetName())
		}
		for _, want := range []string{
			"switchyard.v1.RouterService", "switchyard.v1.KVEventService", "switchyard.v1.ReplicaService",
			"switchyard.v1.AuditService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
		} {
			if !slices.Contains(names, want) {
				t.Errorf("reflection lists %v, missing %s", names, want)
			}
		}
	})

	post := func(t *testing.T, path, body string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.ProtoMajor != 1 {
			t.Fatalf("served over HTTP/%d, want HTTP/1.1", resp.ProtoMajor)
		}
		raw, _ := io.ReadAll(resp.Body)
		var out map[string]any
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatalf("%s answered %q: %v", path, raw, err)
		}
		return resp.StatusCode, out
	}

	t.Run("curl-style JSON", func(t *testing.T) {
		code, out := post(t, "/grpc.health.v1.Health/Check", `{}`)
		if st, _ := out["status"].(string); code != 200 || (st != "SERVING" && st != "SERVING_STATUS_SERVING") {
			t.Fatalf("health over JSON = %d %v", code, out)
		}
		code, out = post(t, "/switchyard.v1.ReplicaService/RegisterReplica", `{"replica":{"id":"r1","model":"m"}}`)
		if code != 200 {
			t.Fatalf("register over JSON = %d %v", code, out)
		}
		code, out = post(t, "/switchyard.v1.RouterService/PickReplica", `{"requestId":"q1","model":"m","text":"hello world, a prompt long enough to make a block or two of approximate text"}`)
		if code != 200 || out["replicaId"] != "r1" {
			t.Fatalf("pick over JSON = %d %v", code, out)
		}
		code, out = post(t, "/switchyard.v1.RouterService/PickReplica", `{"model":"m","text":"x"}`)
		if code != 400 || out["code"] != "invalid_argument" || !strings.Contains(out["message"].(string), "request_id") {
			t.Fatalf("invalid pick over JSON = %d %v, want 400 invalid_argument naming request_id", code, out)
		}
	})

	t.Run("lifecycle client streams", func(t *testing.T) {
		events := func(id string) []*v1.LifecycleEvent {
			return []*v1.LifecycleEvent{{RequestId: id, Event: &v1.LifecycleEvent_Done{Done: &v1.RequestDone{}}}}
		}
		gs, err := v1.NewRouterServiceClient(conn).StreamLifecycle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3 {
			if err := gs.Send(&v1.StreamLifecycleRequest{Events: events(string(rune('a' + i)))}); err != nil {
				t.Fatal(err)
			}
		}
		gresp, err := gs.CloseAndRecv()
		if err != nil || gresp.GetCounts().GetUnknownRequest() != 3 {
			t.Fatalf("grpc stream = %v, %v; want 3 unknown requests counted", gresp, err)
		}
		cs, err := switchyardv1connect.NewRouterServiceClient(h2cClient(t), "http://"+addr).StreamLifecycle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			if err := cs.Send(&v1.StreamLifecycleRequest{Events: events(string(rune('x' + i)))}); err != nil {
				t.Fatal(err)
			}
		}
		cresp, err := cs.CloseAndReceive()
		if err != nil || cresp.GetCounts().GetUnknownRequest() != 2 {
			t.Fatalf("connect stream = %v, %v; want 2 unknown requests counted", cresp, err)
		}
		// An invalid event ends the stream with InvalidArgument naming it.
		bad, err := switchyardv1connect.NewRouterServiceClient(h2cClient(t), "http://"+addr).StreamLifecycle(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_ = bad.Send(&v1.StreamLifecycleRequest{Events: []*v1.LifecycleEvent{{RequestId: "z"}}})
		_, err = bad.CloseAndReceive()
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "events[0].event") {
			t.Fatalf("invalid stream event: err = %v, want InvalidArgument naming events[0].event", err)
		}
	})

	t.Run("large prompt over grpc", func(t *testing.T) {
		ids := make([]uint32, 1<<20)
		for i := range ids {
			ids[i] = uint32(i)
		}
		_, err := v1.NewRouterServiceClient(conn).PickReplica(ctx, &v1.PickReplicaRequest{
			RequestId: "big", Model: "m", DryRun: true, Prompt: &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}},
		})
		if err != nil {
			t.Fatalf("1M-token prompt: %v", err)
		}
		body, _ := json.Marshal(map[string]any{"requestId": "big2", "model": "m", "tokenIds": map[string]any{"ids": append(ids, 1)}})
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/switchyard.v1.RouterService/PickReplica", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 400 {
			t.Fatalf("over-limit prompt answered %d, want 400", resp.StatusCode)
		}
	})
}
