package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

const decisionsUsage = `usage:
  switchyard decisions get [flags] REQUEST_ID   print one decision with its candidates' terms
  switchyard decisions tail [flags]             print recent decisions; -follow streams new ones`

// runDecisions reads the audit API of a running router.
func runDecisions(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || (args[0] != "get" && args[0] != "tail") {
		fmt.Fprintln(stderr, decisionsUsage)
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
			return flag.ErrHelp
		}
		return errUsage
	}
	fs := flag.NewFlagSet("decisions "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := decisionsOpts{}
	fs.StringVar(&o.addr, "addr", "localhost:50051", "router address (host:port)")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "deadline of each call (not of -follow's stream)")
	fs.BoolVar(&o.json, "json", false, "print decisions as JSON (one per line for tail)")
	if args[0] == "tail" {
		fs.IntVar(&o.n, "n", 20, "how many recent decisions to print (at most 1000)")
		fs.BoolVar(&o.follow, "follow", false, "keep printing new decisions until interrupted")
		fs.BoolVar(&o.candidates, "candidates", false, "print each decision's candidate table")
		fs.StringVar(&o.filter.Model, "model", "", "only this model")
		fs.StringVar(&o.filter.ReplicaId, "replica", "", "only decisions that chose this replica")
		fs.StringVar(&o.filter.Policy, "policy", "", "only this policy")
	}
	fs.Usage = func() {
		fmt.Fprintln(stderr, decisionsUsage+"\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	conn, err := grpc.NewClient(o.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	o.client = v1.NewAuditServiceClient(conn)
	o.out = stdout
	if args[0] == "get" {
		if fs.NArg() != 1 {
			return usageError(fs, "want exactly one REQUEST_ID, got %d arguments", fs.NArg())
		}
		return o.get(ctx, fs.Arg(0))
	}
	if fs.NArg() != 0 {
		return usageError(fs, "unexpected arguments %q", fs.Args())
	}
	if o.n < 0 || o.n > 1000 {
		return fmt.Errorf("-n: want 0..1000, got %d", o.n)
	}
	return o.tail(ctx)
}

// usageError prints the usage and what was wrong (run prints nothing for
// errUsage) and returns errUsage.
func usageError(fs *flag.FlagSet, format string, args ...any) error {
	fs.Usage()
	fmt.Fprintf(fs.Output(), "\nswitchyard %s: %s\n", fs.Name(), fmt.Sprintf(format, args...))
	return errUsage
}

type decisionsOpts struct {
	addr                     string
	timeout                  time.Duration
	json, follow, candidates bool
	n                        int
	filter                   v1.WatchDecisionsRequest
	client                   v1.AuditServiceClient
	out                      io.Writer
}

func (o *decisionsOpts) get(ctx context.Context, requestID string) error {
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	resp, err := o.client.GetDecision(ctx, &v1.GetDecisionRequest{RequestId: requestID})
	if err != nil {
		return err
	}
	if o.json {
		b, err := protojson.MarshalOptions{Multiline: true}.Marshal(resp.GetDecision())
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.out, string(b))
		return err
	}
	return printAuditDecision(o.out, resp.GetDecision())
}

// tail prints the last n decisions, oldest first, then with -follow the
// new ones. The watch opens before the list, so that (but for the moment the
// server takes to subscribe it) no decision falls in between; those the
// list already printed are not printed again.
func (o *decisionsOpts) tail(ctx context.Context) error {
	var stream grpc.ServerStreamingClient[v1.WatchDecisionsResponse]
	if o.follow {
		var err error
		if stream, err = o.client.WatchDecisions(ctx, &o.filter); err != nil {
			return err
		}
	}
	printed := map[string]bool{}
	if o.n > 0 {
		lctx, cancel := context.WithTimeout(ctx, o.timeout)
		list, err := o.client.ListDecisions(lctx, &v1.ListDecisionsRequest{
			Model: o.filter.GetModel(), ReplicaId: o.filter.GetReplicaId(), Policy: o.filter.GetPolicy(), Limit: int32(o.n),
		})
		cancel()
		if err != nil {
			return err
		}
		o.header()
		ds := list.GetDecisions()
		slices.Reverse(ds) // the API lists newest first
		for _, d := range ds {
			printed[d.GetDecisionId()] = true
			if err := o.line(d); err != nil {
				return err
			}
		}
	} else {
		o.header()
	}
	if stream == nil {
		return nil
	}
	for {
		msg, err := stream.Recv()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, io.EOF) || status.Code(err) == codes.Canceled {
				return nil
			}
			return err
		}
		if n := msg.GetSkipped(); n > 0 {
			fmt.Fprintf(o.out, "# %d decisions skipped: this watcher fell behind\n", n)
		}
		d := msg.GetDecision()
		if printed[d.GetDecisionId()] {
			delete(printed, d.GetDecisionId())
			continue
		}
		if err := o.line(d); err != nil {
			return err
		}
	}
}

const tailFormat = "%-24s  %-20s  %-12s  %-12s  %-16s  %7v  %7v  %5v  %s\n"

func (o *decisionsOpts) header() {
	if !o.json && !o.candidates {
		fmt.Fprintf(o.out, tailFormat, "TIME", "REQUEST", "MODEL", "POLICY", "REPLICA", "PROMPT", "CACHED", "CANDS", "")
	}
}

// line prints one decision of tail: a table row, a JSON line, or with
// -candidates the whole decision.
func (o *decisionsOpts) line(d *v1.Decision) error {
	switch {
	case o.json:
		b, err := protojson.Marshal(d)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.out, string(b))
		return err
	case o.candidates:
		if err := printAuditDecision(o.out, d); err != nil {
			return err
		}
		_, err := fmt.Fprintln(o.out)
		return err
	}
	note := ""
	if d.GetDryRun() {
		note = "dry run"
	}
	_, err := fmt.Fprintf(o.out, tailFormat, d.GetTime().AsTime().Format("2006-01-02T15:04:05.000Z07"),
		d.GetRequestId(), d.GetModel(), d.GetPolicy(), d.GetReplicaId(),
		d.GetPromptTokens(), d.GetCachedTokens(), len(d.GetCandidates()), note)
	return err
}

// printAuditDecision prints a recorded decision the way `pick` prints a
// fresh one, after a line saying when and for what it was made.
func printAuditDecision(w io.Writer, d *v1.Decision) error {
	session := d.GetSessionId()
	if session == "" {
		session = "-"
	}
	dry := ""
	if d.GetDryRun() {
		dry = ", dry run"
	}
	fmt.Fprintf(w, "%s  model %s, session %s%s\n", d.GetTime().AsTime().Format(time.RFC3339Nano), d.GetModel(), session, dry)
	// Best rank first, ineligible (rank 0) last.
	byRank := slices.Clone(d.GetCandidates())
	slices.SortStableFunc(byRank, func(a, b *v1.CandidateScore) int {
		return cmp.Compare(rankKey(a.GetRank()), rankKey(b.GetRank()))
	})
	return printDecision(w, d.GetRequestId(), &v1.PickReplicaResponse{
		ReplicaId: d.GetReplicaId(), DecisionId: d.GetDecisionId(), Fallbacks: d.GetFallbacks(),
		PromptTokens: d.GetPromptTokens(), CachedTokens: d.GetCachedTokens(), Candidates: byRank,
		Policy: d.GetPolicy(), DryRun: d.GetDryRun(),
	})
}

// rankKey orders ranks with the ineligible (0) after every ranked one.
func rankKey(r int32) int64 {
	if r == 0 {
		return math.MaxInt64
	}
	return int64(r)
}
