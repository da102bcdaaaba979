package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/switchyard-llm/switchyard/integration/enginesim"
)

func TestEngineSimFlags(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		want  string // error substring; "" = valid
		check func(t *testing.T, c enginesim.Config)
	}{
		{"defaults", nil, "", func(t *testing.T, c enginesim.Config) {
			if c.KVEvents.Endpoint != "tcp://*:5557" || c.KVEvents.ReplayEndpoint != "tcp://*:5558" || c.Encoding != enginesim.EncodingArray {
				t.Errorf("KV defaults: %+v %s", c.KVEvents, c.Encoding)
			}
			if c.Engine.Engine.BlockSize != 16 || c.ReplicaID == "" || c.AdvertiseHost == "" || !c.AdvertiseReplay {
				t.Errorf("defaults: %+v", c)
			}
		}},
		{"no events", []string{"--kv-events", "", "--kv-encoding", "map", "--replica-id", "e1"}, "", func(t *testing.T, c enginesim.Config) {
			if c.KVEvents.Endpoint != "" || c.Encoding != enginesim.EncodingMap || c.ReplicaID != "e1" {
				t.Errorf("%+v", c)
			}
		}},
		{"bad encoding", []string{"--kv-encoding", "json"}, "encoding", nil},
		{"bad speedup", []string{"--speedup", "0"}, "speedup", nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c engineSimConfig
			fs := flag.NewFlagSet("engine-sim", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			c.flags(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			cfg, err := c.service(nil)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("error %v, want one naming %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, cfg)
		})
	}
}
