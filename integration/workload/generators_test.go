package workload

import (
	"errors"
	"reflect"
	"testing"
)

func TestRLRollouts(t *testing.T) {
	c := DefaultRLConfig()
	w, err := RLRollouts(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Requests) != c.Steps*c.RolloutsPerStep*c.Turns || w.Concurrency != 16 {
		t.Fatalf("%d requests, concurrency %d", len(w.Requests), w.Concurrency)
	}
	stragglers := 0
	for i, r := range w.Requests {
		turn := i % c.Turns
		if want := c.StartTokens + turn*(c.OutputTokens+c.TurnInputTokens); turn < c.Turns-1 && r.InputLength != want {
			t.Fatalf("request %d: input %d, want %d", i, r.InputLength, want)
		}
		if r.OutputLength == c.StragglerOutputTokens {
			stragglers++
			if turn != c.Turns-1 {
				t.Fatalf("request %d straggles on turn %d", i, turn)
			}
		}
		if turn < c.Turns-1 && !w.Extends(i) {
			t.Fatalf("turn %d of request %d is not extended by the next", turn, i)
		}
		if r.HashIDs[1] != w.Requests[0].HashIDs[1] || (i >= c.Turns && r.HashIDs[2] == w.Requests[0].HashIDs[2]) {
			t.Fatalf("request %d: shared prefix wrong: %v", i, r.HashIDs[:3])
		}
	}
	if stragglers != c.Steps*c.Stragglers {
		t.Errorf("%d stragglers, want %d", stragglers, c.Steps*c.Stragglers)
	}
}

func TestGeneratorValidation(t *testing.T) {
	bad := []func() error{
		func() error { c := DefaultRLConfig(); c.SharedTokens = 100; _, err := RLRollouts(c); return err },
		func() error { c := DefaultRLConfig(); c.Stragglers = 9; _, err := RLRollouts(c); return err },
		func() error { c := DefaultRLConfig(); c.Concurrency = 0; _, err := RLRollouts(c); return err },
		func() error {
			c := DefaultMultiTurnConfig()
			c.Sessions = 0
			_, err := MultiTurnSessions(c)
			return err
		},
		func() error {
			c := DefaultMultiTurnConfig()
			c.SystemTokens = 10
			_, err := MultiTurnSessions(c)
			return err
		},
		func() error {
			c := DefaultMultiTurnConfig()
			c.Concurrency = 0
			_, err := MultiTurnSessions(c)
			return err
		},
	}
	for i, f := range bad {
		if err := f(); !errors.Is(err, ErrInvalid) {
			t.Errorf("case %d: err = %v, want ErrInvalid", i, err)
		}
	}
}

func TestMultiTurnSessions(t *testing.T) {
	c := DefaultMultiTurnConfig()
	c.Sessions = 30
	a, err := MultiTurnSessions(c)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := MultiTurnSessions(c)
	if !reflect.DeepEqual(a.Requests, b.Requests) {
		t.Error("same seed, different workload")
	}
	c.Seed = 2
	if d, _ := MultiTurnSessions(c); reflect.DeepEqual(a.Requests, d.Requests) {
		t.Error("different seeds, same workload")
	}
	turns := map[string]int{}
	for i, r := range a.Requests {
		turns[r.SessionID]++
		if r.InputLength+r.OutputLength > c.MaxContext || r.HashIDs[0] != a.Requests[0].HashIDs[0] {
			t.Fatalf("request %d breaks the context cap or the shared system prompt", i)
		}
		if nx := a.Next(i); nx >= 0 && !a.Extends(i) {
			t.Fatalf("request %d is not extended by its next turn", i)
		}
	}
	lo, hi := len(a.Requests), 0
	for _, n := range turns {
		lo, hi = min(lo, n), max(hi, n)
	}
	if len(turns) != 30 || hi < 4*lo {
		t.Errorf("sessions not heterogeneous: %d sessions, turns %d..%d", len(turns), lo, hi)
	}
}
