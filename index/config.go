package index

import "time"

// Defaults applied by New for zero Config fields.
const (
	// DefaultMaxEntries caps (block, replica-rank, tier) entries: 4M entries is
	// about 200 MB and covers 16 replicas holding 256k blocks each.
	DefaultMaxEntries = 4 << 20
	// DefaultPredictedTTL suits event-driven mode: the engine's own Stored event
	// normally confirms a routed prompt well within two seconds.
	DefaultPredictedTTL = 2 * time.Second
	// DefaultTextPredictedTTL is the TTL to pass to Predict for hashes from the
	// approximate text mode (HashText): no engine event will ever confirm them,
	// so the prediction is the only memory of the routing and must last longer.
	DefaultTextPredictedTTL = 120 * time.Second
	// MaxRanks is the most (replica, DP rank) pairs one Index tracks at a time.
	MaxRanks = 1 << 16
	// maxTTL bounds prediction TTLs so expiry ticks (milliseconds, wrapping
	// 32-bit) always compare correctly.
	maxTTL = (1 << 30) * time.Millisecond
)

// Config configures an Index. The zero value is usable: every zero field takes
// its documented default.
type Config struct {
	BlockSize    int              // router block size in tokens; 0 = DefaultBlockSize
	MaxEntries   int              // cap on (block, replica-rank, tier) entries incl. predicted; 0 = DefaultMaxEntries; LRU beyond, every drop counted
	PredictedTTL time.Duration    // default TTL of predicted entries; 0 = DefaultPredictedTTL
	Now          func() time.Time // clock (tests use a fake); nil = time.Now; called by concurrent Match calls, so it must be safe for concurrent use
}

func (c Config) withDefaults() Config {
	if c.BlockSize <= 0 {
		c.BlockSize = DefaultBlockSize
	}
	if c.MaxEntries <= 0 {
		c.MaxEntries = DefaultMaxEntries
	}
	if c.PredictedTTL <= 0 {
		c.PredictedTTL = DefaultPredictedTTL
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}
