package server

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/switchyard-llm/switchyard/scoring"
)

// invalid returns an InvalidArgument error naming the offending field.
func invalid(field, format string, args ...any) *connect.Error {
	return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

// rpcError maps a domain error to its RPC code. Handlers return only
// *connect.Error; the gRPC transport converts those in grpcErrors.
func rpcError(err error) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce
	}
	code := connect.CodeInternal
	switch {
	case errors.Is(err, scoring.ErrInvalid), errors.Is(err, scoring.ErrUnknownPolicy):
		code = connect.CodeInvalidArgument
	case errors.Is(err, scoring.ErrUnknownReplica), errors.Is(err, scoring.ErrUnknownModel):
		code = connect.CodeNotFound
	case errors.Is(err, scoring.ErrNoReplica):
		code = connect.CodeUnavailable
	case errors.Is(err, scoring.ErrConflict):
		code = connect.CodeFailedPrecondition
	case errors.Is(err, context.Canceled):
		code = connect.CodeCanceled
	case errors.Is(err, context.DeadlineExceeded):
		code = connect.CodeDeadlineExceeded
	}
	return connect.NewError(code, err)
}

// toGRPC converts a *connect.Error into a gRPC status with the same code
// (Connect's codes are gRPC's) and message.
func toGRPC(err error) error {
	var ce *connect.Error
	if err == nil || !errors.As(err, &ce) {
		return err
	}
	return status.Error(codes.Code(ce.Code()), ce.Message())
}

// grpcErrors are interceptors that let grpc-go speak the shared handlers'
// *connect.Error results.
func grpcErrors() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			resp, err := h(ctx, req)
			return resp, toGRPC(err)
		}),
		grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			return toGRPC(h(srv, ss))
		}),
	}
}
