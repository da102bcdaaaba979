package bench

import (
	"context"
	"os"
	"sync"
	"time"
)

// sampler reads the CPU time and resident memory of the router (when local) and of this
// process once a second.
type sampler struct {
	fs        procFS
	serverPID int // 0 = not sampled

	mu             sync.Mutex
	server, client []procSample
	err            error // first failure to read the router's process
}

func (s *sampler) run(ctx context.Context) {
	s.take()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			s.take()
			return
		case <-tick.C:
			s.take()
		}
	}
}

func (s *sampler) take() {
	c, cerr := s.fs.sample(os.Getpid())
	var sv procSample
	var serr error
	if s.serverPID > 0 {
		sv, serr = s.fs.sample(s.serverPID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if cerr == nil {
		s.client = append(s.client, c)
	}
	switch {
	case s.serverPID <= 0:
	case serr != nil:
		if s.err == nil {
			s.err = serr
		}
	default:
		s.server = append(s.server, sv)
	}
}

// last returns the latest router and client samples (zero when none).
func (s *sampler) last() (server, client procSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.server); n > 0 {
		server = s.server[n-1]
	}
	if n := len(s.client); n > 0 {
		client = s.client[n-1]
	}
	return server, client
}

// Process is one process's resource use over the measured window.
type Process struct {
	PID int `json:"pid"`
	// CPUPercent is CPU time over wall time (100 = one core busy).
	CPUPercent float64 `json:"cpu_percent"`
	// RSS at the start and end of the window, its peak, and the slope of a least-squares fit
	// over the once-a-second samples (a stable footprint has a slope near zero).
	RSSStartMB      float64 `json:"rss_start_mb"`
	RSSEndMB        float64 `json:"rss_end_mb"`
	RSSMaxMB        float64 `json:"rss_max_mb"`
	RSSSlopeMBPerMn float64 `json:"rss_slope_mb_per_min"`
	// RSSMB is the RSS series, one sample a second from the start of the window.
	RSSMB []float64 `json:"rss_mb"`
	// Error says why the process could not be sampled.
	Error string `json:"error,omitempty"`
}

// window summarises the samples taken between from and to.
func window(pid int, samples []procSample, from, to time.Time) *Process {
	p := &Process{PID: pid}
	var in []procSample
	for _, s := range samples {
		if !s.at.Before(from.Add(-time.Second)) && !s.at.After(to.Add(time.Second)) {
			in = append(in, s)
		}
	}
	if len(in) < 2 {
		p.Error = "fewer than two samples in the measured window"
		return p
	}
	first, last := in[0], in[len(in)-1]
	p.CPUPercent = 100 * (last.cpu - first.cpu).Seconds() / last.at.Sub(first.at).Seconds()
	p.RSSStartMB, p.RSSEndMB = mb(first.rss), mb(last.rss)
	var sx, sy, sxx, sxy float64
	for _, s := range in {
		v := mb(s.rss)
		p.RSSMB = append(p.RSSMB, v)
		p.RSSMaxMB = max(p.RSSMaxMB, v)
		x := s.at.Sub(first.at).Minutes()
		sx, sy, sxx, sxy = sx+x, sy+v, sxx+x*x, sxy+x*v
	}
	n := float64(len(in))
	if d := n*sxx - sx*sx; d > 0 {
		p.RSSSlopeMBPerMn = (n*sxy - sx*sy) / d
	}
	return p
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
