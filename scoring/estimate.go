package scoring

// Output-length estimation: an exponentially weighted mean and a streaming high quantile of
// completed requests' output tokens, per model and per session, learned from done events.
const (
	estimateAlpha     = 0.1 // EWMA weight of a new sample
	estimateQuantile  = 0.9 // the high quantile tracked
	estimateQStep     = 0.1 // quantile step as a fraction of the running mean
	minModelSamples   = 8   // a model estimate is used from this many samples on
	minSessionSamples = 1   // a session's own history is used from its first completion
)

// OutputStats is a learned output-length estimate.
type OutputStats struct {
	Samples int     // completions observed
	Mean    float64 // exponentially weighted mean of output tokens
	P90     float64 // streaming estimate of the 90th percentile
}

// observe folds one completed request's output length in. The quantile moves up by
// step·q when a sample lands above it and down by step·(1−q) otherwise, which settles where a
// fraction q of samples lie below it; the step scales with the mean so any length scale works.
func (s *OutputStats) observe(x float64) {
	if s.Samples == 0 {
		s.Mean, s.P90 = x, x
		s.Samples = 1
		return
	}
	s.Samples++
	s.Mean += estimateAlpha * (x - s.Mean)
	step := estimateQStep * max(s.Mean, 1)
	if x > s.P90 {
		s.P90 += step * estimateQuantile
	} else {
		s.P90 = max(0, s.P90-step*(1-estimateQuantile))
	}
}

// estimator holds one model's estimates; guarded by the model's lock.
type estimator struct {
	model    OutputStats
	sessions map[string]*OutputStats
	order    []string // insertion order, for dropping the oldest session
	head     int
	max      int
	dropped  uint64
}

func (e *estimator) observe(session string, tokens int) {
	x := float64(tokens)
	e.model.observe(x)
	if session == "" || e.max == 0 {
		return
	}
	s := e.sessions[session]
	if s == nil {
		if e.sessions == nil {
			e.sessions = make(map[string]*OutputStats)
		}
		if len(e.sessions) >= e.max {
			e.dropOldest()
		}
		s = &OutputStats{}
		e.sessions[session] = s
		e.order = append(e.order, session)
	}
	s.observe(x)
}

func (e *estimator) dropOldest() {
	delete(e.sessions, e.order[e.head])
	e.order[e.head] = ""
	e.head++
	e.dropped++
	if e.head*2 > len(e.order) {
		n := copy(e.order, e.order[e.head:])
		e.order, e.head = e.order[:n], 0
	}
}

// expected returns the expected output tokens for a new request of session and where the
// estimate came from ("session" or "model"); 0 and "" when nothing is known yet.
func (e *estimator) expected(session string) (int, string) {
	if s := e.sessions[session]; s != nil && s.Samples >= minSessionSamples {
		return int(s.Mean + 0.5), "session"
	}
	if e.model.Samples >= minModelSamples {
		return int(e.model.Mean + 0.5), "model"
	}
	return 0, ""
}

// OutputEstimate returns the learned output-length statistics of a model, or of one of its
// sessions when session is non-empty; false when nothing has been learned.
func (r *Router) OutputEstimate(model, session string) (OutputStats, bool) {
	r.mu.Lock()
	p := r.pools[model]
	r.mu.Unlock()
	if p == nil {
		return OutputStats{}, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if session == "" {
		return p.est.model, p.est.model.Samples > 0
	}
	if s := p.est.sessions[session]; s != nil {
		return *s, true
	}
	return OutputStats{}, false
}
