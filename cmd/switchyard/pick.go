package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/encoding/protojson"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

func runPick(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("pick", flag.ContinueOnError)
	fs.SetOutput(stderr)
	addr := fs.String("addr", "localhost:50051", "router address (host:port)")
	timeout := fs.Duration("timeout", 5*time.Second, "deadline of the call")
	req := &v1.PickReplicaRequest{}
	fs.StringVar(&req.RequestId, "request-id", "", "request id (default: a random one)")
	fs.StringVar(&req.Model, "model", "", "model name (required)")
	fs.StringVar(&req.SessionId, "session", "", "session id")
	fs.StringVar(&req.Policy, "policy", "", "policy (default: the server's)")
	fs.StringVar(&req.LoraName, "lora", "", "LoRA adapter name")
	fs.BoolVar(&req.DryRun, "dry-run", false, "score without reserving")
	tokens := fs.String("tokens", "", "prompt as comma-separated token ids")
	randomTokens := fs.Int("random-tokens", 0, "prompt of N random token ids")
	text := fs.String("text", "", "prompt as text (approximate matching)")
	candidates := fs.String("candidates", "", "comma-separated replica ids (default: all ready)")
	expected := fs.Int64("expected-output-tokens", 0, "hint: expected output length")
	asJSON := fs.Bool("json", false, "print the response as JSON")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: switchyard pick -model M (-tokens 1,2,3 | -random-tokens N | -text T) [flags]\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if req.Model == "" {
		fs.Usage()
		return fmt.Errorf("-model is required: %w", errUsage)
	}
	if req.RequestId == "" {
		req.RequestId = fmt.Sprintf("pick-%016x", rand.Uint64())
	}
	switch {
	case *tokens != "":
		ids, err := parseTokens(*tokens)
		if err != nil {
			return err
		}
		req.Prompt = &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}
	case *randomTokens > 0:
		ids := make([]uint32, *randomTokens)
		for i := range ids {
			ids[i] = rand.Uint32N(100_000)
		}
		req.Prompt = &v1.PickReplicaRequest_TokenIds{TokenIds: &v1.TokenIds{Ids: ids}}
	case *text != "":
		req.Prompt = &v1.PickReplicaRequest_Text{Text: *text}
	default:
		fs.Usage()
		return fmt.Errorf("one of -tokens, -random-tokens or -text is required: %w", errUsage)
	}
	if *candidates != "" {
		req.Candidates = strings.Split(*candidates, ",")
	}
	if *expected > 0 {
		req.Hints = &v1.RequestHints{ExpectedOutputTokens: *expected}
	}

	conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	resp, err := v1.NewRouterServiceClient(conn).PickReplica(ctx, req)
	if err != nil {
		return err
	}
	if *asJSON {
		b, err := protojson.MarshalOptions{Multiline: true}.Marshal(resp)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, string(b))
		return err
	}
	return printDecision(stdout, req.RequestId, resp)
}

func parseTokens(s string) ([]uint32, error) {
	parts := strings.Split(s, ",")
	ids := make([]uint32, len(parts))
	for i, p := range parts {
		v, err := strconv.ParseUint(strings.TrimSpace(p), 10, 32)
		if err != nil {
			return nil, errors.New("-tokens: " + err.Error())
		}
		ids[i] = uint32(v)
	}
	return ids, nil
}

// printDecision writes a decision as a short header and a table of the
// candidates' terms.
func printDecision(w io.Writer, requestID string, r *v1.PickReplicaResponse) error {
	fmt.Fprintf(w, "request %s -> %s (policy %s, decision %s)\n", requestID, r.GetReplicaId(), r.GetPolicy(), r.GetDecisionId())
	fmt.Fprintf(w, "prompt %d tokens, %d predicted cached; fallbacks %v\n\n", r.GetPromptTokens(), r.GetCachedTokens(), r.GetFallbacks())
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\treplica\tdevice\tprefix\tcached\tprefill\tdecode\tactive\tcost\tineligible\t")
	for _, c := range r.GetCandidates() {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%d\t%d\t%d\t%.1f\t%d\t%.3f\t%s\t\n",
			c.GetRank(), c.GetReplicaId(), c.GetOverlap().GetDeviceBlocks(), c.GetOverlap().GetPrefixBlocks(),
			c.GetCachedTokens(), c.GetPrefillTokens(), c.GetDecodeBlocks(), c.GetActiveRequests(), c.GetCost(), c.GetIneligibleReason())
	}
	return tw.Flush()
}
