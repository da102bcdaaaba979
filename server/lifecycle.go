package server

import (
	"context"
	"errors"
	"fmt"
	"io"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// routerService implements RouterService once for both transports; the
// transport adapters only differ in how StreamLifecycle receives.
type routerService struct {
	router *scoring.Router
	audit  *AuditLog
	limits limits
	tel    *telemetry // nil records nothing
}

// ReportLifecycle implements RouterService.ReportLifecycle.
func (s *routerService) ReportLifecycle(ctx context.Context, req *v1.ReportLifecycleRequest) (*v1.ReportLifecycleResponse, error) {
	var total scoring.LifecycleResult
	if err := s.applyLifecycle(ctx, req.GetEvents(), &total); err != nil {
		return nil, err
	}
	return &v1.ReportLifecycleResponse{Counts: lifecycleCounts(total)}, nil
}

// streamLifecycle applies every message of a lifecycle stream; recv returns
// io.EOF when the client closes its side.
func (s *routerService) streamLifecycle(ctx context.Context, recv func() (*v1.StreamLifecycleRequest, error)) (*v1.StreamLifecycleResponse, error) {
	var total scoring.LifecycleResult
	for msg := 0; ; msg++ {
		req, err := recv()
		if errors.Is(err, io.EOF) {
			return &v1.StreamLifecycleResponse{Counts: lifecycleCounts(total)}, nil
		}
		if err != nil {
			return nil, rpcError(err)
		}
		if err := s.applyLifecycle(ctx, req.GetEvents(), &total); err != nil {
			return nil, fmt.Errorf("stream message %d: %w", msg, err)
		}
	}
}

// applyLifecycle validates a whole batch first, so a bad event applies
// nothing, then hands it to the router and adds its counts to total.
func (s *routerService) applyLifecycle(ctx context.Context, events []*v1.LifecycleEvent, total *scoring.LifecycleResult) error {
	if len(events) > s.limits.MaxBatchEvents {
		return invalid("events", "%d events exceed the batch limit of %d", len(events), s.limits.MaxBatchEvents)
	}
	evs := make([]scoring.LifecycleEvent, len(events))
	for i, e := range events {
		if err := s.limits.lifecycleEvent(fmt.Sprintf("events[%d]", i), e, &evs[i]); err != nil {
			return err
		}
	}
	s.tel.lifecycle(evs)
	r := s.router.ApplyLifecycle(ctx, evs)
	total.Applied += r.Applied
	total.UnknownRequest += r.UnknownRequest
	total.UnknownReplica += r.UnknownReplica
	total.Stale += r.Stale
	return nil
}

func (l limits) lifecycleEvent(field string, e *v1.LifecycleEvent, out *scoring.LifecycleEvent) error {
	if err := l.id(field+".request_id", e.GetRequestId(), true); err != nil {
		return err
	}
	if err := l.id(field+".replica_id", e.GetReplicaId(), false); err != nil {
		return err
	}
	out.RequestID, out.ReplicaID = e.GetRequestId(), e.GetReplicaId()
	if t := e.GetTime(); t != nil {
		if err := t.CheckValid(); err != nil {
			return invalid(field+".time", "%v", err)
		}
		out.Time = t.AsTime()
	}
	nonNeg := func(name string, v int64) (int, error) {
		if v < 0 {
			return 0, invalid(field+"."+name, "must not be negative, got %d", v)
		}
		if v > int64(l.MaxPromptTokens)*64 {
			return 0, invalid(field+"."+name, "%d is implausibly large", v)
		}
		return int(v), nil
	}
	var err error
	switch ev := e.GetEvent().(type) {
	case *v1.LifecycleEvent_Admitted:
		out.Kind = scoring.EventAdmitted
		if out.PromptTokens, err = nonNeg("admitted.prompt_tokens", ev.Admitted.GetPromptTokens()); err != nil {
			return err
		}
		if out.CachedTokens, err = nonNeg("admitted.cached_tokens", ev.Admitted.GetCachedTokens()); err != nil {
			return err
		}
	case *v1.LifecycleEvent_FirstToken:
		out.Kind = scoring.EventFirstToken
	case *v1.LifecycleEvent_Progress:
		out.Kind = scoring.EventProgress
		if out.GeneratedTokens, err = nonNeg("progress.generated_tokens", ev.Progress.GetGeneratedTokens()); err != nil {
			return err
		}
	case *v1.LifecycleEvent_Done:
		out.Kind = scoring.EventDone
		if out.OutputTokens, err = nonNeg("done.output_tokens", ev.Done.GetOutputTokens()); err != nil {
			return err
		}
		if out.CachedPromptTokens, err = nonNeg("done.cached_prompt_tokens", ev.Done.GetCachedPromptTokens()); err != nil {
			return err
		}
		switch ev.Done.GetStatus() {
		case v1.CompletionStatus_COMPLETION_STATUS_UNSPECIFIED, v1.CompletionStatus_COMPLETION_STATUS_OK:
			out.Status = "ok"
		case v1.CompletionStatus_COMPLETION_STATUS_ERROR:
			out.Status = "error"
		case v1.CompletionStatus_COMPLETION_STATUS_CANCELLED:
			out.Status = "cancelled"
		default:
			return invalid(field+".done.status", "unknown status %d", ev.Done.GetStatus())
		}
	case nil:
		return invalid(field+".event", "set one of admitted, first_token, progress or done")
	default:
		return invalid(field+".event", "unknown event kind %T", ev)
	}
	return nil
}

func lifecycleCounts(r scoring.LifecycleResult) *v1.LifecycleCounts {
	return &v1.LifecycleCounts{
		Applied:        int64(r.Applied),
		UnknownRequest: int64(r.UnknownRequest),
		UnknownReplica: int64(r.UnknownReplica),
		Stale:          int64(r.Stale),
	}
}
