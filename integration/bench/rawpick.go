package bench

import (
	"context"
	"fmt"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/gen/go/switchyard/v1/switchyardv1connect"
)

// Pre-marshalled picks. A PickReplicaRequest with an 8,192-token prompt is about 24 KB on the
// wire, and encoding it costs the client more than the router spends deciding; on a machine
// the client shares with the router that cost would be charged to the router's figures. So
// each prompt is encoded once, and a pick sends the concatenation of two encoded messages,
// the per-pick fields (request id, model, policy) and the prompt, which protobuf defines to
// decode as their merge: the router receives exactly the message the Go client would send.

// rawPick is a PickReplicaRequest in wire form: head then prompt.
type rawPick struct{ head, prompt []byte }

// encodedPrompts encodes every prompt of p as a PickReplicaRequest holding only the prompt.
func encodedPrompts(p *Prompts) ([][]byte, error) {
	out := make([][]byte, p.Len())
	for i := range out {
		b, err := proto.Marshal(&v1.PickReplicaRequest{Prompt: p.wireAt(i)})
		if err != nil {
			return nil, fmt.Errorf("bench: encoding prompt %d: %w", i, err)
		}
		out[i] = b
	}
	return out, nil
}

// rawGRPCCodec sends rawPick values as they are and handles every other message as the
// standard proto codec does. It is installed per call (grpc.ForceCodecV2), never globally.
type rawGRPCCodec struct{}

func (rawGRPCCodec) Name() string { return "proto" }

func (rawGRPCCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*rawPick); ok {
		return mem.BufferSlice{mem.SliceBuffer(r.head), mem.SliceBuffer(r.prompt)}, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("bench: cannot marshal %T", v)
	}
	b, err := proto.Marshal(m)
	return mem.BufferSlice{mem.SliceBuffer(b)}, err
}

func (rawGRPCCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("bench: cannot unmarshal into %T", v)
	}
	return proto.Unmarshal(data.Materialize(), m)
}

// rawConnectCodec is the Connect counterpart (Connect wants one contiguous body).
type rawConnectCodec struct{}

func (rawConnectCodec) Name() string { return "proto" }

func (rawConnectCodec) Marshal(v any) ([]byte, error) {
	if r, ok := v.(*rawPick); ok {
		return append(append(make([]byte, 0, len(r.head)+len(r.prompt)), r.head...), r.prompt...), nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("bench: cannot marshal %T", v)
	}
	return proto.Marshal(m)
}

func (rawConnectCodec) Unmarshal(b []byte, v any) error {
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("bench: cannot unmarshal into %T", v)
	}
	return proto.Unmarshal(b, m)
}

// rawPicker sends pre-marshalled picks; send does one call.
type rawPicker struct {
	prompts [][]byte
	send    func(context.Context, *rawPick) (*v1.PickReplicaResponse, error)
	kind    func(error) string
}

// pick encodes req's per-pick fields and sends them with prompt i's encoding.
func (r *rawPicker) pick(ctx context.Context, req *v1.PickReplicaRequest, i int) (*v1.PickReplicaResponse, error) {
	head, err := proto.Marshal(&v1.PickReplicaRequest{RequestId: req.RequestId, Model: req.Model, Policy: req.Policy, DryRun: req.DryRun})
	if err != nil {
		return nil, err
	}
	return r.send(ctx, &rawPick{head: head, prompt: r.prompts[i%len(r.prompts)]})
}

// grpcRawSender calls PickReplica on conn with the raw codec.
func grpcRawSender(conn grpc.ClientConnInterface) func(context.Context, *rawPick) (*v1.PickReplicaResponse, error) {
	method := v1.RouterService_PickReplica_FullMethodName
	return func(ctx context.Context, r *rawPick) (*v1.PickReplicaResponse, error) {
		resp := new(v1.PickReplicaResponse)
		if err := conn.Invoke(ctx, method, r, resp, grpc.ForceCodecV2(rawGRPCCodec{})); err != nil {
			return nil, err
		}
		return resp, nil
	}
}

// connectRawSender calls PickReplica with the Connect protocol and the raw codec.
func connectRawSender(hc *http.Client, addr string) func(context.Context, *rawPick) (*v1.PickReplicaResponse, error) {
	c := connect.NewClient[rawPick, v1.PickReplicaResponse](hc, "http://"+addr+switchyardv1connect.RouterServicePickReplicaProcedure,
		connect.WithCodec(rawConnectCodec{}))
	return func(ctx context.Context, r *rawPick) (*v1.PickReplicaResponse, error) {
		resp, err := c.CallUnary(ctx, connect.NewRequest(r))
		if err != nil {
			return nil, err
		}
		return resp.Msg, nil
	}
}
