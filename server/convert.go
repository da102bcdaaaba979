package server

import (
	"google.golang.org/protobuf/types/known/timestamppb"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/index"
	"github.com/switchyard-llm/switchyard/scoring"
)

func candidateScores(cs []scoring.CandidateScore) []*v1.CandidateScore {
	out := make([]*v1.CandidateScore, len(cs))
	for i, c := range cs {
		out[i] = &v1.CandidateScore{
			ReplicaId: c.ReplicaID,
			Overlap: &v1.TierOverlap{
				DeviceBlocks:    int64(c.Overlap.Device),
				PrefixBlocks:    int64(c.Overlap.Prefix),
				HostBlocks:      int64(c.Overlap.Tiers[index.TierHost]),
				DiskBlocks:      int64(c.Overlap.Tiers[index.TierDisk]),
				PredictedBlocks: int64(c.Overlap.Predicted),
			},
			CachedTokens:     int64(c.CachedTokens),
			PrefillTokens:    c.PrefillTokens,
			DecodeBlocks:     c.DecodeBlocks,
			ActiveRequests:   int64(c.ActiveRequests),
			Cost:             c.Cost,
			Rank:             int32(c.Rank),
			IneligibleReason: c.Ineligible,
		}
	}
	return out
}

func decisionProto(d *scoring.Decision) *v1.Decision {
	return &v1.Decision{
		DecisionId:   d.DecisionID,
		RequestId:    d.RequestID,
		Model:        d.Model,
		SessionId:    d.SessionID,
		Policy:       d.Policy,
		ReplicaId:    d.ReplicaID,
		Fallbacks:    d.Fallbacks,
		PromptTokens: int64(d.PromptTokens),
		CachedTokens: int64(d.CachedTokens),
		Candidates:   candidateScores(d.Candidates),
		DryRun:       d.DryRun,
		Time:         timestamppb.New(d.Time),
	}
}

func replicaStatus(st scoring.ReplicaStatus) *v1.ReplicaStatus {
	state := v1.ReplicaState_REPLICA_STATE_READY
	if st.State == scoring.StateDraining {
		state = v1.ReplicaState_REPLICA_STATE_DRAINING
	}
	return &v1.ReplicaStatus{
		Replica: &v1.Replica{
			Id:      st.ID,
			Model:   st.Model,
			Address: st.Address,
			Capacity: &v1.ReplicaCapacity{
				KvBlocks:         int64(st.KVBlocks),
				MaxBatchedTokens: int64(st.MaxBatchedTokens),
			},
			Labels: st.Labels,
			State:  state,
		},
		Load: &v1.ReplicaLoad{
			PrefillTokens:  st.Load.PrefillTokens,
			DecodeBlocks:   st.Load.DecodeBlocks,
			ActiveRequests: int64(st.Load.ActiveRequests),
		},
		Cache: &v1.ReplicaCache{
			DeviceBlocks: int64(st.CachedBlocks[index.TierDevice]),
			HostBlocks:   int64(st.CachedBlocks[index.TierHost]),
			DiskBlocks:   int64(st.CachedBlocks[index.TierDisk]),
		},
	}
}

// tierFromProto maps the wire tier; ok is false for values this server does
// not know.
func tierFromProto(t v1.Tier) (index.Tier, bool) {
	switch t {
	case v1.Tier_TIER_UNSPECIFIED, v1.Tier_TIER_DEVICE:
		return index.TierDevice, true
	case v1.Tier_TIER_HOST:
		return index.TierHost, true
	case v1.Tier_TIER_DISK:
		return index.TierDisk, true
	}
	return 0, false
}
