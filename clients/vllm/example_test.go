package vllm_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

func ExampleParseEndpointFlag() {
	ep, err := vllm.ParseEndpointFlag("replica-a=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5558,topic=kv@,ranks=2")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(ep.Replica, ep.Live, ep.Replay, ep.Topic, ep.Ranks, ep.Bind)
	// Output: replica-a tcp://10.0.0.5:5557 tcp://10.0.0.5:5558 kv@ 2 false
}

func ExampleDecoder_Decode() {
	// A positional (vLLM <= 0.23) batch: one stored block, then an unknown event.
	payload, _ := msgpack.Marshal([]any{
		1789095808.83,
		[]any{
			[]any{"BlockStored", []uint64{15760518052499183552}, nil, []int{1, 2, 3, 4}, 4, nil, "GPU"},
			[]any{"BlockFromTheFuture", 1},
		},
		0,
	})
	dec, err := vllm.NewDecoder(vllm.DefaultLimits())
	if err != nil {
		log.Fatal(err)
	}
	p, err := dec.Decode(payload)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range p.Events {
		fmt.Println(e.Kind, e.BlockHashes, e.TokenIDs, e.Tier())
	}
	fmt.Println("dropped:", p.Drops.Count(vllm.DropUnknownTag), vllm.DropUnknownTag)
	// Output:
	// BlockStored [15760518052499183552] [1 2 3 4] device
	// dropped: 1 unknown_tag
}

// printSink shows what a Sink receives; switchyard's server adapts it to the index.
type printSink struct{}

func (printSink) ApplyBatch(_ context.Context, b vllm.Batch) error {
	fmt.Printf("%s rank %d seq %d: %d events\n", b.Replica, b.Rank, b.Seq, len(b.Events))
	return nil
}

func (printSink) ResetReplica(_ context.Context, replica string, rank int, reason vllm.ResetReason) {
	fmt.Printf("%s rank %d: reset (%s)\n", replica, rank, reason)
}

func ExampleNew() {
	sub, err := vllm.New(printSink{})
	if err != nil {
		log.Fatal(err)
	}
	ep, err := vllm.ParseEndpointFlag("replica-a=tcp://127.0.0.1:5557,replay=tcp://127.0.0.1:5558")
	if err != nil {
		log.Fatal(err)
	}
	if err := sub.Add(ep); err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := sub.Run(ctx); err != nil { // until interrupted
		log.Fatal(err)
	}
	fmt.Printf("%+v\n", sub.Stats())
}
