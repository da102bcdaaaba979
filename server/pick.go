package server

import (
	"context"
	"math"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

// pickRequest validates a PickReplicaRequest and maps it to scoring's type.
func (l limits) pickRequest(req *v1.PickReplicaRequest) (scoring.PickRequest, error) {
	out := scoring.PickRequest{
		RequestID: req.GetRequestId(),
		Model:     req.GetModel(),
		SessionID: req.GetSessionId(),
		LoRA:      req.GetLoraName(),
		Policy:    req.GetPolicy(),
		DryRun:    req.GetDryRun(),
	}
	if err := l.id("request_id", out.RequestID, true); err != nil {
		return out, err
	}
	if err := l.id("model", out.Model, true); err != nil {
		return out, err
	}
	if err := l.id("session_id", out.SessionID, false); err != nil {
		return out, err
	}
	if err := l.id("lora_name", out.LoRA, false); err != nil {
		return out, err
	}
	if err := l.prompt(req, &out); err != nil {
		return out, err
	}
	if err := l.candidates(req.GetCandidates()); err != nil {
		return out, err
	}
	out.Candidates = req.GetCandidates()
	if h := req.GetHints(); h != nil {
		if h.GetExpectedOutputTokens() < 0 {
			return out, invalid("hints.expected_output_tokens", "must not be negative, got %d", h.GetExpectedOutputTokens())
		}
		if h.GetExpectedOutputTokens() > math.MaxInt32 {
			return out, invalid("hints.expected_output_tokens", "must be at most %d, got %d", math.MaxInt32, h.GetExpectedOutputTokens())
		}
		out.ExpectedOutputTokens = int(h.GetExpectedOutputTokens())
		out.Priority = int(h.GetPriority())
	}
	for name, v := range req.GetPolicyParams() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return out, invalid("policy_params["+name+"]", "must be a finite number")
		}
	}
	out.Params = req.GetPolicyParams()
	return out, nil
}

func (l limits) prompt(req *v1.PickReplicaRequest, out *scoring.PickRequest) error {
	pt := req.GetPromptTokens()
	if pt < 0 {
		return invalid("prompt_tokens", "must not be negative, got %d", pt)
	}
	if pt > int64(l.MaxPromptTokens) {
		return invalid("prompt_tokens", "%d exceeds the limit of %d tokens", pt, l.MaxPromptTokens)
	}
	switch p := req.GetPrompt().(type) {
	case *v1.PickReplicaRequest_TokenIds:
		ids := p.TokenIds.GetIds()
		if len(ids) > l.MaxPromptTokens {
			return invalid("token_ids", "%d tokens exceed the limit of %d", len(ids), l.MaxPromptTokens)
		}
		out.Prompt.Tokens = ids
	case *v1.PickReplicaRequest_BlockHashes:
		hs := p.BlockHashes.GetHashes()
		if len(hs) > l.MaxPromptTokens {
			return invalid("block_hashes", "%d blocks exceed the limit of %d", len(hs), l.MaxPromptTokens)
		}
		out.Prompt.BlockHashes = hs
		out.PromptTokens = int(pt)
	case *v1.PickReplicaRequest_Text:
		if len(p.Text) > l.MaxPromptTextBytes {
			return invalid("text", "%d bytes exceed the limit of %d", len(p.Text), l.MaxPromptTextBytes)
		}
		out.Prompt.Text = p.Text
		out.PromptTokens = int(pt)
	case nil:
		return invalid("prompt", "set one of token_ids, block_hashes or text")
	default:
		return invalid("prompt", "unknown prompt kind %T", p)
	}
	return nil
}

func (l limits) candidates(cs []string) error {
	if len(cs) > l.MaxCandidates {
		return invalid("candidates", "%d candidates exceed the limit of %d", len(cs), l.MaxCandidates)
	}
	seen := make(map[string]struct{}, len(cs))
	for i, c := range cs {
		if c == "" {
			return invalid("candidates", "entry %d is empty", i)
		}
		if _, dup := seen[c]; dup {
			return invalid("candidates", "duplicate replica id %q", c)
		}
		seen[c] = struct{}{}
	}
	return nil
}

// PickReplica implements RouterService.PickReplica.
func (s *routerService) PickReplica(ctx context.Context, req *v1.PickReplicaRequest) (_ *v1.PickReplicaResponse, err error) {
	ctx, probe := s.tel.startPick(ctx)
	var d *scoring.Decision
	defer func() { s.tel.endPick(probe, req, d, err) }()
	preq, err := s.limits.pickRequest(req)
	if err != nil {
		return nil, err
	}
	d, err = s.router.Pick(ctx, preq)
	if err != nil {
		return nil, rpcError(err)
	}
	s.audit.Record(d)
	resp := &v1.PickReplicaResponse{
		ReplicaId:    d.ReplicaID,
		DecisionId:   d.DecisionID,
		Fallbacks:    d.Fallbacks,
		PromptTokens: int64(d.PromptTokens),
		CachedTokens: int64(d.CachedTokens),
		Candidates:   candidateScores(d.Candidates),
		Policy:       d.Policy,
		DryRun:       d.DryRun,
		// From the decision: Router.Replica would take the model's lock and the
		// index's Stats (a sweep and a scan of the index) on every pick.
		ReplicaAddress: d.ReplicaAddress,
	}
	return resp, nil
}
