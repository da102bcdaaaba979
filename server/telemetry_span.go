package server

import (
	"cmp"
	"slices"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/index"
	"github.com/switchyard-llm/switchyard/scoring"
)

// decisionSpanName names the span of one routing decision, a child of the
// PickReplica server span.
const decisionSpanName = "switchyard.decision"

// candidateEventName names the span event carrying one candidate's terms.
const candidateEventName = "switchyard.candidate"

// Attribute keys of decision spans and their candidate events.
const (
	attrRequestID      = attribute.Key("switchyard.request_id")
	attrDecisionID     = attribute.Key("switchyard.decision_id")
	attrModel          = attribute.Key("switchyard.model")
	attrPolicy         = attribute.Key("switchyard.policy")
	attrReplica        = attribute.Key("switchyard.replica_id")
	attrPromptTokens   = attribute.Key("switchyard.prompt_tokens")
	attrCachedTokens   = attribute.Key("switchyard.cached_tokens")
	attrCandidateCount = attribute.Key("switchyard.candidate_count")
	attrCandidatesCut  = attribute.Key("switchyard.candidate_events_dropped")
	attrDryRun         = attribute.Key("switchyard.dry_run")
	attrFallbacks      = attribute.Key("switchyard.fallbacks")

	attrRank            = attribute.Key("switchyard.rank")
	attrDeviceBlocks    = attribute.Key("switchyard.overlap.device_blocks")
	attrPrefixBlocks    = attribute.Key("switchyard.overlap.prefix_blocks")
	attrHostBlocks      = attribute.Key("switchyard.overlap.host_blocks")
	attrDiskBlocks      = attribute.Key("switchyard.overlap.disk_blocks")
	attrPredictedBlocks = attribute.Key("switchyard.overlap.predicted_blocks")
	attrPrefillTokens   = attribute.Key("switchyard.prefill_tokens")
	attrDecodeBlocks    = attribute.Key("switchyard.decode_blocks")
	attrActiveRequests  = attribute.Key("switchyard.active_requests")
	attrCost            = attribute.Key("switchyard.cost")
	attrIneligible      = attribute.Key("switchyard.ineligible_reason")
)

// annotate fills a recording decision span. Only called when the span
// records: building attributes allocates.
func (t *telemetry) annotate(span trace.Span, req *v1.PickReplicaRequest, d *scoring.Decision, err error) {
	span.SetAttributes(attrRequestID.String(req.GetRequestId()), attrModel.String(req.GetModel()))
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		return
	}
	span.SetAttributes(
		attrDecisionID.String(d.DecisionID),
		attrPolicy.String(d.Policy),
		attrReplica.String(d.ReplicaID),
		attrPromptTokens.Int(d.PromptTokens),
		attrCachedTokens.Int(d.CachedTokens),
		attrCandidateCount.Int(len(d.Candidates)),
		attrDryRun.Bool(d.DryRun),
		attrFallbacks.StringSlice(d.Fallbacks),
	)
	shown := rankedCandidates(d.Candidates, t.spanCands)
	if cut := len(d.Candidates) - len(shown); cut > 0 {
		span.SetAttributes(attrCandidatesCut.Int(cut))
	}
	// The SDK copies an event's attributes, so one buffer serves them all.
	buf := make([]attribute.KeyValue, 0, maxCandidateAttrs)
	for _, i := range shown {
		buf = candidateAttrs(buf[:0], &d.Candidates[i])
		span.AddEvent(candidateEventName, trace.WithAttributes(buf...))
	}
}

// rankedCandidates returns the indexes of at most limit candidates, best
// rank first and ineligible ones (rank 0) last, so a cap keeps the ones that
// explain the choice.
func rankedCandidates(cs []scoring.CandidateScore, limit int) []int {
	idx := make([]int, len(cs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		ra, rb := cs[a].Rank, cs[b].Rank
		if (ra == 0) != (rb == 0) {
			if ra == 0 {
				return 1
			}
			return -1
		}
		return cmp.Compare(ra, rb)
	})
	return idx[:min(limit, len(idx))]
}

// maxCandidateAttrs is the most attributes candidateAttrs appends.
const maxCandidateAttrs = 13

// candidateAttrs appends a candidate's terms to kv. Tier and predicted
// overlaps and the ineligibility reason are left out when zero.
func candidateAttrs(kv []attribute.KeyValue, c *scoring.CandidateScore) []attribute.KeyValue {
	kv = append(kv,
		attrReplica.String(c.ReplicaID),
		attrRank.Int(c.Rank),
		attrDeviceBlocks.Int(c.Overlap.Device),
		attrPrefixBlocks.Int(c.Overlap.Prefix),
		attrCachedTokens.Int(c.CachedTokens),
		attrPrefillTokens.Int64(c.PrefillTokens),
		attrDecodeBlocks.Float64(c.DecodeBlocks),
		attrActiveRequests.Int(c.ActiveRequests),
		attrCost.Float64(c.Cost),
	)
	for _, opt := range []struct {
		key attribute.Key
		v   int
	}{
		{attrHostBlocks, c.Overlap.Tiers[index.TierHost]},
		{attrDiskBlocks, c.Overlap.Tiers[index.TierDisk]},
		{attrPredictedBlocks, c.Overlap.Predicted},
	} {
		if opt.v != 0 {
			kv = append(kv, opt.key.Int(opt.v))
		}
	}
	if c.Ineligible != "" {
		kv = append(kv, attrIneligible.String(c.Ineligible))
	}
	return kv
}
