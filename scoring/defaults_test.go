package scoring

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"testing"
)

// TestPeerDefaults checks every built-in policy's parameters and defaults against the peers'
// documented defaults in testdata/peer_defaults.json ("inf" stands for +Inf).
func TestPeerDefaults(t *testing.T) {
	raw, err := os.ReadFile("testdata/peer_defaults.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "_source")
	var names []string
	for n := range doc {
		names = append(names, n)
	}
	slices.Sort(names)
	if !slices.Equal(names, PolicyNames()) {
		t.Fatalf("fixture lists %v, built-ins are %v", names, PolicyNames())
	}
	for _, name := range names {
		var want map[string]any
		if err := json.Unmarshal(doc[name], &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p, err := NewPolicy(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := p.Params()
		if len(got) != len(want) {
			t.Fatalf("%s has parameters %v, fixture %v", name, got, want)
		}
		for k, v := range want {
			w, ok := v.(float64)
			if s, isStr := v.(string); isStr && s == "inf" {
				w, ok = math.Inf(1), true
			}
			if !ok || got[k] != w {
				t.Fatalf("%s.%s = %v, peer default %v", name, k, got[k], v)
			}
		}
	}
}
