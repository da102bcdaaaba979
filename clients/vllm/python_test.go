package vllm

import (
	"testing"
	"time"

	"github.com/switchyard-llm/switchyard/integration/vllmpub"
)

func batchAt(sink *recordingSink, ts float64) (Batch, bool) {
	all, _ := sink.snapshot()
	for _, b := range all {
		if b.Time == ts {
			return b, true
		}
	}
	return Batch{}, false
}

// pyWarmUp sends batches until one arrives (PUB drops until subscribed).
func pyWarmUp(t *testing.T, p *vllmpub.Publisher, sink *recordingSink) {
	t.Helper()
	ev := []map[string]any{{"type": "BlockRemoved", "block_hashes": []uint64{1}, "medium": "GPU"}}
	waitFor(t, "a batch from the python publisher", func() bool {
		ts := p.Send(ev, "array", "int", true)
		for range 40 {
			if _, ok := batchAt(sink, ts); ok {
				return true
			}
			time.Sleep(5 * time.Millisecond)
		}
		return false
	})
}

// TestPythonPublisher runs the Python stand-in engine against a Subscriber:
// both encodings and hash forms decode, a forced gap is replayed, a restart
// resets, and a killed publisher is reconnected to.
func TestPythonPublisher(t *testing.T) {
	vllmpub.Require(t)
	pub, rep := vllmpub.FreeAddr(t), vllmpub.FreeAddr(t)
	args := []string{"--pub", pub, "--replay", rep, "--topic", "kv@pod-a@llama"}
	py := vllmpub.Start(t, 1, args...)
	sink := &recordingSink{}
	sub := runSubscriber(t, sink, []Endpoint{{Replica: "py", Live: pub, Replay: rep, Topic: "kv@"}})
	pyWarmUp(t, py, sink)

	hash := uint64(15760518052499183552)
	events := []map[string]any{
		{"type": "BlockStored", "block_hashes": []uint64{hash, 42}, "parent_block_hash": uint64(7),
			"token_ids": []int{1, 2, 3, 4}, "block_size": 2, "medium": "GPU", "lora_name": "sql",
			"group_idx": 0, "kv_cache_spec_kind": "full_attention"},
		{"type": "BlockRemoved", "block_hashes": []uint64{42}, "medium": "CPU"},
		{"type": "AllBlocksCleared"},
	}
	for _, enc := range []string{"array", "map"} {
		for _, hm := range []string{"int", "bin"} {
			ts := py.Send(events, enc, hm, true)
			waitFor(t, enc+"/"+hm+" batch", func() bool { _, ok := batchAt(sink, ts); return ok })
			b, _ := batchAt(sink, ts)
			if len(b.Events) != 3 || b.Events[0].BlockHashes[0] != hash || b.Events[0].Parent != 7 ||
				b.Events[0].LoRAName != "sql" || b.Events[1].Tier() != TierHost || b.Events[2].Kind != AllBlocksCleared {
				t.Fatalf("%s/%s decoded as %+v", enc, hm, b.Events)
			}
		}
	}

	gapTS := py.Send(events[1:2], "map", "bin", false)
	after := py.Send(events[1:2], "array", "int", true)
	waitFor(t, "the batch after a forced gap", func() bool { _, ok := batchAt(sink, after); return ok })
	if b, ok := batchAt(sink, gapTS); !ok || !b.Replayed {
		t.Fatalf("forced gap not replayed: %+v (found %v)", b, ok)
	}

	py.Do(map[string]any{"op": "restart"})
	restarted := py.Send(events[:1], "map", "int", true)
	waitFor(t, "the batch after a restart", func() bool { _, ok := batchAt(sink, restarted); return ok })
	if n := resetsOf(sink, ResetRestart); n != 1 {
		t.Fatalf("restart resets = %d, want 1", n)
	}

	py.Kill()
	waitFor(t, "the disconnect", func() bool { return sub.Stats().Disconnects >= 1 })
	py2 := vllmpub.Start(t, 2, append(args, "--replay-no-topic")...)
	pyWarmUp(t, py2, sink)
	gapTS = py2.Send(events[1:2], "map", "int", false)
	after = py2.Send(events[1:2], "map", "int", true)
	waitFor(t, "the batch after a forced gap (old replay format)", func() bool { _, ok := batchAt(sink, after); return ok })
	if b, ok := batchAt(sink, gapTS); !ok || !b.Replayed {
		t.Fatalf("forced gap not replayed by the old reply format: %+v (found %v)", b, ok)
	}
	c := sub.Stats()
	if c.Reconnects < 1 || c.Restarts != 2 || c.MalformedFrames != 0 || c.MalformedPayloads != 0 {
		t.Fatalf("counters after reconnect: %+v", c)
	}
}
