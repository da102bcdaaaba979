package sim

// Schema identifies the JSON layout of Report. It changes only when a field changes meaning or
// disappears; new fields may be added within a version.
const Schema = "switchyard.replay/v1"

// Report is the JSON document `switchyard replay` writes: what was run and every policy's
// measurements. Times are seconds, rates per second, hit rates fractions in [0, 1].
type Report struct {
	Schema    string       `json:"schema"`
	Workload  WorkloadInfo `json:"workload"`
	Fleet     FleetInfo    `json:"fleet"`
	Replay    ReplayInfo   `json:"replay"`
	Reference Reference    `json:"reference"`
	Results   []*Result    `json:"results"`
}

// WorkloadInfo describes the replayed workload.
type WorkloadInfo struct {
	Name             string         `json:"name"`
	Tokenization     string         `json:"tokenization"`
	Requests         int            `json:"requests"`
	Sessions         int            `json:"sessions"`
	InputTokensMean  float64        `json:"input_tokens_mean"`
	OutputTokensMean float64        `json:"output_tokens_mean"`
	SpanSeconds      float64        `json:"span_seconds"`
	Dropped          map[string]int `json:"dropped_rows"`
}

// FleetInfo describes the simulated fleet.
type FleetInfo struct {
	Replicas         int     `json:"replicas"`
	BlockSize        int     `json:"block_size"`
	NumBlocks        int     `json:"num_blocks"`
	CapacityTokens   int64   `json:"capacity_tokens"`
	MaxBatchedTokens int     `json:"max_batched_tokens"`
	MaxSeqs          int     `json:"max_seqs"`
	MaxModelLen      int     `json:"max_model_len"`
	StepModel        string  `json:"step_model"`
	RouterBlockSize  int     `json:"router_block_size"`
	ProgressEvery    int     `json:"progress_every_tokens"`
	BinSeconds       float64 `json:"bin_seconds"`
	Seed             uint64  `json:"seed"`
}

// ReplayInfo describes how requests were issued.
type ReplayInfo struct {
	Mode          string  `json:"mode"` // "open" or "closed"
	Speedup       float64 `json:"speedup"`
	JitterSeconds float64 `json:"jitter_seconds"`
	Concurrency   int     `json:"concurrency"`
	ThinkSeconds  float64 `json:"think_seconds"`
}

// Reference holds policy-independent yardsticks.
type Reference struct {
	// PooledPrefixHitRate is the token-weighted prefix hit rate of one LRU prefix cache with the
	// whole fleet's capacity serving the requests one after another in arrival order (no
	// concurrency): what a perfectly pooled cache would reuse.
	PooledPrefixHitRate float64 `json:"pooled_prefix_hit_rate"`
	PooledCapacity      int64   `json:"pooled_capacity_tokens"`
}

// Dist summarises a distribution (seconds).
type Dist struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
}

// Result is one policy's measurements.
type Result struct {
	Label          string             `json:"label"`
	Policy         string             `json:"policy"`
	Params         map[string]float64 `json:"params"`
	OutputEstimate bool               `json:"output_estimate"`
	Oracle         bool               `json:"oracle"`

	Issued    int            `json:"issued"`
	Completed int            `json:"completed"`
	Dropped   map[string]int `json:"dropped"`

	TTFT       Dist `json:"ttft"`        // arrival to first token
	TPOT       Dist `json:"tpot"`        // (done − first token)/(output − 1), requests with output > 1
	E2E        Dist `json:"e2e"`         // arrival to last token
	SessionE2E Dist `json:"session_e2e"` // first turn's arrival to last turn's completion (a rollout's latency)
	// TTFTCDF is TTFT at quantiles 0, 0.01, …, 1 (101 values), for CDF plots.
	TTFTCDF []float64 `json:"ttft_cdf"`

	OutputTokensPerSecond float64 `json:"output_tokens_per_second"` // over the makespan
	// PrefixHitRate is Σ engine-reported cached prompt tokens / Σ prompt tokens (completed requests).
	PrefixHitRate float64 `json:"prefix_hit_rate"`
	// DecodeBlockCV is the mean over bins of the coefficient of variation across replicas of
	// the active decode KV blocks (blocks of requests past their first token), bins where any is active.
	DecodeBlockCV float64 `json:"decode_block_cv"`
	// MaxMeanRequests and MaxMeanTokens: the busiest replica's routed requests (tokens: prompt
	// plus output) over the mean.
	MaxMeanRequests float64 `json:"max_mean_requests"`
	MaxMeanTokens   float64 `json:"max_mean_tokens"`
	Preemptions     int     `json:"preemptions"`
	MakespanSeconds float64 `json:"makespan_seconds"`

	Replicas []ReplicaResult `json:"replicas"`
	Router   RouterResult    `json:"router"`
	// DecodeBlocks is each replica's mean active decode blocks per bin, bins widened (whole
	// multiples of the sampling bin) to at most 500 for size.
	DecodeBlocks Series `json:"decode_blocks"`
}

// ReplicaResult is one replica's share.
type ReplicaResult struct {
	ID                 string  `json:"id"`
	Requests           int     `json:"requests"`
	PromptTokens       int64   `json:"prompt_tokens"`
	CachedPromptTokens int64   `json:"cached_prompt_tokens"`
	OutputTokens       int64   `json:"output_tokens"`
	PrefixHitRate      float64 `json:"prefix_hit_rate"`
	MeanDecodeBlocks   float64 `json:"mean_decode_blocks"`
	Preemptions        int     `json:"preemptions"`
	Steps              int     `json:"steps"`
	BusyFraction       float64 `json:"busy_fraction"`
}

// RouterResult is what the router did with the simulated traffic and events.
type RouterResult struct {
	Picks              uint64            `json:"picks"`
	PickErrors         int               `json:"pick_errors"`
	Expired            uint64            `json:"expired"`
	LifecycleUnknown   int               `json:"lifecycle_unknown"`
	LifecycleRejected  int               `json:"lifecycle_rejected"`
	Clamped            uint64            `json:"clamped"`
	StoredEvents       uint64            `json:"stored_events"`
	RemovedBlocks      uint64            `json:"removed_blocks"`
	KVRejected         map[string]uint64 `json:"kv_rejected"`
	IndexBlocks        int               `json:"index_blocks"`
	IndexUnknownRemove uint64            `json:"index_unknown_removed"`
}

// Series is a per-replica time series.
type Series struct {
	BinSeconds float64     `json:"bin_seconds"`
	Replicas   [][]float64 `json:"replicas"`
}
