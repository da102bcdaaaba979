package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard-llm/switchyard/integration/bench"
)

// runBench is `switchyard bench`: drive a router over the wire with picks, lifecycle events
// and KV events at once, and report latency, throughput and the router's CPU and memory (see
// integration/bench and docs/performance.md).
func runBench(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg bench.Config
	cfg.RegisterFlags(fs)
	jsonPath := fs.String("json", "", "also write the result as JSON to this file (- = stdout, instead of the text summary)")
	quiet := fs.Bool("quiet", false, "no progress line")
	spawn := fs.Bool("spawn", false, "start a router for the run: this binary's serve command on a free local port (then -addr is ignored)")
	serveArgs := fs.String("serve-args", "", "with -spawn: extra flags for the serve command, space-separated")
	cpuProfile := fs.String("cpuprofile", "", "write this process's (the load generator's) CPU profile to this file")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchyard bench [flags]\n\nDrives a running router (or one started with -spawn) and reports pick latency, throughput,\nlifecycle and KV event rates, and the router's CPU and RSS when it runs on this machine.\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return fmt.Errorf("unexpected arguments %q: %w", fs.Args(), errUsage)
	}
	if !*quiet {
		cfg.Progress = stderr
	}
	if *spawn {
		addr, pid, stop, err := spawnServer(ctx, strings.Fields(*serveArgs), stderr)
		if err != nil {
			return err
		}
		defer stop()
		cfg.Addr = addr
		if cfg.ServerPID == 0 {
			cfg.ServerPID = pid
		}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	res, err := bench.Run(ctx, cfg)
	if errors.Is(err, bench.ErrConfig) {
		fs.Usage()
		return fmt.Errorf("%v: %w", err, errUsage)
	}
	if res == nil {
		return err
	}
	if werr := writeBenchResult(res, *jsonPath, stdout); werr != nil {
		return errors.Join(err, werr)
	}
	return err
}

// writeBenchResult prints the text summary (unless the JSON goes to stdout) and the JSON.
func writeBenchResult(res *bench.Result, jsonPath string, stdout io.Writer) error {
	if jsonPath != "-" {
		if err := res.WriteText(stdout); err != nil {
			return err
		}
	}
	if jsonPath == "" {
		return nil
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if jsonPath == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(jsonPath, b, 0o644)
}

// spawnServer starts this binary's `serve` on a free loopback port and waits until it
// accepts connections. stop ends it with SIGTERM (SIGKILL after 10 s).
func spawnServer(ctx context.Context, extra []string, stderr io.Writer) (addr string, pid int, stop func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return "", 0, nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", 0, nil, err
	}
	addr = ln.Addr().String()
	ln.Close()
	cmd := exec.Command(exe, append([]string{"serve", "-listen", addr, "-log-level", "warn"}, extra...)...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		return "", 0, nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop = func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, derr := net.DialTimeout("tcp", addr, time.Second)
		if derr == nil {
			c.Close()
			return addr, cmd.Process.Pid, stop, nil
		}
		select {
		case werr := <-exited:
			return "", 0, nil, fmt.Errorf("spawned router exited: %v", werr)
		case <-ctx.Done():
			stop()
			return "", 0, nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return "", 0, nil, fmt.Errorf("spawned router did not listen on %s within 10 s: %w", addr, derr)
		}
	}
}
