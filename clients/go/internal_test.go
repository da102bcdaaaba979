package switchyard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

func TestRing(t *testing.T) {
	seqs := func(r *ring) string {
		var out []string
		for i := 0; i < r.n; i++ {
			out = append(out, fmt.Sprint(r.buf[(r.head+i)%len(r.buf)].seq))
		}
		return strings.Join(out, ",")
	}
	tests := []struct {
		name        string
		ops         string // b = pushBack next seq, f = pushFront next seq, p = popFront
		want        string
		wantDropped int
		wantRefused int
	}{
		{"fifo", "bbbp", "2,3", 0, 0},
		{"overflow drops oldest", "bbbbb", "3,4,5", 2, 0},
		{"front then back", "fbb", "1,2,3", 0, 0},
		{"front refused when full", "bbbf", "1,2,3", 0, 1},
		{"wraps around", "bbbppbbpb", "4,5,6", 0, 0},
		{"front after wrap", "bbpfb", "3,2,4", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRing(3)
			var seq uint64
			dropped, refused := 0, 0
			for _, op := range tt.ops {
				switch op {
				case 'b':
					seq++
					if r.pushBack(item{seq: seq}) {
						dropped++
					}
				case 'f':
					seq++
					if !r.pushFront(item{seq: seq}) {
						refused++
					}
				case 'p':
					r.popFront()
				}
			}
			if got := seqs(r); got != tt.want || dropped != tt.wantDropped || refused != tt.wantRefused {
				t.Fatalf("ring = [%s] dropped %d refused %d, want [%s] %d %d", got, dropped, refused, tt.want, tt.wantDropped, tt.wantRefused)
			}
		})
	}
}

func TestBackoffDelay(t *testing.T) {
	tests := []struct {
		fails    int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{4, 400 * time.Millisecond, 800 * time.Millisecond},
		{10, time.Second, 2 * time.Second}, // capped at max
		{200, time.Second, 2 * time.Second},
	}
	for _, tt := range tests {
		for range 50 {
			d := backoffDelay(100*time.Millisecond, 2*time.Second, tt.fails)
			if d < tt.min || d > tt.max {
				t.Fatalf("backoffDelay(fails=%d) = %v, want in [%v, %v]", tt.fails, d, tt.min, tt.max)
			}
		}
	}
}

func TestCheckEvent(t *testing.T) {
	long := strings.Repeat("x", MaxIDBytes+1)
	tests := []struct {
		name  string
		ev    *v1.LifecycleEvent
		field string // "" = valid
	}{
		{"admitted", Admitted("r", "a", 10, 2), ""},
		{"first token", FirstToken("r", ""), ""},
		{"progress", Progress("r", "a", 5), ""},
		{"done", Done("r", "a", 5, v1.CompletionStatus_COMPLETION_STATUS_CANCELLED), ""},
		{"nil", nil, "event"},
		{"no request id", Admitted("", "a", 1, 1), "request_id"},
		{"long request id", FirstToken(long, "a"), "request_id"},
		{"long replica id", FirstToken("r", long), "replica_id"},
		{"no event", &v1.LifecycleEvent{RequestId: "r"}, "event"},
		{"negative prompt", Admitted("r", "a", -1, 0), "admitted.prompt_tokens"},
		{"negative cached", Admitted("r", "a", 1, -1), "admitted.cached_tokens"},
		{"negative progress", Progress("r", "a", -3), "progress.generated_tokens"},
		{"negative output", Done("r", "a", -3, 0), "done.output_tokens"},
		{"unknown status", Done("r", "a", 1, 99), "done.status"},
		{"bad time", &v1.LifecycleEvent{RequestId: "r", Time: &timestamppb.Timestamp{Nanos: -1},
			Event: &v1.LifecycleEvent_FirstToken{FirstToken: &v1.FirstTokenEmitted{}}}, "time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkEvent(tt.ev)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("checkEvent = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidEvent) || !strings.Contains(err.Error(), tt.field+":") {
				t.Fatalf("checkEvent = %v, want ErrInvalidEvent naming %s", err, tt.field)
			}
		})
	}
}

func TestReporterConfigRejectsBadOptions(t *testing.T) {
	tests := []struct {
		name string
		opt  ReporterOption
		want string
	}{
		{"batch zero", WithBatchSize(0), "batch size"},
		{"batch above server limit", WithBatchSize(10001), "batch size"},
		{"flush zero", WithFlushInterval(0), "flush interval"},
		{"buffer below batch", WithBufferSize(10), "buffer size"},
		{"backoff inverted", WithBackoff(time.Second, time.Millisecond), "backoff"},
		{"confirm zero", WithConfirmEvery(0, time.Second), "confirm every"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := newReporterConfig([]ReporterOption{tt.opt}); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("newReporterConfig = %v, want an error about %s", err, tt.want)
			}
		})
	}
	if _, err := newReporterConfig(nil); err != nil {
		t.Fatalf("defaults rejected: %v", err)
	}
}

func TestErrorMatchesSentinels(t *testing.T) {
	tests := []struct {
		code codes.Code
		want error
	}{
		{codes.InvalidArgument, ErrInvalidArgument},
		{codes.NotFound, ErrNotFound},
		{codes.Unavailable, ErrUnavailable},
		{codes.FailedPrecondition, ErrConflict},
		{codes.Aborted, ErrConflict},
		{codes.DeadlineExceeded, context.DeadlineExceeded},
		{codes.Canceled, context.Canceled},
	}
	for _, tt := range tests {
		t.Run(tt.code.String(), func(t *testing.T) {
			err := rpcErr("PickReplica", status.Error(tt.code, "boom"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("errors.Is(%v, %v) = false", err, tt.want)
			}
			if errors.Is(err, ErrClosed) {
				t.Fatalf("%v matches ErrClosed", err)
			}
			if status.Code(err) != tt.code {
				t.Fatalf("status.Code = %v, want %v", status.Code(err), tt.code)
			}
			if want := "switchyard: PickReplica: " + tt.code.String() + ": boom"; err.Error() != want {
				t.Fatalf("Error() = %q, want %q", err.Error(), want)
			}
		})
	}
	if rpcErr("x", nil) != nil {
		t.Fatal("rpcErr(nil) != nil")
	}
	if errors.Is(rpcErr("x", status.Error(codes.Internal, "boom")), ErrUnavailable) {
		t.Fatal("Internal matched ErrUnavailable")
	}
}
