package enginesim

import (
	"fmt"
	"net/http"
	"strings"
)

// metric is one exported series.
type metric struct {
	name, kind, help string
	value            float64
}

// metrics writes vLLM's metric names in Prometheus' text format, labelled with the model.
func (h *Handler) metrics(w http.ResponseWriter, _ *http.Request) {
	s := h.eng.Snapshot()
	usage := 0.0
	if s.Stats.NumBlocks > 0 {
		usage = float64(s.Stats.UsedBlocks) / float64(s.Stats.NumBlocks)
	}
	ms := []metric{
		{"vllm:num_requests_running", "gauge", "Requests in the running batch.", float64(s.Stats.Running)},
		{"vllm:num_requests_waiting", "gauge", "Requests waiting to be admitted.", float64(s.Stats.Waiting)},
		{"vllm:kv_cache_usage_perc", "gauge", "Fraction of KV-cache blocks in use (1 = full).", usage},
		{"vllm:prefix_cache_queries_total", "counter", "Prompt tokens looked up in the prefix cache.", float64(s.Stats.PrefixQueries)},
		{"vllm:prefix_cache_hits_total", "counter", "Prompt tokens found in the prefix cache.", float64(s.Stats.PrefixHits)},
		{"vllm:prompt_tokens_total", "counter", "Prompt tokens received.", float64(s.Counters.PromptTokens)},
		{"vllm:generation_tokens_total", "counter", "Tokens generated.", float64(s.Counters.GenerationTokens)},
		{"vllm:request_success_total", "counter", "Requests that generated every token.", float64(s.Counters.Finished)},
		{"vllm:num_preemptions_total", "counter", "Requests preempted for lack of KV blocks.", float64(s.Stats.Preemptions)},
		{"enginesim_requests_aborted_total", "counter", "Requests dropped because their client went away.", float64(s.Counters.Aborted)},
		{"enginesim_kv_event_batches_total", "counter", "KV-event batches published.", float64(s.Counters.KVBatches)},
		{"enginesim_prefix_cache_blocks", "gauge", "Blocks holding a cached prefix.", float64(s.Stats.CachedBlocks)},
	}
	var b strings.Builder
	label := fmt.Sprintf(`{model_name=%q,engine="0"}`, h.model)
	for _, m := range ms {
		fmt.Fprintf(&b, "# HELP %s %s\n# TYPE %s %s\n%s%s %g\n", m.name, m.help, m.name, m.kind, m.name, label, m.value)
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}
