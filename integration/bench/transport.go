package bench

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/gen/go/switchyard/v1/switchyardv1connect"
)

// picker sends one PickReplica for req with prompt number prompt; kind names an error for the
// report.
type picker struct {
	pick func(ctx context.Context, req *v1.PickReplicaRequest, prompt int) (*v1.PickReplicaResponse, error)
	kind func(error) string
}

func grpcKind(err error) string {
	var e *switchyard.Error
	if errors.As(err, &e) {
		return e.Code.String()
	}
	if s, ok := status.FromError(err); ok {
		return s.Code().String()
	}
	return "other"
}

func connectKind(err error) string { return connect.CodeOf(err).String() }

// h2cClient is an HTTP client speaking HTTP/2 without TLS (one connection, multiplexed).
func h2cClient() *http.Client {
	protocols := new(http.Protocols)
	protocols.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: protocols}}
}

// pickerFor returns the picker cfg asks for and a function releasing its resources: over
// gRPC or Connect, with pre-marshalled prompts (see rawpick.go) or, without, through the Go
// client (gRPC) or the generated Connect client, encoding every request.
func pickerFor(cfg *Config, c *switchyard.Client, prompts *Prompts) (picker, func(), error) {
	var p picker
	release := func() {}
	switch {
	case cfg.Protocol == ProtocolGRPC && !cfg.Premarshal:
		p = picker{kind: grpcKind, pick: func(ctx context.Context, req *v1.PickReplicaRequest, i int) (*v1.PickReplicaResponse, error) {
			req.Prompt = prompts.wireAt(i)
			return c.Pick(ctx, req)
		}}
	case cfg.Protocol == ProtocolConnect && !cfg.Premarshal:
		hc := h2cClient()
		cc := switchyardv1connect.NewRouterServiceClient(hc, "http://"+cfg.Addr)
		p = picker{kind: connectKind, pick: func(ctx context.Context, req *v1.PickReplicaRequest, i int) (*v1.PickReplicaResponse, error) {
			req.Prompt = prompts.wireAt(i)
			return cc.PickReplica(ctx, req)
		}}
		release = hc.CloseIdleConnections
	default:
		enc, err := encodedPrompts(prompts)
		if err != nil {
			return p, nil, err
		}
		raw := &rawPicker{prompts: enc}
		if cfg.Protocol == ProtocolConnect {
			hc := h2cClient()
			raw.send, p.kind, release = connectRawSender(hc, cfg.Addr), connectKind, hc.CloseIdleConnections
		} else {
			conn, err := grpc.NewClient(cfg.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				return p, nil, fmt.Errorf("%w: %w", ErrSetup, err)
			}
			raw.send, p.kind, release = grpcRawSender(conn), grpcKind, func() { conn.Close() }
		}
		p.pick = raw.pick
	}
	return p, release, nil
}
