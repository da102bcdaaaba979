package bench

import (
	"context"
	"errors"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

func TestSyntheticPrompts(t *testing.T) {
	p, err := NewPrompts(PromptConfig{Tokens: 300, SharedTokens: 100, Pool: 4, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if p.Len() != 4 || p.MeanTokens() != 300 {
		t.Fatalf("%d prompts of mean %d tokens", p.Len(), p.MeanTokens())
	}
	a, b := p.Tokens(0), p.Tokens(1)
	if !slices.Equal(a[:100], b[:100]) {
		t.Error("prompts do not share their first 100 tokens")
	}
	if slices.Equal(a[100:110], b[100:110]) {
		t.Error("prompts share tokens beyond the shared prefix")
	}
	if !slices.Equal(p.Tokens(5), p.Tokens(1)) || p.wireAt(6).TokenIds.Ids[0] != p.Tokens(2)[0] {
		t.Error("prompts are not cycled modulo the pool")
	}
	again, _ := NewPrompts(PromptConfig{Tokens: 300, SharedTokens: 100, Pool: 4, Seed: 7})
	other, _ := NewPrompts(PromptConfig{Tokens: 300, SharedTokens: 100, Pool: 4, Seed: 8})
	if !slices.Equal(again.Tokens(3), p.Tokens(3)) || slices.Equal(other.Tokens(3), p.Tokens(3)) {
		t.Error("prompts are not a function of the seed")
	}
	for i := range p.Len() {
		for _, tok := range p.Tokens(i) {
			if tok >= 1<<17 {
				t.Fatalf("token %d outside the vocabulary", tok)
			}
		}
	}
}

func TestTracePrompts(t *testing.T) {
	cases := []struct {
		name string
		cfg  PromptConfig
		lens []int
	}{
		{"as recorded", PromptConfig{Workload: "testdata/mooncake_small.jsonl", Pool: 10}, []int{1200, 700, 1500}},
		{"first two", PromptConfig{Workload: "testdata/mooncake_small.jsonl", Pool: 2}, []int{1200, 700}},
		{"cut", PromptConfig{Workload: "testdata/mooncake_small.jsonl", Pool: 3, Tokens: 1000}, []int{1000, 700, 1000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPrompts(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			var lens []int
			for i := range p.Len() {
				lens = append(lens, len(p.Tokens(i)))
			}
			if !slices.Equal(lens, tc.lens) {
				t.Fatalf("lengths %v, want %v", lens, tc.lens)
			}
			// Requests 0 and 2 share hash ids 0 and 1: 1,024 equal leading tokens.
			if p.Len() == 3 {
				a, c := p.Tokens(0), p.Tokens(2)
				if !slices.Equal(a[:1024], c[:1024]) || slices.Equal(a[1024:1100], c[1024:1100]) {
					t.Error("shared hash ids do not give exactly the shared token prefix")
				}
			}
		})
	}
	if _, err := NewPrompts(PromptConfig{Workload: "testdata/missing.jsonl", Pool: 1}); err == nil {
		t.Error("a missing workload file was accepted")
	}
	if _, err := NewPrompts(PromptConfig{Pool: 0, Tokens: 5}); !errors.Is(err, ErrConfig) {
		t.Errorf("empty pool: %v", err)
	}
}

// The pre-encoded form of a pick must decode to the message the Go client would send.
func TestPreEncodedPickIsTheSameMessage(t *testing.T) {
	p, err := NewPrompts(PromptConfig{Tokens: 1000, SharedTokens: 10, Pool: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := encodedPrompts(p)
	if err != nil {
		t.Fatal(err)
	}
	var sent []byte
	raw := &rawPicker{prompts: enc, send: func(_ context.Context, r *rawPick) (*v1.PickReplicaResponse, error) {
		sent = append(append([]byte(nil), r.head...), r.prompt...)
		return &v1.PickReplicaResponse{}, nil
	}}
	req := &v1.PickReplicaRequest{RequestId: "req-7", Model: "m", Policy: "token_load", DryRun: true}
	if _, err := raw.pick(context.Background(), req, 4); err != nil {
		t.Fatal(err)
	}
	var got v1.PickReplicaRequest
	if err := proto.Unmarshal(sent, &got); err != nil {
		t.Fatal(err)
	}
	want := &v1.PickReplicaRequest{RequestId: "req-7", Model: "m", Policy: "token_load", DryRun: true, Prompt: p.wireAt(4)}
	if !proto.Equal(&got, want) {
		t.Fatalf("decoded %v", &got)
	}
	for _, codec := range []func(*rawPick) ([]byte, error){
		func(r *rawPick) ([]byte, error) { return rawConnectCodec{}.Marshal(r) },
		func(r *rawPick) ([]byte, error) {
			bs, err := rawGRPCCodec{}.Marshal(r)
			return bs.Materialize(), err
		},
	} {
		b, err := codec(&rawPick{head: sent[:10], prompt: sent[10:]})
		if err != nil || string(b) != string(sent) {
			t.Fatalf("codec sent %d bytes (%v), want the %d of head and prompt", len(b), err, len(sent))
		}
	}
}
