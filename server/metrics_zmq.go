package server

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// observeZMQ exports the vLLM ZMQ subscriber's own counters: what it
// dropped, replayed, reset and reconnected. All zero without a ZMQ source.
func observeZMQ(meter metric.Meter, kv *KVCounters) error {
	b := &observables{meter: meter}
	ctr := b.counter
	replayed := ctr("switchyard.zmq.replayed_batches", "{batch}", "vLLM ZMQ batches applied from the replay socket.")
	replays := ctr("switchyard.zmq.replays", "{replay}", "vLLM ZMQ replay attempts, by result (ok: the range was covered; failed).")
	dropped := ctr("switchyard.zmq.dropped", "{event}", "vLLM ZMQ events not indexed, by reason.")
	malformed := ctr("switchyard.zmq.malformed", "{message}", "vLLM ZMQ messages that could not be used, by kind (frames, topic, payload).")
	resets := ctr("switchyard.zmq.resets", "{reset}", "Replicas whose entries were dropped by the ZMQ subscriber, by reason.")
	conns := ctr("switchyard.zmq.connection_events", "{event}", "vLLM ZMQ connection events, by kind (dial_failure, disconnect, reconnect).")
	sinkErrs := ctr("switchyard.zmq.sink_errors", "{batch}", "vLLM ZMQ batches the index failed to apply.")
	return b.register(func(obs metric.Observer) {
		z := kv.Snapshot().ZMQ
		by := func(inst metric.Int64ObservableCounter, key string, vals map[string]uint64) {
			for k, v := range vals {
				obs.ObserveInt64(inst, int64(v), attrs(attribute.String(key, k)))
			}
		}
		obs.ObserveInt64(replayed, int64(z.ReplayedBatches))
		by(replays, "result", map[string]uint64{"ok": z.ReplaysOK, "failed": z.ReplaysFailed})
		by(malformed, "kind", map[string]uint64{"frames": z.MalformedFrames, "topic": z.TopicMismatches, "payload": z.MalformedPayloads})
		by(conns, "kind", map[string]uint64{"dial_failure": z.DialFailures, "disconnect": z.Disconnects, "reconnect": z.Reconnects})
		obs.ObserveInt64(sinkErrs, int64(z.SinkErrors))
		for r, v := range z.Dropped {
			obs.ObserveInt64(dropped, int64(v), attrs(attribute.String("reason", r.String())))
		}
		for r, v := range z.Resets {
			obs.ObserveInt64(resets, int64(v), attrs(attribute.String("reason", string(r))))
		}
	})
}
