// Command switchyard is the routing control plane for LLM engine fleets.
//
//	switchyard serve       run the router (gRPC, Connect and JSON on one port; --demo adds a simulated fleet)
//	switchyard pick        send one PickReplica and print the decision
//	switchyard decisions   show recorded decisions (get ID | tail -follow)
//	switchyard replay      simulate a workload on a fleet and compare routing policies
//	switchyard bench       load a running router and report latency, throughput, CPU and RSS
//	switchyard engine-sim  run one simulated vLLM replica
//	switchyard version     print the build's version
//
// Run `switchyard <command> -h` for a command's flags.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"serve", "run the router", runServe},
		{"pick", "send one PickReplica to a running router and print the decision", runPick},
		{"decisions", "show a router's recorded decisions: get REQUEST_ID | tail [-follow]", runDecisions},
		{"replay", "simulate a workload on a fleet and compare routing policies", runReplay},
		{"bench", "drive a router with picks, lifecycle and KV events; report latency, throughput, CPU, RSS", runBench},
		{"engine-sim", "run one simulated vLLM replica (completions, KV events, metrics)", runEngineSim},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.Is(err, errUsage):
			return 2
		}
		fmt.Fprintf(stderr, "switchyard %s: %v\n", c.name, err)
		return 1
	}
	fmt.Fprintf(stderr, "switchyard: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

// errUsage reports bad command-line usage whose message was already printed.
var errUsage = errors.New("usage error")

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: switchyard <command> [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'switchyard <command> -h' for the command's flags.")
}
