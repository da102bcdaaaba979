package bench

import (
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestHistogramQuantilesWithinPrecision(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name string
		gen  func() time.Duration
	}{
		{"exact range", func() time.Duration { return time.Duration(rng.IntN(128)) }},
		{"microseconds", func() time.Duration { return time.Duration(50_000 + rng.IntN(400_000)) }},
		{"log-normal", func() time.Duration { return time.Duration(math.Exp(rng.NormFloat64()*1.5 + 12)) }},
		{"seconds", func() time.Duration { return time.Duration(rng.Int64N(int64(30 * time.Second))) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var h Histogram
			vals := make([]time.Duration, 20_000)
			for i := range vals {
				vals[i] = tc.gen()
				h.Record(vals[i])
			}
			slices.Sort(vals)
			for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
				want := vals[int(q*float64(len(vals)))]
				got := h.Quantile(q)
				if tol := float64(want)/histSub + 1; math.Abs(float64(got-want)) > tol {
					t.Errorf("q%.3f = %v, want %v ± %.0fns", q, got, want, tol)
				}
			}
			if got := h.Quantile(1); got != vals[len(vals)-1] {
				t.Errorf("q1 = %v, want the max %v", got, vals[len(vals)-1])
			}
		})
	}
}

func TestHistogramSummaryAndEdges(t *testing.T) {
	var h Histogram
	if s := h.Summary(); s != (Latency{}) || h.Quantile(0.5) != 0 {
		t.Fatalf("empty histogram: %+v", s)
	}
	h.Record(-time.Second) // counts as 0
	h.Record(100 * time.Microsecond)
	h.Record(300 * time.Microsecond)
	h.Record(1000 * time.Hour) // beyond the last bucket: clamped there, max kept exactly
	s := h.Summary()
	if s.Count != 4 || s.Max != micros(1000*time.Hour) || s.P50 < 298 || s.P50 > 305 {
		t.Fatalf("summary %+v", s)
	}
	if want := micros((100*time.Microsecond + 300*time.Microsecond + 1000*time.Hour) / 4); math.Abs(s.Mean-want) > 1 {
		t.Fatalf("mean %v, want %v", s.Mean, want)
	}
}

func TestHistogramConcurrentRecord(t *testing.T) {
	var h Histogram
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10_000 {
				h.Record(time.Duration(w*10_000 + i))
			}
		}()
	}
	wg.Wait()
	if h.Count() != 80_000 || h.Summary().Max != micros(79_999) {
		t.Fatalf("count %d max %v", h.Count(), h.Summary().Max)
	}
	var n uint64
	for b := range h.counts {
		n += h.counts[b].Load()
	}
	if n != 80_000 {
		t.Fatalf("buckets hold %d records", n)
	}
}

func TestBucketsAreContiguousAndOrdered(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<22; v += 1 + v/1000 {
		b := bucketOf(v)
		if b < prev || b > prev+1 && prev >= 0 && bucketOf(v-1) != prev {
			t.Fatalf("bucket of %d is %d after %d", v, b, prev)
		}
		if mid := bucketValue(b); v >= 2*histSub && (float64(mid) < float64(v)*(1-1.0/histSub) || float64(mid) > float64(v)*(1+1.0/histSub)) {
			t.Fatalf("value %d in bucket %d whose middle is %d", v, b, mid)
		}
		prev = b
	}
}
