package workload

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func readFixture(t *testing.T) *Workload {
	t.Helper()
	f, err := os.Open("testdata/small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := ReadMooncake(f, "small.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestReadMooncake(t *testing.T) {
	w := readFixture(t)
	if len(w.Requests) != 4 || w.Dropped["zero_output"] != 1 {
		t.Fatalf("got %d requests, dropped %v; want 4 and one zero_output", len(w.Requests), w.Dropped)
	}
	r := w.Requests[2]
	if !r.HasDelay || r.Delay != 250*time.Millisecond || r.SessionID != "a" || r.Timestamp != time.Second {
		t.Errorf("row 3 = %+v", r)
	}
	if got := w.Requests[3].Timestamp; got != 3*time.Second {
		t.Errorf("row 5 timestamp = %v", got)
	}
	if w.Next(1) != 2 || w.Next(2) != -1 || w.Next(0) != -1 {
		t.Errorf("session links: next(1)=%d next(2)=%d next(0)=%d", w.Next(1), w.Next(2), w.Next(0))
	}
	if !w.Extends(1) || w.Extends(0) {
		t.Errorf("extends(1)=%v extends(0)=%v, want true, false", w.Extends(1), w.Extends(0))
	}
	if got := len(w.Sessions()); got != 3 {
		t.Errorf("sessions = %d, want 3", got)
	}
}

func TestReadMooncakeErrors(t *testing.T) {
	for _, tc := range []struct{ name, row, want string }{
		{"bad json", `{"timestamp": 0,`, "unexpected EOF"},
		{"missing timestamp", `{"input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp is missing"},
		{"missing input", `{"timestamp": 0, "output_length": 1, "hash_ids": [1]}`, "input_length is missing"},
		{"missing output", `{"timestamp": 0, "input_length": 1, "hash_ids": [1]}`, "output_length is missing"},
		{"unknown field", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "x": 1}`, "unknown field"},
		{"negative id", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [-1]}`, "hash_ids[0]"},
		{"id count", `{"timestamp": 0, "input_length": 513, "output_length": 1, "hash_ids": [1]}`, "2 of 512"},
		{"negative timestamp", `{"timestamp": -5, "input_length": 1, "output_length": 1, "hash_ids": [1]}`, "timestamp -5"},
		{"delay alone", `{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1], "delay": 3}`, "delay without session_id"},
		{"zero input", `{"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []}`, "input_length 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadMooncake(strings.NewReader("\n"+tc.row+"\n"), "x")
			if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "line 2") {
				t.Fatalf("err = %v, want ErrFormat at line 2 mentioning %q", err, tc.want)
			}
		})
	}
}

func TestMooncakeRoundTrip(t *testing.T) {
	rl, err := RLRollouts(RLConfig{Steps: 2, RolloutsPerStep: 3, Turns: 3, StartTokens: 700, SharedTokens: 512,
		TurnInputTokens: 100, OutputTokens: 50, Stragglers: 1, StragglerOutputTokens: 300, Concurrency: 2, ToolTime: 1500 * time.Microsecond})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []*Workload{readFixture(t), rl} {
		var buf bytes.Buffer
		if err := WriteMooncake(&buf, w); err != nil {
			t.Fatal(err)
		}
		back, err := ReadMooncake(&buf, "back")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back.Requests, w.Requests) || !slices.Equal(back.extends, w.extends) {
			t.Errorf("%s: round trip differs", w.Name)
		}
	}
}
