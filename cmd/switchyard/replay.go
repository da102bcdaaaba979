package main

import (
	"context"
	"errors"
	"io"

	"github.com/switchyard-llm/switchyard/integration/sim/cli"
)

// runReplay is `switchyard replay`: simulate a workload on a fleet under several routing
// policies and compare them side by side (see integration/sim/cli and docs/replay.md).
func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := cli.Run(ctx, args, stdout, stderr)
	if errors.Is(err, cli.ErrUsage) {
		return errUsage // already explained on stderr
	}
	return err
}
