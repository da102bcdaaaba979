package sim

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// palette colours plot lines (Tableau 10).
var palette = []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}

// plot is a rectangle of an SVG with data coordinates mapped into it.
type plot struct {
	b                      *strings.Builder
	x0, y0, w, h           float64 // pixel frame
	xmin, xmax, ymin, ymax float64
	logX                   bool
}

func (p *plot) px(x float64) float64 {
	if p.logX {
		lx, lo, hi := math.Log10(x), math.Log10(p.xmin), math.Log10(p.xmax)
		return p.x0 + (lx-lo)/(hi-lo)*p.w
	}
	return p.x0 + (x-p.xmin)/(p.xmax-p.xmin)*p.w
}

func (p *plot) py(y float64) float64 { return p.y0 + p.h - (y-p.ymin)/(p.ymax-p.ymin)*p.h }

func (p *plot) frame(title, xlabel, ylabel string) {
	fmt.Fprintf(p.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#888"/>`+"\n", p.x0, p.y0, p.w, p.h)
	fmt.Fprintf(p.b, `<text x="%.1f" y="%.1f" font-size="13" text-anchor="middle">%s</text>`+"\n", p.x0+p.w/2, p.y0-6, html.EscapeString(title))
	fmt.Fprintf(p.b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle">%s</text>`+"\n", p.x0+p.w/2, p.y0+p.h+30, html.EscapeString(xlabel))
	fmt.Fprintf(p.b, `<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" transform="rotate(-90 %.1f %.1f)">%s</text>`+"\n",
		p.x0-40, p.y0+p.h/2, p.x0-40, p.y0+p.h/2, html.EscapeString(ylabel))
}

func (p *plot) tickX(x float64, label string) {
	fmt.Fprintf(p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" font-size="10" text-anchor="middle">%s</text>`+"\n",
		p.px(x), p.y0, p.px(x), p.y0+p.h, p.px(x), p.y0+p.h+14, label)
}

func (p *plot) tickY(y float64, label string) {
	fmt.Fprintf(p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/><text x="%.1f" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n",
		p.x0, p.py(y), p.x0+p.w, p.py(y), p.x0-4, p.py(y)+3, label)
}

func (p *plot) line(xs, ys []float64, color string) {
	var pts strings.Builder
	for i := range xs {
		fmt.Fprintf(&pts, "%.1f,%.1f ", p.px(xs[i]), p.py(ys[i]))
	}
	fmt.Fprintf(p.b, `<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>`+"\n", color, strings.TrimSpace(pts.String()))
}

func (p *plot) legend(labels []string) {
	for i, l := range labels {
		y := p.y0 + 14 + float64(i)*14
		fmt.Fprintf(p.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"/><text x="%.1f" y="%.1f" font-size="11">%s</text>`+"\n",
			p.x0+p.w+10, y-4, p.x0+p.w+28, y-4, palette[i%len(palette)], p.x0+p.w+32, y, html.EscapeString(l))
	}
}

func svgOpen(b *strings.Builder, w, h float64) {
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif">`+"\n", w, h)
	fmt.Fprintf(b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
}

// TTFTCDFSVG plots every policy's TTFT CDF (log time axis).
func TTFTCDFSVG(rep *Report) []byte {
	var b strings.Builder
	svgOpen(&b, 900, 420)
	lo, hi := math.Inf(1), 0.0
	for _, r := range rep.Results {
		for _, v := range r.TTFTCDF {
			if v > 0 {
				lo, hi = min(lo, v), max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = 0.001, 1
	}
	lo, hi = math.Pow(10, math.Floor(math.Log10(lo))), math.Pow(10, math.Ceil(math.Log10(hi)))
	p := plot{b: &b, x0: 70, y0: 30, w: 620, h: 330, xmin: lo, xmax: hi, ymin: 0, ymax: 1, logX: true}
	p.frame("TTFT CDF — "+rep.Workload.Name, "time to first token (s, log scale)", "fraction of requests")
	for x := lo; x <= hi*1.001; x *= 10 {
		p.tickX(x, fmt.Sprintf("%g", x))
	}
	for y := 0.0; y <= 1.0001; y += 0.25 {
		p.tickY(y, fmt.Sprintf("%.2f", y))
	}
	var labels []string
	for i, r := range rep.Results {
		labels = append(labels, r.Label)
		var xs, ys []float64
		for q, v := range r.TTFTCDF {
			xs, ys = append(xs, max(v, lo)), append(ys, float64(q)/100)
		}
		p.line(xs, ys, palette[i%len(palette)])
	}
	p.legend(labels)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// DecodeBlocksSVG plots, per policy, every replica's active decode blocks over time on one
// shared scale.
func DecodeBlocksSVG(rep *Report) []byte {
	var b strings.Builder
	const panelH, gap = 150.0, 60.0
	svgOpen(&b, 900, 40+float64(len(rep.Results))*(panelH+gap))
	ymax, tmax := 1.0, 1.0
	for _, r := range rep.Results {
		for _, s := range r.DecodeBlocks.Replicas {
			for _, v := range s {
				ymax = max(ymax, v)
			}
			tmax = max(tmax, float64(len(s))*r.DecodeBlocks.BinSeconds)
		}
	}
	for i, r := range rep.Results {
		p := plot{b: &b, x0: 70, y0: 30 + float64(i)*(panelH+gap), w: 620, h: panelH, xmin: 0, xmax: tmax, ymin: 0, ymax: ymax}
		p.frame(fmt.Sprintf("%s — active decode KV blocks per replica (CV %.2f)", r.Label, r.DecodeBlockCV), "time (s)", "blocks")
		for k := 0; k <= 4; k++ {
			p.tickX(tmax*float64(k)/4, fmt.Sprintf("%.0f", tmax*float64(k)/4))
			p.tickY(ymax*float64(k)/4, fmt.Sprintf("%.0f", ymax*float64(k)/4))
		}
		var labels []string
		for k, s := range r.DecodeBlocks.Replicas {
			xs, ys := thin(s, r.DecodeBlocks.BinSeconds, 250)
			p.line(xs, ys, palette[k%len(palette)])
			if i == 0 {
				labels = append(labels, r.Replicas[k].ID)
			}
		}
		p.legend(labels)
	}
	b.WriteString("</svg>\n")
	return []byte(b.String())
}

// thin averages a series into at most n points, returning bin-centre times and values.
func thin(s []float64, binSec float64, n int) (xs, ys []float64) {
	g := max(1, (len(s)+n-1)/n)
	for i := 0; i < len(s); i += g {
		end := min(len(s), i+g)
		xs = append(xs, (float64(i)+float64(end-i)/2)*binSec)
		ys = append(ys, mean(s[i:end]))
	}
	return xs, ys
}
