package switchyard_test

import (
	"context"
	"testing"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
)

// BenchmarkLifecycleEvent compares delivering lifecycle events one unary
// ReportLifecycle call each (the floor a client without batching pays) with
// queueing them on a Reporter, which streams them in batches; the reporter
// case includes the final Flush, so both count events the server applied or
// counted, and the producer flushes every 8,192 events so that the queue
// never overflows. Against the in-process server on loopback.
func BenchmarkLifecycleEvent(b *testing.B) {
	addr, stop := realServer()
	defer stop()
	c, err := switchyard.Dial(addr)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	b.Run("unary", func(b *testing.B) {
		for b.Loop() {
			if _, err := c.ReportLifecycle(ctx, switchyard.FirstToken("bench", "")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("reporter", func(b *testing.B) {
		rep, err := c.NewReporter()
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for b.Loop() {
			if err := rep.Report(switchyard.FirstToken("bench", "")); err != nil {
				b.Fatal(err)
			}
			// Report never blocks; flushing now and then keeps the
			// producer to the rate the server absorbs (no drops).
			if n++; n%8192 == 0 {
				if err := rep.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := rep.Close(ctx); err != nil {
			b.Fatal(err)
		}
		if st := rep.Stats(); st.Dropped != 0 {
			b.Fatalf("dropped %d events", st.Dropped)
		}
	})
}
