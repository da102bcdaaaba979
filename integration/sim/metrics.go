package sim

import (
	"math"
	"slices"
)

// dropReason says why a request was not served.
type dropReason uint8

const (
	dropNone      dropReason = iota
	dropTooLong              // prompt + output exceed the engine's max model length
	dropPickError            // the router returned an error
)

// String names the reason as reported in Result.Dropped.
func (d dropReason) String() string {
	return [...]string{"", "too_long", "pick_error"}[d]
}

// reqRecord is what the simulation measured of one request.
type reqRecord struct {
	arrival, first, done int64 // ns
	replica              int16 // -1 = not routed
	cached               int32 // engine-reported cached prompt tokens
	preemptions          int32
	issued               bool
	dropped              dropReason
}

func (r *reqRecord) completed() bool { return r.issued && r.dropped == dropNone && r.done > 0 }

// result computes the run's measurements.
func (s *simulation) result() *Result {
	res := &Result{
		Label: s.v.Label, Policy: s.v.Policy, Params: s.v.Params,
		OutputEstimate: s.v.OutputEstimate, Oracle: s.v.Oracle,
		Dropped: map[string]int{}, Replicas: make([]ReplicaResult, len(s.engines)),
	}
	if res.Params == nil {
		res.Params = map[string]float64{}
	}
	var ttft, tpot, e2e []float64
	var prompt, cached, output int64
	var start, end int64 = math.MaxInt64, 0
	for i := range s.recs {
		r := &s.recs[i]
		if !r.issued {
			continue
		}
		res.Issued++
		start = min(start, r.arrival)
		if r.dropped != dropNone {
			res.Dropped[r.dropped.String()]++
			continue
		}
		if !r.completed() {
			res.Dropped["unfinished"]++
			continue
		}
		res.Completed++
		q := &s.w.Requests[i]
		end = max(end, r.done)
		ttft = append(ttft, seconds(r.first-r.arrival))
		e2e = append(e2e, seconds(r.done-r.arrival))
		if q.OutputLength > 1 {
			tpot = append(tpot, seconds(r.done-r.first)/float64(q.OutputLength-1))
		}
		prompt += int64(q.InputLength)
		cached += int64(r.cached)
		output += int64(q.OutputLength)
		rr := &res.Replicas[r.replica]
		rr.Requests++
		rr.PromptTokens += int64(q.InputLength)
		rr.CachedPromptTokens += int64(r.cached)
		rr.OutputTokens += int64(q.OutputLength)
	}
	res.TTFT, res.TPOT, res.E2E = dist(ttft), dist(tpot), dist(e2e)
	res.TTFTCDF = cdf(ttft)
	res.SessionE2E = dist(s.sessionLatencies())
	if end > start {
		res.MakespanSeconds = seconds(end - start)
		res.OutputTokensPerSecond = float64(output) / res.MakespanSeconds
	}
	res.PrefixHitRate = ratio(float64(cached), float64(prompt))
	s.replicaResults(res, end)
	s.routerResult(res)
	return res
}

// sessionLatencies returns, per fully completed session, its first turn's arrival to its last
// turn's completion.
func (s *simulation) sessionLatencies() []float64 {
	var out []float64
	for _, reqs := range s.w.Sessions() {
		ok := true
		for _, i := range reqs {
			ok = ok && s.recs[i].completed()
		}
		if ok {
			out = append(out, seconds(s.recs[reqs[len(reqs)-1]].done-s.recs[reqs[0]].arrival))
		}
	}
	return out
}

// replicaResults fills per-replica shares, balance ratios and the decode-block series.
func (s *simulation) replicaResults(res *Result, end int64) {
	bins := int(end/s.bin) + 1
	means := make([][]float64, len(s.engines))
	var reqs, toks []float64
	for k, e := range s.engines {
		e.series.advance(end, s.bin)
		means[k] = e.series.means(bins, s.bin)
		rr := &res.Replicas[k]
		rr.ID, rr.Preemptions, rr.Steps = e.id, e.preemptions, e.steps
		rr.PrefixHitRate = ratio(float64(rr.CachedPromptTokens), float64(rr.PromptTokens))
		rr.MeanDecodeBlocks = mean(means[k])
		if end > 0 {
			rr.BusyFraction = float64(e.busyNS) / float64(end)
		}
		res.Preemptions += e.preemptions
		reqs = append(reqs, float64(rr.Requests))
		toks = append(toks, float64(rr.PromptTokens+rr.OutputTokens))
	}
	res.MaxMeanRequests = ratio(slices.Max(reqs), mean(reqs))
	res.MaxMeanTokens = ratio(slices.Max(toks), mean(toks))
	res.DecodeBlockCV = meanCV(means, bins)
	res.DecodeBlocks = downsample(means, bins, s.cfg.Bin.Seconds(), 500)
}

// routerResult copies the router's and index's counters.
func (s *simulation) routerResult(res *Result) {
	c := s.router.Counters()
	rr := RouterResult{
		Picks: c.Picks, PickErrors: s.stats.pickErrors, Expired: c.Expired, Clamped: c.Clamped,
		LifecycleUnknown: s.stats.lifecycleUnknown, LifecycleRejected: s.stats.lifecycleRejected,
		StoredEvents: s.stats.storedEvents, RemovedBlocks: s.stats.removedBlocks,
		KVRejected: map[string]uint64{},
	}
	for k, v := range s.stats.kvRejected {
		rr.KVRejected[k] = v
	}
	if ix := s.router.Index(model); ix != nil {
		st := ix.Stats()
		rr.IndexBlocks, rr.IndexUnknownRemove = st.Blocks, st.UnknownRemoved
	}
	res.Router = rr
}

// meanCV averages, over bins where the fleet has any decode blocks, the coefficient of
// variation (population standard deviation over mean) across replicas.
func meanCV(series [][]float64, bins int) float64 {
	var sum float64
	n := 0
	vals := make([]float64, len(series))
	for b := range bins {
		for k := range series {
			vals[k] = series[k][b]
		}
		m := mean(vals)
		if m <= 0 {
			continue
		}
		var v float64
		for _, x := range vals {
			v += (x - m) * (x - m)
		}
		sum += math.Sqrt(v/float64(len(vals))) / m
		n++
	}
	return ratio(sum, float64(n))
}

// downsample averages groups of bins so that at most limit remain, rounding to 0.1 block.
func downsample(series [][]float64, bins int, binSec float64, limit int) Series {
	group := max(1, (bins+limit-1)/limit)
	out := Series{BinSeconds: binSec * float64(group), Replicas: make([][]float64, len(series))}
	for k, s := range series {
		for b := 0; b < bins; b += group {
			end := min(bins, b+group)
			out.Replicas[k] = append(out.Replicas[k], math.Round(mean(s[b:end])*10)/10)
		}
	}
	return out
}

func dist(x []float64) Dist {
	if len(x) == 0 {
		return Dist{}
	}
	s := slices.Clone(x)
	slices.Sort(s)
	return Dist{N: len(s), Mean: mean(s), P50: quantile(s, 0.5), P90: quantile(s, 0.9), P99: quantile(s, 0.99), Max: s[len(s)-1]}
}

// cdf returns the sorted values at quantiles 0, 0.01, …, 1.
func cdf(x []float64) []float64 {
	if len(x) == 0 {
		return nil
	}
	s := slices.Clone(x)
	slices.Sort(s)
	out := make([]float64, 101)
	for i := range out {
		out[i] = quantile(s, float64(i)/100)
	}
	return out
}

// quantile is the nearest-rank quantile of sorted s (q = 0 gives the minimum).
func quantile(s []float64, q float64) float64 {
	k := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(len(s)-1, max(0, k))]
}

func mean(x []float64) float64 {
	var t float64
	for _, v := range x {
		t += v
	}
	return ratio(t, float64(len(x)))
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func seconds(ns int64) float64 { return float64(ns) / 1e9 }
