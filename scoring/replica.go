package scoring

import (
	"fmt"

	"github.com/switchyard-llm/switchyard/index"
)

// ReplicaState is whether a registered replica takes new requests.
type ReplicaState uint8

const (
	// StateReady replicas take new requests.
	StateReady ReplicaState = iota + 1
	// StateDraining replicas take no new requests but finish the load they hold.
	StateDraining
)

// String returns "ready" or "draining" (or "state(N)" for an invalid value).
func (s ReplicaState) String() string {
	switch s {
	case StateReady:
		return "ready"
	case StateDraining:
		return "draining"
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// ParseReplicaState maps "ready" or "draining" to a ReplicaState, so configuration and
// transports share one spelling; anything else is an ErrInvalid.
func ParseReplicaState(s string) (ReplicaState, error) {
	switch s {
	case "ready":
		return StateReady, nil
	case "draining":
		return StateDraining, nil
	}
	return 0, fmt.Errorf("%w: state %q (want ready or draining)", ErrInvalid, s)
}

// Replica is a registered engine replica: its identity, where it is, its capacity and labels.
type Replica struct {
	ID, Model, Address string
	KVBlocks           int               // KV cache capacity in blocks (0 = unknown)
	MaxBatchedTokens   int               // per-step token budget (0 = unknown)
	Labels             map[string]string // free-form labels, copied on Register
	State              ReplicaState      // zero value on Register = StateReady
}

// Load is a replica's live token load as seen by the tracker.
type Load struct {
	PrefillTokens  int64 // uncached prompt tokens of requests whose first token has not come
	DecodeBlocks   int64 // KV blocks held by active requests (shared prompt blocks once, plus output blocks)
	ActiveRequests int   // requests reserved on or admitted to the replica and not done
}

// ReplicaStatus is a replica with its live load and index statistics, as listed by the Router.
type ReplicaStatus struct {
	Replica
	Load         Load
	CachedBlocks [index.NumTiers]int // confirmed blocks in the index per tier
}
