package scoring

import (
	"fmt"
	"time"

	"github.com/switchyard-llm/switchyard/index"
)

// Defaults applied by NewRouter to zero Config fields.
const (
	// DefaultPolicy is the policy used when neither request, model nor server names one.
	DefaultPolicy = "token_load"
	// DefaultRequestExpiry frees a request that has seen no event for this long (lost completions
	// must not leak load). Ray uses 3600 s; Dynamo's 300 s is kept here.
	DefaultRequestExpiry = 300 * time.Second
	// TextPredictedTTL is the lifetime of predicted index entries made for text (approximate)
	// prompts: with no engine events the router's own decisions are the only source.
	TextPredictedTTL = 120 * time.Second
	// bytesPerToken estimates prompt tokens from text bytes when the caller gives no count.
	bytesPerToken = 4
)

// Config configures a Router. The zero value is usable: token_load, 16-token blocks, 300 s expiry.
type Config struct {
	DefaultPolicy  string                        // "" = "token_load"
	ModelPolicies  map[string]string             // per-model default policy
	PolicyParams   map[string]map[string]float64 // per-policy coefficient overrides at server level
	BlockSize      int                           // router block size in tokens; 0 = index.DefaultBlockSize
	TextChunkBytes int                           // approximate text mode chunk; 0 = index.DefaultTextChunkBytes
	Index          index.Config                  // template for each model's index (BlockSize overridden by BlockSize above)
	RequestExpiry  time.Duration                 // free requests with no event for this long; 0 = 300s
	OutputEstimate *bool                         // learned output-length estimate; nil = on
	Seed           uint64                        // randomness (ties, random, p2c, softmax); 0 = time-based
	Now            func() time.Time              // nil = time.Now

	// Extra adds policies beyond the built-in ones (for example the simulator's oracle), selectable
	// by their Name like any other. A name that collides with a built-in policy is an error.
	Extra []Policy
	// PredictOnRoute inserts the routed prompt's blocks as short-lived predicted index entries
	// for the chosen replica, so that requests sharing the prefix that arrive before the engine's
	// KV events see the overlap. nil = on. Turn off only when KV events arrive faster than
	// sibling requests (or to measure what prediction costs).
	PredictOnRoute *bool
	// MaxSessions bounds the per-session output-length estimates kept per model; 0 = 65536.
	// The oldest sessions are dropped first and counted in Counters.SessionsDropped.
	MaxSessions int
}

// settings is Config with defaults applied, read-only after NewRouter.
type settings struct {
	blockSize     int
	textChunk     int
	expiry        time.Duration
	learn         bool
	predict       bool
	maxSessions   int
	now           func() time.Time
	indexTemplate index.Config
	defaultPolicy string
	modelPolicies map[string]string
	seed          uint64
}

func resolveConfig(cfg Config) (settings, error) {
	s := settings{
		blockSize:     cfg.BlockSize,
		textChunk:     cfg.TextChunkBytes,
		expiry:        cfg.RequestExpiry,
		learn:         cfg.OutputEstimate == nil || *cfg.OutputEstimate,
		predict:       cfg.PredictOnRoute == nil || *cfg.PredictOnRoute,
		maxSessions:   cfg.MaxSessions,
		now:           cfg.Now,
		indexTemplate: cfg.Index,
		defaultPolicy: cfg.DefaultPolicy,
		seed:          cfg.Seed,
	}
	switch {
	case s.blockSize < 0:
		return s, fmt.Errorf("%w: block_size %d is negative", ErrInvalid, s.blockSize)
	case s.textChunk < 0:
		return s, fmt.Errorf("%w: text_chunk_bytes %d is negative", ErrInvalid, s.textChunk)
	case s.expiry < 0:
		return s, fmt.Errorf("%w: request_expiry %v is negative", ErrInvalid, s.expiry)
	case s.maxSessions < 0:
		return s, fmt.Errorf("%w: max_sessions %d is negative", ErrInvalid, s.maxSessions)
	}
	if s.blockSize == 0 {
		s.blockSize = index.DefaultBlockSize
	}
	if s.textChunk == 0 {
		s.textChunk = index.DefaultTextChunkBytes
	}
	if s.expiry == 0 {
		s.expiry = DefaultRequestExpiry
	}
	if s.maxSessions == 0 {
		s.maxSessions = 1 << 16
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.defaultPolicy == "" {
		s.defaultPolicy = DefaultPolicy
	}
	if s.seed == 0 {
		s.seed = uint64(time.Now().UnixNano())
	}
	s.indexTemplate.BlockSize = s.blockSize
	if s.indexTemplate.Now == nil {
		s.indexTemplate.Now = s.now
	}
	s.modelPolicies = make(map[string]string, len(cfg.ModelPolicies))
	for m, p := range cfg.ModelPolicies {
		s.modelPolicies[m] = p
	}
	return s, nil
}
