package server

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// metricCheck is one sample's expected change between two scrapes.
type metricCheck struct {
	name   string
	labels map[string]string
	delta  float64
}

func checkDeltas(t *testing.T, before, after families, checks []metricCheck) {
	t.Helper()
	for _, c := range checks {
		b, err := before.value(c.name, c.labels)
		if err != nil {
			b = 0 // an observable series may first appear after activity
		}
		a, err := after.value(c.name, c.labels)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if a-b != c.delta {
			t.Errorf("%s%v moved by %v (%v -> %v), want %v", c.name, c.labels, a-b, b, a, c.delta)
		}
	}
}

func lifecycleEvent(id, replica string, kind string) *v1.LifecycleEvent {
	e := &v1.LifecycleEvent{RequestId: id, ReplicaId: replica}
	switch kind {
	case "admitted":
		e.Event = &v1.LifecycleEvent_Admitted{Admitted: &v1.RequestAdmitted{PromptTokens: 64}}
	case "done":
		e.Event = &v1.LifecycleEvent_Done{Done: &v1.RequestDone{OutputTokens: 8}}
	}
	return e
}

func TestMetricsScrape(t *testing.T) {
	af, err := OpenAuditFile(AuditFileConfig{Path: filepath.Join(t.TempDir(), "audit.jsonl")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	l := startLive(t, Config{AuditFile: af}, "a", "b")
	t.Cleanup(func() {
		if err := af.Close(); err != nil {
			t.Error(err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	before := l.scrape(t)

	// Three picks, one dry run, one invalid request.
	var picked []*v1.PickReplicaResponse
	for i, id := range []string{"r1", "r2", "r3"} {
		picked = append(picked, l.mustPick(t, tokenPick(id, uint32(1000*i), 64)))
	}
	policy := picked[0].GetPolicy()
	dry := tokenPick("dry", 5000, 64)
	dry.DryRun = true
	l.mustPick(t, dry)
	if _, err := l.pick.PickReplica(ctx, &v1.PickReplicaRequest{Model: "m"}); err == nil {
		t.Fatal("a pick without request id succeeded")
	}

	// Lifecycle: r1 admitted, r2 done, and a done for an id never picked.
	if _, err := l.pick.ReportLifecycle(ctx, &v1.ReportLifecycleRequest{Events: []*v1.LifecycleEvent{
		lifecycleEvent("r1", picked[0].GetReplicaId(), "admitted"),
		lifecycleEvent("r2", picked[1].GetReplicaId(), "done"),
		lifecycleEvent("ghost", "a", "done"),
	}}); err != nil {
		t.Fatal(err)
	}

	// KV: a batch for replica a with a stored chain of 2 blocks and an
	// orphan (its parent is unknown).
	orphanParent := uint64(424242)
	st, err := v1.NewKVEventServiceClient(l.conn).PublishKVEvents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Send(&v1.PublishKVEventsRequest{ReplicaId: "a", Sequence: 1, Events: []*v1.KVEvent{
		storedChain(1, 2, nil), storedChain(500, 1, &orphanParent),
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.CloseAndRecv(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the audit file to write 4 decisions", func() bool { return af.Stats().Written == 4 })

	after := l.scrape(t)
	checkDeltas(t, before, after, []metricCheck{
		{"switchyard_picks_total", map[string]string{"policy": policy, "outcome": "picked"}, 3},
		{"switchyard_picks_total", map[string]string{"policy": policy, "outcome": "dry_run"}, 1},
		{"switchyard_picks_total", map[string]string{"policy": "default", "outcome": "invalid"}, 1},
		{"switchyard_pick_duration_seconds", map[string]string{"policy": policy}, 4},
		{"switchyard_replica_picks_total", map[string]string{"model": "m"}, 3},
		{"switchyard_replica_active_requests", map[string]string{"model": "m"}, 2},
		{"switchyard_lifecycle_events_total", map[string]string{"kind": "admitted"}, 1},
		{"switchyard_lifecycle_events_total", map[string]string{"kind": "done"}, 2},
		{"switchyard_lifecycle_ignored_total", map[string]string{"reason": "unknown_request"}, 1},
		{"switchyard_kv_batches_total", map[string]string{"source": "grpc"}, 1},
		{"switchyard_kv_events_applied_total", map[string]string{"kind": "stored"}, 1},
		{"switchyard_kv_events_rejected_total", map[string]string{"reason": "orphan"}, 1},
		{"switchyard_index_entries", map[string]string{"model": "m", "tier": "device"}, 2},
		{"switchyard_replica_cached_blocks", map[string]string{"replica": "a", "tier": "device"}, 2},
		{"switchyard_audit_file_written_total", nil, 4},
		{"switchyard_audit_watchers", nil, 0},
	})
	for _, c := range []metricCheck{
		{"switchyard_audit_watchers", nil, 1}, // the audit file
		{"switchyard_replicas", map[string]string{"model": "m", "state": "ready"}, 2},
		{"switchyard_replica_active_requests", map[string]string{"model": "m"}, 2},
	} {
		if v, err := after.value(c.name, c.labels); err != nil || v != c.delta {
			t.Errorf("%s%v = %v (%v), want %v", c.name, c.labels, v, err, c.delta)
		}
	}

	// Names, types and units follow the Prometheus conventions.
	for name, typ := range map[string]dto.MetricType{
		"switchyard_picks_total":                 dto.MetricType_COUNTER,
		"switchyard_pick_duration_seconds":       dto.MetricType_HISTOGRAM,
		"switchyard_replica_prefill_tokens":      dto.MetricType_GAUGE,
		"switchyard_replica_decode_blocks":       dto.MetricType_GAUGE,
		"switchyard_index_memory_bytes":          dto.MetricType_GAUGE,
		"switchyard_requests_expired_total":      dto.MetricType_COUNTER,
		"switchyard_audit_watcher_skipped_total": dto.MetricType_COUNTER,
		"switchyard_zmq_sink_errors_total":       dto.MetricType_COUNTER,
		"go_goroutines":                          dto.MetricType_GAUGE,
	} {
		fam, ok := after[name]
		if !ok {
			t.Errorf("metric family %s is missing", name)
			continue
		}
		if fam.GetType() != typ {
			t.Errorf("%s is a %s, want %s", name, fam.GetType(), typ)
		}
		if fam.GetHelp() == "" {
			t.Errorf("%s has no help text", name)
		}
	}
	hist := after["switchyard_pick_duration_seconds"].GetMetric()[0].GetHistogram()
	if len(hist.GetBucket()) != len(pickBuckets)+1 { // and +Inf
		t.Errorf("pick duration has %d buckets, want %d", len(hist.GetBucket()), len(pickBuckets)+1)
	}
}
