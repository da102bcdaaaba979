package switchyard

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Sentinel errors for callers to classify failures with errors.Is. Errors
// returned by RPCs are *Error values that match the sentinel of their code.
var (
	// ErrInvalidArgument: the server rejected the request as malformed (the
	// message names the field).
	ErrInvalidArgument = errors.New("switchyard: invalid argument")
	// ErrNotFound: an unknown replica or model.
	ErrNotFound = errors.New("switchyard: not found")
	// ErrUnavailable: the server cannot be reached, or no replica of the
	// model is ready to take the request.
	ErrUnavailable = errors.New("switchyard: unavailable")
	// ErrConflict: the request conflicts with the server's state (for
	// instance re-registering a replica under another model).
	ErrConflict = errors.New("switchyard: conflict")
	// ErrClosed: the client, reporter or publisher was closed.
	ErrClosed = errors.New("switchyard: closed")
	// ErrInvalidEvent: an event failed the client-side checks and was not
	// queued (the message names the field).
	ErrInvalidEvent = errors.New("switchyard: invalid event")
)

// Error is a failed RPC: which operation, the gRPC code, and the cause.
type Error struct {
	// Op names the call, e.g. "PickReplica".
	Op string
	// Code is the gRPC status code of the failure.
	Code codes.Code
	// Err is the underlying error (a gRPC status error).
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	return fmt.Sprintf("switchyard: %s: %s: %s", e.Op, e.Code, status.Convert(e.Err).Message())
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is the sentinel error for e's code.
func (e *Error) Is(target error) bool {
	s := sentinel(e.Code)
	return s != nil && s == target
}

// sentinel maps a gRPC code to the error callers test for.
func sentinel(c codes.Code) error {
	switch c {
	case codes.InvalidArgument:
		return ErrInvalidArgument
	case codes.NotFound:
		return ErrNotFound
	case codes.Unavailable:
		return ErrUnavailable
	case codes.FailedPrecondition, codes.AlreadyExists, codes.Aborted:
		return ErrConflict
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	case codes.Canceled:
		return context.Canceled
	}
	return nil
}

// rpcErr wraps the error of the RPC op; nil stays nil.
func rpcErr(op string, err error) error {
	if err == nil {
		return nil
	}
	return &Error{Op: op, Code: status.Code(err), Err: err}
}
