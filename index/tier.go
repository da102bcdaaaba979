package index

import (
	"fmt"
	"strings"
)

// Tier is where a cached block lives on a replica. Policies credit each tier
// differently (a device hit saves the most prefill), so the index keeps them apart.
type Tier uint8

// The tiers, best first: Match reports a block under the best tier it is on.
const (
	TierDevice Tier = iota // GPU memory
	TierHost               // CPU memory (offloaded)
	TierDisk               // disk / remote store
)

// NumTiers is the number of tiers; Overlap.Tiers and Stats.Replicas are indexed by Tier.
const NumTiers = 3

// ParseTier maps an engine's medium name to a Tier. It accepts "device", "gpu",
// "host", "cpu" and "disk" in any case; "" means device because engines omit the
// medium for GPU stores. Anything else is an error wrapping ErrUnknownTier.
func ParseTier(s string) (Tier, error) {
	switch strings.ToLower(s) {
	case "", "device", "gpu":
		return TierDevice, nil
	case "host", "cpu":
		return TierHost, nil
	case "disk":
		return TierDisk, nil
	}
	return 0, fmt.Errorf("%w: %q (want device|gpu|host|cpu|disk)", ErrUnknownTier, s)
}

// String returns the canonical tier name: "device", "host" or "disk".
// An out-of-range value prints as "tier(N)" so logs show the bad input.
func (t Tier) String() string {
	switch t {
	case TierDevice:
		return "device"
	case TierHost:
		return "host"
	case TierDisk:
		return "disk"
	}
	return fmt.Sprintf("tier(%d)", uint8(t))
}

// valid reports whether t is one of the NumTiers tiers.
func (t Tier) valid() bool { return t < NumTiers }
