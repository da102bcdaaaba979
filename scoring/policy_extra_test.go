package scoring

import (
	"errors"
	"testing"
)

// longShort is a stand-in for the simulator's oracle: it sees each request's output length
// through PolicyInput.ExpectedOutputTokens and sends long requests to the replica with the least
// projected decode, short ones to the one with the least prefill.
type longShort struct{ noParams }

func (longShort) Name() string { return "long_short" }

func (p longShort) WithParams(over map[string]float64) (Policy, error) {
	return p, rejectParams(p.Name(), over)
}

func (longShort) Rank(in *PolicyInput, c []Candidate) {
	for i := range c {
		if in.ExpectedOutputTokens > 1000 {
			c[i].Cost = c[i].decodeProjected(1)
		} else {
			c[i].Cost = float64(c[i].PrefillTokens)
		}
	}
	RankByCost(in, c)
}

func TestExtraPolicySeesOutputLength(t *testing.T) {
	r, _ := newTestRouter(t, 2, Config{Extra: []Policy{longShort{}}})
	decodeOn(t, r, "dec", "r0", 16, 1600, 0)                                                                              // r0: 101 blocks held, no prefill
	mustPick(t, r, PickRequest{RequestID: "pre", Prompt: Prompt{Tokens: tokens(3, 0, 1024)}, Candidates: []string{"r1"}}) // r1: 64 blocks, 1024 prefill
	p := Prompt{Tokens: tokens(4, 0, 32)}
	long := mustPick(t, r, PickRequest{Prompt: p, DryRun: true, Policy: "long_short", ExpectedOutputTokens: 5000})
	short := mustPick(t, r, PickRequest{Prompt: p, DryRun: true, Policy: "long_short", ExpectedOutputTokens: 10})
	if long.ReplicaID != "r1" || short.ReplicaID != "r0" {
		t.Fatalf("long went to %s (want r1), short to %s (want r0)", long.ReplicaID, short.ReplicaID)
	}
	if c := candidate(t, long, "r0"); c.Cost != 101 {
		t.Fatalf("custom cost not reported: %+v", c)
	}
	found := false
	for _, n := range r.Policies() {
		found = found || n == "long_short"
	}
	if !found {
		t.Fatalf("Policies() = %v", r.Policies())
	}
	for _, bad := range [][]Policy{{tokenLoad{}}, {nil}} {
		if _, err := NewRouter(Config{Extra: bad}); !errors.Is(err, ErrInvalid) {
			t.Fatalf("extra %v: err = %v", bad, err)
		}
	}
}
