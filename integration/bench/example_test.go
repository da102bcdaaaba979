package bench_test

import (
	"fmt"
	"time"

	"github.com/switchyard-llm/switchyard/integration/bench"
)

// A Histogram keeps latencies in log-linear buckets; its quantiles are within 1/64 of the
// recorded values.
func ExampleHistogram() {
	var h bench.Histogram
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	s := h.Summary()
	fmt.Printf("%d recorded; p50 ~%.0fµs, p99 ~%.0fµs, max %.0fµs\n", s.Count, s.P50, s.P99, s.Max)
	// Output: 1000 recorded; p50 ~502µs, p99 ~987µs, max 1000µs
}

// Validate names the first field of a Config that is out of range.
func ExampleConfig_Validate() {
	c := bench.DefaultConfig()
	c.Mode = "sometimes"
	fmt.Println(c.Validate())
	// Output: bench: invalid config: mode: want fixed or closed, got "sometimes"
}
