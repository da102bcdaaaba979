package workload

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestDriverOpenLoop(t *testing.T) {
	w := readFixture(t)
	d, err := NewDriver(w, ReplayConfig{Speedup: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []Arrival{{0, 0}, {1, 500 * time.Millisecond}, {3, 1500 * time.Millisecond}}
	if got := d.Start(); !reflect.DeepEqual(got, want) {
		t.Fatalf("Start = %v, want %v", got, want)
	}
	if got := d.Done(1, 7*time.Second); !reflect.DeepEqual(got, []Arrival{{2, 7250 * time.Millisecond}}) {
		t.Errorf("Done(1) = %v: the delayed turn should follow its predecessor by 250ms", got)
	}
	if got := d.Done(0, time.Second); got != nil {
		t.Errorf("Done(0) = %v, want nothing", got)
	}
	j, _ := NewDriver(w, ReplayConfig{Jitter: time.Second, Seed: 3})
	for _, a := range j.Start() {
		ts := w.Requests[a.Request].Timestamp
		if a.At < ts || a.At >= ts+time.Second {
			t.Errorf("jittered %v outside [%v, +1s)", a.At, ts)
		}
	}
}

func TestDriverClosedLoop(t *testing.T) {
	w := readFixture(t)
	d, err := NewDriver(w, ReplayConfig{Concurrency: 1, ThinkTime: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		done int
		want []Arrival
	}{
		{0, []Arrival{{1, 5 * time.Second}}},
		{1, []Arrival{{2, 5*time.Second + 250*time.Millisecond}}},
		{2, []Arrival{{3, 5 * time.Second}}},
		{3, nil},
	}
	if got := d.Start(); !reflect.DeepEqual(got, []Arrival{{0, 0}}) {
		t.Fatalf("Start = %v", got)
	}
	for _, s := range steps {
		if got := d.Done(s.done, 5*time.Second); !reflect.DeepEqual(got, s.want) {
			t.Errorf("Done(%d) = %v, want %v", s.done, got, s.want)
		}
	}
	if _, err := NewDriver(w, ReplayConfig{Speedup: -1}); !errors.Is(err, ErrInvalid) {
		t.Errorf("negative speedup: %v", err)
	}
	if _, err := NewDriver(&Workload{}, ReplayConfig{}); !errors.Is(err, ErrInvalid) {
		t.Errorf("unfinalized workload: %v", err)
	}
}
