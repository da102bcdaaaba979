package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/switchyard-llm/switchyard/integration/sim"
	"github.com/switchyard-llm/switchyard/integration/workload"
)

// Run executes `switchyard replay` with args (without the command name). Bad usage returns an
// error wrapping ErrUsage (or flag.ErrHelp for -h) after printing why to stderr.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError(stderr, err)
	}
	w, err := o.gen.load(o.workload)
	if err != nil {
		if errors.Is(err, errUsage) || errors.Is(err, workload.ErrInvalid) {
			return usageError(stderr, err)
		}
		return err
	}
	if o.writeWorkload != "" {
		return writeWorkload(o.writeWorkload, w, stderr)
	}
	variants, err := sim.ParseVariants(o.policies)
	if err != nil {
		return usageError(stderr, err)
	}
	cfg, err := o.config(w)
	if err != nil {
		return usageError(stderr, err)
	}
	bar := newProgress(stderr, o.quiet)
	cfg.Progress = bar.update
	start := time.Now()
	rep, err := sim.RunAll(ctx, w, cfg, variants, o.parallel)
	bar.finish()
	if err != nil {
		if errors.Is(err, sim.ErrInvalid) || errors.Is(err, workload.ErrInvalid) {
			return usageError(stderr, err)
		}
		return err
	}
	slog.New(slog.NewTextHandler(stderr, nil)).Info("replay finished",
		"policies", len(variants), "requests", len(w.Requests), "wall", time.Since(start).Round(time.Millisecond))
	if err := sim.WriteTable(stdout, rep); err != nil {
		return err
	}
	return writeOutputs(o, rep)
}

func usageError(stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "switchyard replay: %v\n", err)
	return fmt.Errorf("%w: %w", ErrUsage, err)
}

// writeOutputs writes the JSON report and the SVG plots when asked for.
func writeOutputs(o *options, rep *sim.Report) error {
	if o.json != "" {
		b, err := json.Marshal(rep)
		if err != nil {
			return err
		}
		if err := os.WriteFile(o.json, append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	if o.svg != "" {
		if err := os.WriteFile(o.svg+"-ttft-cdf.svg", sim.TTFTCDFSVG(rep), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(o.svg+"-decode-blocks.svg", sim.DecodeBlocksSVG(rep), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func writeWorkload(path string, w *workload.Workload, stderr io.Writer) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := workload.WriteMooncake(f, w); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %d requests of %s to %s\n", len(w.Requests), w.Name, path)
	return nil
}
