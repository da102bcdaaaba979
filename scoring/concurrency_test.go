package scoring

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// TestParallelPicksNeverOverbook: picks of one model from many goroutines each see the
// previous bookings (select and reserve are atomic), so least_requests keeps every replica
// within one request of the others, and token_load never books a replica twice while another
// identical one is idle. Lifecycle events run concurrently. Run with -race.
func TestParallelPicksNeverOverbook(t *testing.T) {
	for _, policy := range []string{PolicyLeastRequests, PolicyTokenLoad} {
		t.Run(policy, func(t *testing.T) {
			const replicas, workers, perWorker = 8, 8, 64
			r, _ := newTestRouter(t, replicas, Config{DefaultPolicy: policy})
			ctx := context.Background()
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func(w int) {
					defer wg.Done()
					for i := 0; i < perWorker; i++ {
						id := fmt.Sprintf("w%d-%d", w, i)
						_, err := r.Pick(ctx, PickRequest{RequestID: id, Model: "m", Prompt: Prompt{Tokens: tokens(w*1000+i, 0, 64)}})
						if err != nil {
							errs <- err
							return
						}
						// Events for earlier requests and for ids never picked, interleaved.
						r.ApplyLifecycle(ctx, []LifecycleEvent{event(id, EventAdmitted), event(fmt.Sprint("ghost", w, i), EventDone)})
					}
				}(w)
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			lo, hi := 1<<30, 0
			for _, st := range r.Replicas("m") {
				lo, hi = min(lo, st.Load.ActiveRequests), max(hi, st.Load.ActiveRequests)
			}
			if hi-lo > 1 {
				t.Fatalf("active requests spread %d..%d across replicas: a pick did not see another's booking", lo, hi)
			}
			if got := totalLoad(r).ActiveRequests; got != workers*perWorker {
				t.Fatalf("%d booked, want %d", got, workers*perWorker)
			}
			if c := r.Counters(); c.UnknownLifecycle != workers*perWorker {
				t.Fatalf("unknown ids counted %d", c.UnknownLifecycle)
			}
		})
	}
}

// TestConcurrentSameRequestID: concurrent picks of one request id book it once and all get the
// same decision.
func TestConcurrentSameRequestID(t *testing.T) {
	r, _ := newTestRouter(t, 4, Config{})
	var wg sync.WaitGroup
	got := make([]*Decision, 16)
	for i := range got {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			d, err := r.Pick(context.Background(), PickRequest{RequestID: "same", Model: "m", Prompt: Prompt{Tokens: tokens(1, 0, 64)}})
			if err == nil {
				got[i] = d
			}
		}(i)
	}
	wg.Wait()
	for i, d := range got {
		if d == nil || d != got[0] {
			t.Fatalf("pick %d got %p, want the one decision %p", i, d, got[0])
		}
	}
	if n := totalLoad(r).ActiveRequests; n != 1 {
		t.Fatalf("%d bookings for one id", n)
	}
}
