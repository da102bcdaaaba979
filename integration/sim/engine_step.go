package sim

// stepOutput is what a finished step produced for the data plane.
type stepOutput struct {
	first    []*seq // first token this step
	progress []*seq // crossed a progress report boundary
	done     []*seq // finished this step (already off the engine)
}

func (o *stepOutput) reset() {
	o.first, o.progress, o.done = o.first[:0], o.progress[:0], o.done[:0]
}

// finishStep applies the scheduled step: computed tokens advance, a sequence whose known
// tokens are all computed samples its next token, finished sequences release their blocks.
func (e *engine) finishStep(out *stepOutput, every int) {
	finished := false
	for _, s := range e.sched {
		s.computed += s.sched
		s.sched = 0
		if s.computed < s.known {
			continue
		}
		s.generated++
		s.known++
		if s.generated == 1 {
			out.first = append(out.first, s)
		}
		switch {
		case s.generated == s.output:
			s.done, finished = true, true
			out.done = append(out.done, s)
		case s.generated%every == 0:
			out.progress = append(out.progress, s)
		}
	}
	if finished {
		keep := e.running[:0]
		for _, s := range e.running {
			if !s.done {
				keep = append(keep, s)
			}
		}
		clear(e.running[len(keep):])
		e.running = keep
		for _, s := range out.done {
			e.freeBlocks(s)
		}
	}
}

// decodeBlocks is the KV blocks held by requests past their first token.
func (e *engine) decodeBlocks() float64 {
	n := 0
	for _, s := range e.running {
		if s.generated > 0 {
			n += len(s.blocks)
		}
	}
	return float64(n)
}

// decodeSeries integrates a piecewise-constant value (active decode blocks) over fixed bins.
type decodeSeries struct {
	acc   []float64 // Σ value·ns per bin
	lastT int64
	lastV float64
}

// set records that the value changes to v at time now (ns).
func (d *decodeSeries) set(now int64, v float64, bin int64) {
	d.advance(now, bin)
	d.lastV = v
}

// advance integrates the current value up to now.
func (d *decodeSeries) advance(now int64, bin int64) {
	if d.lastV != 0 {
		for t := d.lastT; t < now; {
			b := t / bin
			end := min(now, (b+1)*bin)
			for int(b) >= len(d.acc) {
				d.acc = append(d.acc, 0)
			}
			d.acc[b] += d.lastV * float64(end-t)
			t = end
		}
	}
	d.lastT = now
}

// means returns the average value of each of n bins.
func (d *decodeSeries) means(n int, bin int64) []float64 {
	out := make([]float64, n)
	for i := range min(n, len(d.acc)) {
		out[i] = d.acc[i] / float64(bin)
	}
	return out
}
