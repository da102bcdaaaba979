package server

import (
	"context"
	"fmt"

	"connectrpc.com/connect"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// auditService implements AuditService once for both transports.
type auditService struct {
	audit  *AuditLog
	limits limits
}

const (
	defaultListLimit = 100
	maxListLimit     = 1000
)

// GetDecision implements AuditService.GetDecision.
func (s *auditService) GetDecision(_ context.Context, req *v1.GetDecisionRequest) (*v1.GetDecisionResponse, error) {
	if err := s.limits.id("request_id", req.GetRequestId(), true); err != nil {
		return nil, err
	}
	d, ok := s.audit.Get(req.GetRequestId())
	if !ok {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("no decision recorded for request %q (never picked, or aged out of the audit log)", req.GetRequestId()))
	}
	return &v1.GetDecisionResponse{Decision: decisionProto(d)}, nil
}

// ListDecisions implements AuditService.ListDecisions.
func (s *auditService) ListDecisions(_ context.Context, req *v1.ListDecisionsRequest) (*v1.ListDecisionsResponse, error) {
	limit := int(req.GetLimit())
	switch {
	case limit < 0:
		return nil, invalid("limit", "must not be negative, got %d", limit)
	case limit == 0:
		limit = defaultListLimit
	case limit > maxListLimit:
		return nil, invalid("limit", "must be at most %d, got %d", maxListLimit, limit)
	}
	f := DecisionFilter{Model: req.GetModel(), ReplicaID: req.GetReplicaId(), Policy: req.GetPolicy()}
	if ts := req.GetSince(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			return nil, invalid("since", "%v", err)
		}
		f.Since = ts.AsTime()
	}
	if ts := req.GetUntil(); ts != nil {
		if err := ts.CheckValid(); err != nil {
			return nil, invalid("until", "%v", err)
		}
		f.Until = ts.AsTime()
	}
	ds := s.audit.List(f, limit)
	out := &v1.ListDecisionsResponse{Decisions: make([]*v1.Decision, len(ds))}
	for i, d := range ds {
		out.Decisions[i] = decisionProto(d)
	}
	return out, nil
}

// watchDecisions streams new decisions until ctx ends.
func (s *auditService) watchDecisions(ctx context.Context, req *v1.WatchDecisionsRequest, send func(*v1.WatchDecisionsResponse) error) error {
	w, cancel := s.audit.watch(DecisionFilter{Model: req.GetModel(), ReplicaID: req.GetReplicaId(), Policy: req.GetPolicy()})
	defer cancel()
	for {
		select {
		case <-ctx.Done():
			return nil
		case d := <-w.ch:
			if err := send(&v1.WatchDecisionsResponse{Decision: decisionProto(d), Skipped: w.skipped.Swap(0)}); err != nil {
				return err
			}
		}
	}
}
