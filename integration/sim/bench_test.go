package sim

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/switchyard-llm/switchyard/integration/workload"
)

// conversationTrace is the public Mooncake trace beside the repository (never copied into it).
const conversationTrace = "../../../shared/traces/mooncake/conversation_trace.jsonl"

// BenchmarkMooncakeReplay simulates the Mooncake conversation trace on 8 replicas under
// token_load and reports the run's time against a floor measured in the same iteration: just
// expanding every request's tokens once, which any replay must do.
func BenchmarkMooncakeReplay(b *testing.B) {
	f, err := os.Open(conversationTrace)
	if err != nil {
		b.Skipf("trace not available: %v", err)
	}
	w, err := workload.ReadMooncake(f, "conversation_trace.jsonl")
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{Replicas: 8, Engine: DefaultEngine(), Replay: workload.ReplayConfig{Jitter: 3 * time.Second}}
	v, _ := ParseVariant("token_load")
	var floor, simulate time.Duration
	for b.Loop() {
		t0 := time.Now()
		var buf []uint32
		for i := range w.Requests {
			buf = w.Tokens(buf[:0], i)
		}
		t1 := time.Now()
		if _, err := Run(context.Background(), w, cfg, v); err != nil {
			b.Fatal(err)
		}
		floor, simulate = floor+t1.Sub(t0), simulate+time.Since(t1)
	}
	b.ReportMetric(floor.Seconds()/float64(b.N), "floor-s/op")
	b.ReportMetric(simulate.Seconds()/float64(b.N), "sim-s/op")
	b.ReportMetric(simulate.Seconds()/floor.Seconds(), "sim/floor")
}
