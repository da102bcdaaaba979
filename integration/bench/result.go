package bench

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Result is what a run measured; it marshals to the JSON the bench command writes.
type Result struct {
	Started   time.Time  `json:"started"`
	Machine   Machine    `json:"machine"`
	Setup     Setup      `json:"setup"`
	Picks     Picks      `json:"picks"`
	Lifecycle *Lifecycle `json:"lifecycle,omitempty"`
	KV        KV         `json:"kv"`
	// Server is the router's process (nil when not sampled); Client is this process.
	Server *Process `json:"server,omitempty"`
	Client *Process `json:"client,omitempty"`
}

// Machine describes where the run happened.
type Machine struct {
	CPUs      int     `json:"cpus"`
	CPUModel  string  `json:"cpu_model"`
	MemoryGB  float64 `json:"memory_gb"`
	GoVersion string  `json:"go_version"`
	OSArch    string  `json:"os_arch"`
	// LoadBefore and LoadAfter are /proc/loadavg at the start and the end (other work on the
	// machine shows there).
	LoadBefore string `json:"load_before"`
	LoadAfter  string `json:"load_after"`
}

// Setup echoes the configuration that shaped the load.
type Setup struct {
	Addr             string  `json:"addr"`
	Protocol         string  `json:"protocol"`
	Mode             string  `json:"mode"`
	Rate             float64 `json:"rate,omitempty"`
	Workers          int     `json:"workers"`
	Premarshal       bool    `json:"premarshal"`
	Replicas         int     `json:"replicas"`
	Policy           string  `json:"policy,omitempty"`
	DryRun           bool    `json:"dry_run,omitempty"`
	Prompts          string  `json:"prompts"`
	MeanPromptTokens int     `json:"mean_prompt_tokens"`
	Lifecycle        bool    `json:"lifecycle"`
	KVRate           float64 `json:"kv_rate"`
	PreloadBlocks    int     `json:"preload_blocks"`
	PreloadSeconds   float64 `json:"preload_seconds"`
	WarmupSeconds    float64 `json:"warmup_seconds"`
	DurationSeconds  float64 `json:"duration_seconds"`
}

// Picks is the measured picks: those due in the measured window.
type Picks struct {
	// Scheduled is, in fixed mode, the picks due in the window; Unsent those of them the
	// client never sent (every caller stayed busy until the window closed: the server did not
	// keep up). Sent is the picks sent of those due in the window.
	Scheduled int64            `json:"scheduled,omitempty"`
	Unsent    int64            `json:"unsent,omitempty"`
	Sent      int64            `json:"sent"`
	OK        int64            `json:"ok"`
	Errors    int64            `json:"errors"`
	ByKind    map[string]int64 `json:"errors_by_kind,omitempty"`
	PerSecond float64          `json:"per_second"`
	// Late counts fixed-rate picks sent more than 2 ms after their scheduled time (every
	// caller was busy).
	Late int64 `json:"late"`
	// Latency runs from the scheduled time to the answer (in fixed mode; a pick released
	// within 2 ms of its schedule, the granularity of the dispatcher's timer, counts from its
	// release); Service from the send to the answer.
	Latency Latency `json:"latency"`
	Service Latency `json:"service"`
	// CachedShare is the share of prompt tokens the router predicted cached on its choice.
	CachedShare float64 `json:"cached_share"`
}

// Lifecycle counts the lifecycle events: reported in the window (rate), and over the run as
// the reporter and the server accounted for them.
type Lifecycle struct {
	ReportedPerSecond float64 `json:"reported_per_second"`
	Reported          int64   `json:"reported"`
	Delivered         int64   `json:"delivered"`
	Dropped           int64   `json:"dropped"`
	Rejected          int64   `json:"rejected"`
	Applied           int64   `json:"applied"`
	UnknownRequest    int64   `json:"unknown_request"`
	Stale             int64   `json:"stale"`
	Failures          int64   `json:"stream_failures"`
}

// KV counts the simulated engines' KV events: block events published in the window (rate),
// and over the run the events the server confirmed.
type KV struct {
	BlockEventsPerSecond float64 `json:"block_events_per_second"`
	BlockEvents          int64   `json:"block_events"`
	Events               int64   `json:"events"`
	Applied              int64   `json:"events_applied"`
	Rejected             int64   `json:"events_rejected"`
	Failures             int64   `json:"publish_failures"`
	FirstError           string  `json:"first_error,omitempty"`
}

// machine describes this machine from /proc (best effort).
func machine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OSArch: runtime.GOOS + "/" + runtime.GOARCH, LoadBefore: loadavg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				m.CPUModel = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			m.MemoryGB = float64(kb) / (1 << 20)
		}
	}
	return m
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

// WriteText writes a human-readable summary of r.
func (r *Result) WriteText(w io.Writer) error {
	s, p := &r.Setup, &r.Picks
	load := fmt.Sprintf("%s closed loop, %d workers", s.Protocol, s.Workers)
	if s.Mode == ModeFixed {
		load = fmt.Sprintf("%s fixed %.0f picks/s (at most %d in flight)", s.Protocol, s.Rate, s.Workers)
	}
	var b strings.Builder
	enc := "each request encoded"
	if s.Premarshal {
		enc = "prompts pre-encoded"
	}
	if s.DryRun {
		enc += ", dry runs"
	}
	fmt.Fprintf(&b, "switchyard bench: %s against %s, %d replicas, %s (%s)\n", load, s.Addr, s.Replicas, s.Prompts, enc)
	fmt.Fprintf(&b, "  measured %.0fs after a %.0fs warm-up; machine %d CPUs %s, load %s -> %s\n",
		s.DurationSeconds, s.WarmupSeconds, r.Machine.CPUs, r.Machine.CPUModel, r.Machine.LoadBefore, r.Machine.LoadAfter)
	if p.Scheduled > 0 {
		fmt.Fprintf(&b, "schedule   %d picks due in the window, %d never sent (the client waited for busy callers)\n", p.Scheduled, p.Unsent)
	}
	fmt.Fprintf(&b, "picks      %d sent, %d ok, %d errors%s, %d late: %.1f picks/s; cached %.1f%% of prompt tokens\n",
		p.Sent, p.OK, p.Errors, kinds(p.ByKind), p.Late, p.PerSecond, 100*p.CachedShare)
	fmt.Fprintf(&b, "latency    %s (due -> answer)\n", latencyText(p.Latency))
	fmt.Fprintf(&b, "service    %s (send -> answer)\n", latencyText(p.Service))
	if l := r.Lifecycle; l != nil {
		fmt.Fprintf(&b, "lifecycle  %.0f events/s reported; over the run %d reported, %d delivered, %d dropped, %d rejected; server applied %d, unknown %d, stale %d; %d stream failures\n",
			l.ReportedPerSecond, l.Reported, l.Delivered, l.Dropped, l.Rejected, l.Applied, l.UnknownRequest, l.Stale, l.Failures)
	}
	k := &r.KV
	fmt.Fprintf(&b, "kv         %.0f block events/s published; over the run %d block events in %d events, server applied %d, rejected %d; %d publish failures; preload %d blocks in %.1fs\n",
		k.BlockEventsPerSecond, k.BlockEvents, k.Events, k.Applied, k.Rejected, k.Failures, s.PreloadBlocks, s.PreloadSeconds)
	if k.FirstError != "" {
		fmt.Fprintf(&b, "           first KV failure: %s\n", k.FirstError)
	}
	for _, pr := range []struct {
		name string
		p    *Process
	}{{"server", r.Server}, {"client", r.Client}} {
		switch {
		case pr.p == nil:
		case pr.p.Error != "":
			fmt.Fprintf(&b, "%-10s pid %d: %s\n", pr.name, pr.p.PID, pr.p.Error)
		default:
			fmt.Fprintf(&b, "%-10s pid %d: CPU %.0f%% of a core; RSS %.0f -> %.0f MB (max %.0f, trend %+.1f MB/min)\n",
				pr.name, pr.p.PID, pr.p.CPUPercent, pr.p.RSSStartMB, pr.p.RSSEndMB, pr.p.RSSMaxMB, pr.p.RSSSlopeMBPerMn)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func latencyText(l Latency) string {
	return fmt.Sprintf("p50 %s  p90 %s  p99 %s  p99.9 %s  max %s  mean %s",
		us(l.P50), us(l.P90), us(l.P99), us(l.P999), us(l.Max), us(l.Mean))
}

// us formats microseconds with a unit that keeps three significant digits.
func us(v float64) string {
	if v >= 1000 {
		return fmt.Sprintf("%.2fms", v/1000)
	}
	return fmt.Sprintf("%.0fµs", v)
}

func kinds(m map[string]int64) string {
	if len(m) == 0 {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return " (" + strings.Join(parts, ", ") + ")"
}
