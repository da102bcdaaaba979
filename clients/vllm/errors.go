package vllm

import "errors"

// Sentinel errors, for callers to classify failures with errors.Is.
var (
	// ErrMalformed: a payload is not a valid vLLM EventBatch (wrong shape or
	// types at batch level, truncated data, trailing bytes).
	ErrMalformed = errors.New("vllm: malformed event batch")
	// ErrTooLarge: a payload exceeds a batch-level Limits field.
	ErrTooLarge = errors.New("vllm: event batch over limit")
	// ErrTooDeep: a payload nests values deeper than Limits.MaxDepth.
	ErrTooDeep = errors.New("vllm: event batch nested too deep")
	// ErrFrameCount: a live message does not have exactly 3 frames.
	ErrFrameCount = errors.New("vllm: live message must have 3 frames")
	// ErrSeqFrame: a sequence frame is not 8 bytes.
	ErrSeqFrame = errors.New("vllm: sequence frame must be 8 bytes")
	// ErrReplayReply: a replay reply has the wrong shape.
	ErrReplayReply = errors.New("vllm: malformed replay reply")
	// ErrInvalidConfig: an Endpoint, flag value, option or Limits is invalid.
	ErrInvalidConfig = errors.New("vllm: invalid configuration")
	// ErrDuplicateReplica: Add was given a replica that is already subscribed.
	ErrDuplicateReplica = errors.New("vllm: replica already subscribed")
	// ErrClosed: the Subscriber's Run has returned; it takes no more endpoints.
	ErrClosed = errors.New("vllm: subscriber closed")
	// ErrRunning: Run was called twice.
	ErrRunning = errors.New("vllm: subscriber already running")
)
