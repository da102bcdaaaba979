package enginesim_test

import (
	"fmt"

	"github.com/switchyard-llm/switchyard/clients/vllm"
	"github.com/switchyard-llm/switchyard/integration/enginesim"
)

// Encode one EventBatch as a vLLM v0.26+ engine does and read it back with the decoder
// switchyard runs against real engines.
func ExampleEncoder() {
	enc, err := enginesim.NewEncoder(enginesim.EncodingMap, -1)
	if err != nil {
		panic(err)
	}
	payload, err := enc.Encode(1700000000.5, []vllm.Event{
		{Kind: vllm.BlockStored, BlockHashes: []uint64{42}, TokenIDs: []uint32{1, 2, 3, 4}, BlockSize: 4, Medium: "GPU"},
		{Kind: vllm.BlockRemoved, BlockHashes: []uint64{42}, Medium: "GPU"},
	})
	if err != nil {
		panic(err)
	}
	dec, _ := vllm.NewDecoder(vllm.DefaultLimits())
	p, err := dec.Decode(payload)
	if err != nil {
		panic(err)
	}
	for _, ev := range p.Events {
		fmt.Println(ev.Kind, ev.BlockHashes, ev.TokenIDs)
	}
	// Output:
	// BlockStored [42] [1 2 3 4]
	// BlockRemoved [42] []
}

// A session's turns each extend the previous prompt with the reply and a new message.
func ExampleSession() {
	s := enginesim.NewSession("s1", enginesim.SystemPrompt(0, 8), 1)
	first := s.Prompt(4)
	s.Reply(enginesim.OutputTokens(first, 2))
	second := s.Prompt(4)
	fmt.Println(len(first), len(second), s.Turns())
	// Output: 12 18 1
}
