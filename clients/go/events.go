package switchyard

import (
	"fmt"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// MaxIDBytes is the longest request or replica id the server accepts by
// default; the Reporter refuses longer ones instead of letting one bad event
// fail a whole stream.
const MaxIDBytes = 256

// Admitted reports that the engine accepted the request; promptTokens and
// cachedTokens are the engine's counts (0 = keep the router's estimate).
// replicaID may differ from the picked replica when the data plane overrode
// the choice.
func Admitted(requestID, replicaID string, promptTokens, cachedTokens int64) *v1.LifecycleEvent {
	return &v1.LifecycleEvent{RequestId: requestID, ReplicaId: replicaID, Event: &v1.LifecycleEvent_Admitted{
		Admitted: &v1.RequestAdmitted{PromptTokens: promptTokens, CachedTokens: cachedTokens},
	}}
}

// FirstToken reports the first output token: the request's prefill is over.
func FirstToken(requestID, replicaID string) *v1.LifecycleEvent {
	return &v1.LifecycleEvent{RequestId: requestID, ReplicaId: replicaID, Event: &v1.LifecycleEvent_FirstToken{
		FirstToken: &v1.FirstTokenEmitted{},
	}}
}

// Progress reports the output tokens generated so far (cumulative).
func Progress(requestID, replicaID string, generatedTokens int64) *v1.LifecycleEvent {
	return &v1.LifecycleEvent{RequestId: requestID, ReplicaId: replicaID, Event: &v1.LifecycleEvent_Progress{
		Progress: &v1.RequestProgress{GeneratedTokens: generatedTokens},
	}}
}

// Done reports that the request ended, freeing all its load.
func Done(requestID, replicaID string, outputTokens int64, status v1.CompletionStatus) *v1.LifecycleEvent {
	return &v1.LifecycleEvent{RequestId: requestID, ReplicaId: replicaID, Event: &v1.LifecycleEvent_Done{
		Done: &v1.RequestDone{OutputTokens: outputTokens, Status: status},
	}}
}

// checkEvent applies the server's per-event rules on the client, so an event
// the server would refuse is rejected at Report rather than failing the
// stream it travels on (which would reject its neighbours too).
func checkEvent(ev *v1.LifecycleEvent) error {
	bad := func(field, format string, args ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrInvalidEvent, field, fmt.Sprintf(format, args...))
	}
	if ev == nil {
		return bad("event", "nil")
	}
	if ev.GetRequestId() == "" {
		return bad("request_id", "required")
	}
	if len(ev.GetRequestId()) > MaxIDBytes {
		return bad("request_id", "%d bytes exceed %d", len(ev.GetRequestId()), MaxIDBytes)
	}
	if len(ev.GetReplicaId()) > MaxIDBytes {
		return bad("replica_id", "%d bytes exceed %d", len(ev.GetReplicaId()), MaxIDBytes)
	}
	if t := ev.GetTime(); t != nil {
		if err := t.CheckValid(); err != nil {
			return bad("time", "%v", err)
		}
	}
	nonNeg := map[string]int64{}
	switch e := ev.GetEvent().(type) {
	case *v1.LifecycleEvent_Admitted:
		nonNeg["admitted.prompt_tokens"] = e.Admitted.GetPromptTokens()
		nonNeg["admitted.cached_tokens"] = e.Admitted.GetCachedTokens()
	case *v1.LifecycleEvent_FirstToken:
	case *v1.LifecycleEvent_Progress:
		nonNeg["progress.generated_tokens"] = e.Progress.GetGeneratedTokens()
	case *v1.LifecycleEvent_Done:
		nonNeg["done.output_tokens"] = e.Done.GetOutputTokens()
		nonNeg["done.cached_prompt_tokens"] = e.Done.GetCachedPromptTokens()
		if _, ok := v1.CompletionStatus_name[int32(e.Done.GetStatus())]; !ok {
			return bad("done.status", "unknown status %d", e.Done.GetStatus())
		}
	default:
		return bad("event", "set one of admitted, first_token, progress or done")
	}
	for field, v := range nonNeg {
		if v < 0 {
			return bad(field, "must not be negative, got %d", v)
		}
	}
	return nil
}
