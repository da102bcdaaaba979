package server

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/switchyard-llm/switchyard/index"
)

// observed are the instruments read at scrape time from state the server
// and router already keep, so they cost the hot path nothing.
type observed struct {
	replays, expired, moved, deregistered, sessionsDropped, clamped, lcIgnored metric.Int64ObservableCounter

	replicas, prefill, decode, active, cached metric.Int64ObservableGauge

	ixBlocks, ixEntries, ixPredicted, ixMemory                   metric.Int64ObservableGauge
	ixEvicted, ixRejected, ixUnknownRemoved, ixRemapped, ixPredX metric.Int64ObservableCounter

	kvBatches, kvApplied, kvRejected, kvGaps, kvRestarts metric.Int64ObservableCounter

	watchers                                                   metric.Int64ObservableGauge
	skipped, fileWritten, fileDropped, fileRotated, fileErrors metric.Int64ObservableCounter
	sniffFails                                                 metric.Int64ObservableCounter
}

// observables creates observable instruments, remembering them and the
// first errors, for one RegisterCallback.
type observables struct {
	meter metric.Meter
	errs  []error
	insts []metric.Observable
}

func (b *observables) counter(name, unit, desc string) metric.Int64ObservableCounter {
	c, err := b.meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	b.insts = append(b.insts, c)
	return c
}

func (b *observables) gauge(name, unit, desc string) metric.Int64ObservableGauge {
	g, err := b.meter.Int64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
	b.errs = append(b.errs, err)
	b.insts = append(b.insts, g)
	return g
}

// register registers f as the callback of every instrument made.
func (b *observables) register(f func(metric.Observer)) error {
	if err := errors.Join(b.errs...); err != nil {
		return err
	}
	_, err := b.meter.RegisterCallback(func(_ context.Context, obs metric.Observer) error {
		f(obs)
		return nil
	}, b.insts...)
	return err
}

// observe creates the observable instruments and registers their callback.
func (m *metrics) observe(meter metric.Meter, s *Server) error {
	b := &observables{meter: meter}
	ctr, gauge := b.counter, b.gauge
	o := &observed{
		replays:         ctr("switchyard.pick.replays", "{pick}", "Picks answered with a live request's earlier decision (idempotent retries)."),
		expired:         ctr("switchyard.requests.expired", "{request}", "Requests freed because no lifecycle event came for the expiry period."),
		moved:           ctr("switchyard.requests.moved", "{request}", "Requests moved to another replica by a lifecycle event."),
		deregistered:    ctr("switchyard.requests.deregistered", "{request}", "Live requests freed because their replica was deregistered."),
		sessionsDropped: ctr("switchyard.sessions.dropped", "{session}", "Per-session output estimates dropped by the sessions bound."),
		clamped:         ctr("switchyard.load.clamped", "{term}", "Load terms that would have gone negative (a bug if ever non-zero)."),
		lcIgnored:       ctr("switchyard.lifecycle.ignored", "{event}", "Lifecycle events that changed nothing, by reason: unknown_request, unknown_replica, stale, invalid."),

		replicas: gauge("switchyard.replicas", "{replica}", "Registered replicas by model and state."),
		prefill:  gauge("switchyard.replica.prefill_tokens", "{token}", "Prompt tokens still to prefill on the replica."),
		decode:   gauge("switchyard.replica.decode_blocks", "{block}", "KV blocks held by the replica's active requests."),
		active:   gauge("switchyard.replica.active_requests", "{request}", "Requests reserved on or running on the replica."),
		cached:   gauge("switchyard.replica.cached_blocks", "{block}", "Confirmed KV blocks the index holds for the replica, by tier."),

		ixBlocks:         gauge("switchyard.index.blocks", "{block}", "Distinct KV blocks indexed, by model."),
		ixEntries:        gauge("switchyard.index.entries", "{entry}", "Confirmed (block, replica) index entries, by model and tier."),
		ixPredicted:      gauge("switchyard.index.predicted_entries", "{entry}", "Live predicted index entries, by model."),
		ixMemory:         gauge("switchyard.index.memory", "By", "Estimated heap footprint of the index, by model."),
		ixEvicted:        ctr("switchyard.index.evicted", "{entry}", "Index entries dropped by the entries cap, by model."),
		ixRejected:       ctr("switchyard.index.rejected", "{event}", "KV events the index rejected, by model and reason."),
		ixUnknownRemoved: ctr("switchyard.index.unknown_removed", "{block}", "Removed block hashes that were not indexed, by model."),
		ixRemapped:       ctr("switchyard.index.remapped", "{block}", "Engine hashes stored again with different content, by model."),
		ixPredX:          ctr("switchyard.index.predictions_expired", "{entry}", "Predicted entries swept after their TTL, by model."),

		kvBatches:  ctr("switchyard.kv.batches", "{batch}", "KV event batches applied, by source (grpc, zmq)."),
		kvApplied:  ctr("switchyard.kv.events.applied", "{event}", "KV events applied, by kind (stored, removed, cleared)."),
		kvRejected: ctr("switchyard.kv.events.rejected", "{event}", "KV events rejected, by reason."),
		kvGaps:     ctr("switchyard.kv.gaps", "{gap}", "KV event sequence gaps (the engine's entries are dropped), by source."),
		kvRestarts: ctr("switchyard.kv.restarts", "{restart}", "KV event sequence resets (engine restarts), by source."),

		watchers:    gauge("switchyard.audit.watchers", "{watcher}", "Subscribers to new decisions (WatchDecisions streams and the audit file)."),
		skipped:     ctr("switchyard.audit.watcher.skipped", "{decision}", "Decisions subscribers skipped because they fell behind (picks never wait)."),
		fileWritten: ctr("switchyard.audit.file.written", "{decision}", "Decisions written to the JSONL audit file."),
		fileDropped: ctr("switchyard.audit.file.dropped", "{decision}", "Decisions the audit file skipped because its writer fell behind."),
		fileRotated: ctr("switchyard.audit.file.rotations", "{rotation}", "Size-based rotations of the audit file."),
		fileErrors:  ctr("switchyard.audit.file.errors", "{error}", "Audit file write, rotate or open errors (the decision is lost)."),
		sniffFails:  ctr("switchyard.connections.sniff_failures", "{connection}", "Connections closed before showing a first request."),
	}
	if err := b.register(func(obs metric.Observer) { o.collect(obs, s, m) }); err != nil {
		return err
	}
	return observeZMQ(meter, s.kv)
}

// attrs is a shorthand for an observation's attributes.
func attrs(kv ...attribute.KeyValue) metric.ObserveOption {
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}

func (o *observed) collect(obs metric.Observer, s *Server, m *metrics) {
	c := s.router.Counters()
	obs.ObserveInt64(o.replays, int64(c.Replays))
	obs.ObserveInt64(o.expired, int64(c.Expired))
	obs.ObserveInt64(o.moved, int64(c.Moved))
	obs.ObserveInt64(o.deregistered, int64(c.Deregistered))
	obs.ObserveInt64(o.sessionsDropped, int64(c.SessionsDropped))
	obs.ObserveInt64(o.clamped, int64(c.Clamped))
	for reason, v := range map[string]uint64{
		"unknown_request": c.UnknownLifecycle, "unknown_replica": c.UnknownReplica,
		"stale": c.StaleLifecycle, "invalid": c.InvalidLifecycle,
	} {
		obs.ObserveInt64(o.lcIgnored, int64(v), attrs(attribute.String("reason", reason)))
	}

	o.collectFleet(obs, s, m)

	kv := s.kv.Snapshot()
	for _, f := range []struct {
		inst  metric.Int64ObservableCounter
		label string
		vals  map[string]int64
	}{
		{o.kvBatches, "source", kv.Batches}, {o.kvApplied, "kind", kv.Applied}, {o.kvRejected, "reason", kv.Rejected},
		{o.kvGaps, "source", kv.Gaps}, {o.kvRestarts, "source", kv.Restarts},
	} {
		for k, v := range f.vals {
			obs.ObserveInt64(f.inst, v, attrs(attribute.String(f.label, k)))
		}
	}

	obs.ObserveInt64(o.watchers, int64(s.audit.Watchers()))
	obs.ObserveInt64(o.skipped, s.audit.Skipped())
	if f := s.cfg.AuditFile; f != nil {
		st := f.Stats()
		obs.ObserveInt64(o.fileWritten, st.Written)
		obs.ObserveInt64(o.fileDropped, st.Dropped)
		obs.ObserveInt64(o.fileRotated, st.Rotations)
		obs.ObserveInt64(o.fileErrors, st.Errors)
	}
	s.mu.Lock()
	split := s.split
	s.mu.Unlock()
	if split != nil {
		obs.ObserveInt64(o.sniffFails, split.sniffFails.Load())
	}
}

// collectFleet observes every replica's load and cache and every model's
// index.
func (o *observed) collectFleet(obs metric.Observer, s *Server, m *metrics) {
	type modelState struct{ model, state string }
	states := map[modelState]int64{}
	live := map[string]bool{}
	for _, st := range s.router.Replicas("") {
		live[st.ID] = true
		states[modelState{st.Model, st.State.String()}]++
		model, replica := attribute.String("model", st.Model), attribute.String("replica", st.ID)
		rep := attrs(model, replica)
		obs.ObserveInt64(o.prefill, st.Load.PrefillTokens, rep)
		obs.ObserveInt64(o.decode, st.Load.DecodeBlocks, rep)
		obs.ObserveInt64(o.active, int64(st.Load.ActiveRequests), rep)
		for t := range index.NumTiers {
			obs.ObserveInt64(o.cached, int64(st.CachedBlocks[t]), attrs(model, replica, attribute.String("tier", index.Tier(t).String())))
		}
	}
	m.forgetReplicas(live)
	models := map[string]bool{}
	for ms, n := range states {
		models[ms.model] = true
		obs.ObserveInt64(o.replicas, n, attrs(attribute.String("model", ms.model), attribute.String("state", ms.state)))
	}
	for name := range models {
		ix := s.router.Index(name)
		if ix == nil {
			continue
		}
		st := ix.Stats()
		model := attribute.String("model", name)
		one := attrs(model)
		obs.ObserveInt64(o.ixBlocks, int64(st.Blocks), one)
		obs.ObserveInt64(o.ixPredicted, int64(st.Predicted), one)
		obs.ObserveInt64(o.ixMemory, st.MemoryBytes, one)
		obs.ObserveInt64(o.ixEvicted, int64(st.Evicted), one)
		obs.ObserveInt64(o.ixUnknownRemoved, int64(st.UnknownRemoved), one)
		obs.ObserveInt64(o.ixRemapped, int64(st.Remapped), one)
		obs.ObserveInt64(o.ixPredX, int64(st.Expired), one)
		var tiers [index.NumTiers]int
		for _, per := range st.Replicas {
			for t := range index.NumTiers {
				tiers[t] += per[t]
			}
		}
		for t := range index.NumTiers {
			obs.ObserveInt64(o.ixEntries, int64(tiers[t]), attrs(model, attribute.String("tier", index.Tier(t).String())))
		}
		for reason, v := range st.Rejected {
			obs.ObserveInt64(o.ixRejected, int64(v), attrs(model, attribute.String("reason", reason)))
		}
	}
}
