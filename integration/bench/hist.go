package bench

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// Histogram records durations in log-linear buckets: exact below 128 ns, then 64 buckets per
// power of two, so any quantile is within 1/64 (1.6%) of the true value. Record is lock-free
// and allocation-free, safe for concurrent use; the histogram covers up to about 9 hours
// (longer durations land in the last bucket).
type Histogram struct {
	counts [histBuckets]atomic.Uint64
	n, sum atomic.Uint64
	max    atomic.Int64
}

const (
	histSub     = 64 // buckets per power of two
	histBuckets = 40 * histSub
)

// bucketOf maps a duration in ns to its bucket.
func bucketOf(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - 7 // v>>shift is in [64, 128)
	return min(histBuckets-1, (shift+1)*histSub+int(v>>shift)-histSub)
}

// bucketValue is the middle of bucket b in ns.
func bucketValue(b int) uint64 {
	if b < 2*histSub {
		return uint64(b)
	}
	shift := b/histSub - 1
	lo := uint64(b%histSub+histSub) << shift
	return lo + (uint64(1)<<shift)/2
}

// Record adds one duration (negative ones count as 0).
func (h *Histogram) Record(d time.Duration) {
	v := uint64(max(d, 0))
	h.counts[bucketOf(v)].Add(1)
	h.n.Add(1)
	h.sum.Add(v)
	for {
		m := h.max.Load()
		if int64(v) <= m || h.max.CompareAndSwap(m, int64(v)) {
			return
		}
	}
}

// Count returns the number of recorded durations.
func (h *Histogram) Count() uint64 { return h.n.Load() }

// Quantile returns the duration below which a fraction q of the recorded ones fall (0 when
// nothing was recorded).
func (h *Histogram) Quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := uint64(q * float64(n))
	if rank >= n-1 {
		return time.Duration(h.max.Load()) // the largest is known exactly
	}
	var seen uint64
	for b := range h.counts {
		seen += h.counts[b].Load()
		if seen > rank {
			return min(time.Duration(bucketValue(b)), time.Duration(h.max.Load()))
		}
	}
	return time.Duration(h.max.Load())
}

// Summary returns the count, mean, max and the standard quantiles.
func (h *Histogram) Summary() Latency {
	n := h.n.Load()
	l := Latency{Count: n}
	if n == 0 {
		return l
	}
	l.Mean = micros(time.Duration(h.sum.Load() / n))
	l.Max = micros(time.Duration(h.max.Load()))
	l.P50 = micros(h.Quantile(0.50))
	l.P90 = micros(h.Quantile(0.90))
	l.P99 = micros(h.Quantile(0.99))
	l.P999 = micros(h.Quantile(0.999))
	return l
}

// Latency summarises a histogram, in microseconds.
type Latency struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean_us"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
