package server

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"strconv"
	"strings"
	"time"
)

// Profiling endpoints, served under /debug/pprof/ on the server's port when Config.Pprof is
// set, in the format `go tool pprof` and `go tool trace` read:
//
//	GET /debug/pprof/                     index of the profiles
//	GET /debug/pprof/profile?seconds=30   CPU profile
//	GET /debug/pprof/trace?seconds=5      execution trace
//	GET /debug/pprof/NAME?debug=N&gc=1    heap, allocs, goroutine, mutex, block, threadcreate
//
// They are written here on runtime/pprof rather than by importing net/http/pprof, whose init
// registers the handlers on http.DefaultServeMux as a side effect.

// maxProfileSeconds bounds the duration of one CPU profile or trace request.
const maxProfileSeconds = 300

// registerPprof adds the profiling endpoints to mux.
func registerPprof(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/{$}", pprofIndex)
	mux.HandleFunc("GET /debug/pprof/profile", pprofCPU)
	mux.HandleFunc("GET /debug/pprof/trace", pprofTrace)
	mux.HandleFunc("GET /debug/pprof/{name}", pprofNamed)
}

func pprofIndex(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	var b strings.Builder
	b.WriteString("profile?seconds=N  CPU profile\ntrace?seconds=N    execution trace\n")
	for _, p := range pprof.Profiles() {
		fmt.Fprintf(&b, "%-18s %d\n", p.Name(), p.Count())
	}
	_, _ = w.Write([]byte(b.String()))
}

// seconds reads the seconds parameter (default def, at most maxProfileSeconds).
func seconds(r *http.Request, def int) (time.Duration, error) {
	s := r.FormValue("seconds")
	if s == "" {
		return time.Duration(def) * time.Second, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 || n > maxProfileSeconds {
		return 0, fmt.Errorf("seconds: want 1..%d, got %q", maxProfileSeconds, s)
	}
	return time.Duration(n) * time.Second, nil
}

// sleepOrDone waits d or until the client goes away.
func sleepOrDone(r *http.Request, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.Context().Done():
	}
}

func pprofCPU(w http.ResponseWriter, r *http.Request) {
	timedProfile(w, r, 30, "profile", pprof.StartCPUProfile, pprof.StopCPUProfile)
}

func pprofTrace(w http.ResponseWriter, r *http.Request) {
	timedProfile(w, r, 1, "trace", trace.Start, trace.Stop)
}

// timedProfile records a profile for the requested seconds (default def) between start and
// stop and streams it as an attachment named name.
func timedProfile(w http.ResponseWriter, r *http.Request, def int, name string, start func(io.Writer) error, stop func()) {
	d, err := seconds(r, def)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	if err := start(w); err != nil {
		http.Error(w, name+": "+err.Error(), http.StatusConflict) // one already running
		return
	}
	sleepOrDone(r, d)
	stop()
}

func pprofNamed(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	p := pprof.Lookup(name)
	if p == nil {
		http.Error(w, fmt.Sprintf("unknown profile %q", name), http.StatusNotFound)
		return
	}
	debug, _ := strconv.Atoi(r.FormValue("debug"))
	if name == "heap" && r.FormValue("gc") != "" {
		runtime.GC()
	}
	if debug > 0 {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
	}
	if err := p.WriteTo(w, debug); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
	}
}
