package vllm

import (
	"errors"
	"testing"
)

func TestParseEndpointFlag(t *testing.T) {
	tests := []struct {
		in   string
		want Endpoint
		err  bool
	}{
		{in: "a=tcp://10.0.0.5:5557", want: Endpoint{Replica: "a", Live: "tcp://10.0.0.5:5557", Ranks: 1}},
		{in: "replica-a=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5558,topic=kv@x@m,bind,ranks=2",
			want: Endpoint{Replica: "replica-a", Live: "tcp://10.0.0.5:5557", Replay: "tcp://10.0.0.5:5558", Topic: "kv@x@m", Bind: true, Ranks: 2}},
		{in: "b=tcp://*:5557", want: Endpoint{Replica: "b", Live: "tcp://*:5557", Bind: true, Ranks: 1}},
		{in: "c=ipc:///tmp/kv.sock,bind=false", want: Endpoint{Replica: "c", Live: "ipc:///tmp/kv.sock", Ranks: 1}},
		{in: "tcp://10.0.0.5:5557", err: true},
		{in: "=tcp://h:1", err: true},
		{in: "a=http://h:1", err: true},
		{in: "a=tcp://h", err: true},
		{in: "a=tcp://h:1,colour=red", err: true},
		{in: "a=tcp://h:1,ranks=x", err: true},
		{in: "a=tcp://h:65535,ranks=2", err: true},
		{in: "a=ipc:///x,ranks=2", err: true},
		{in: "a=tcp://h:1,replay=tcp://*:2", err: true},
		{in: "a=tcp://h:1,bind=maybe", err: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseEndpointFlag(tc.in)
			if tc.err {
				if !errors.Is(err, ErrInvalidConfig) {
					t.Fatalf("err = %v, want ErrInvalidConfig", err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			again, err := ParseEndpointFlag(got.String())
			if err != nil || again != got {
				t.Fatalf("String() %q does not round-trip: %+v, %v", got.String(), again, err)
			}
		})
	}
}

func TestRankAddr(t *testing.T) {
	tests := []struct {
		addr string
		rank int
		want string
	}{
		{"tcp://10.0.0.5:5557", 0, "tcp://10.0.0.5:5557"},
		{"tcp://10.0.0.5:5557", 3, "tcp://10.0.0.5:5560"},
		{"tcp://[::1]:5557", 1, "tcp://[::1]:5558"},
		{"", 2, ""},
	}
	for _, tc := range tests {
		if got := rankAddr(tc.addr, tc.rank); got != tc.want {
			t.Errorf("rankAddr(%q, %d) = %q, want %q", tc.addr, tc.rank, got, tc.want)
		}
	}
}
