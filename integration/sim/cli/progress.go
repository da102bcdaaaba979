package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
)

// progress draws a progress bar on stderr for runs longer than a second. It reads the wall
// clock only to decide when to draw; the simulation never sees it.
type progress struct {
	mu      sync.Mutex
	w       io.Writer
	off     bool
	start   time.Time
	last    time.Time
	drawn   bool
	done, n int
}

func newProgress(w io.Writer, quiet bool) *progress {
	now := time.Now()
	return &progress{w: w, off: quiet, start: now, last: now}
}

// update records done of total requests; safe for concurrent use.
func (p *progress) update(done, total int) {
	if p.off {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done, p.n = done, total
	now := time.Now()
	if now.Sub(p.start) < time.Second || now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	p.draw(now)
}

func (p *progress) draw(now time.Time) {
	const width = 40
	f := float64(p.done) / float64(max(1, p.n))
	fill := int(f * width)
	fmt.Fprintf(p.w, "\r[%s%s] %5.1f%% %d/%d requests %5.1fs", strings.Repeat("#", fill), strings.Repeat(".", width-fill),
		100*f, p.done, p.n, now.Sub(p.start).Seconds())
	p.drawn = true
}

// finish completes the bar if one was drawn.
func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		p.done = p.n
		p.draw(time.Now())
		fmt.Fprintln(p.w)
	}
}
