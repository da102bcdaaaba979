package server

import (
	"context"
	"fmt"
	"sync"
	"testing"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// A WatchDecisions client that stops reading leaves its server goroutine
// blocked in send. Picks must go on regardless, and every decision the
// watcher cannot take is counted.
func TestBlockedWatcherDoesNotDelayPicks(t *testing.T) {
	l := startLive(t, Config{}, "a", "b")
	svc := &auditService{audit: l.srv.Audit(), limits: limits{l.srv.cfg}}

	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = svc.watchDecisions(ctx, &v1.WatchDecisionsRequest{}, func(*v1.WatchDecisionsResponse) error {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-release // a client that never reads
			return nil
		})
	}()
	t.Cleanup(func() {
		cancel()
		close(release)
		wg.Wait()
	})
	eventually(t, "the watcher to subscribe", func() bool { return l.srv.Audit().Watchers() == 1 })

	// The first decision reaches the watcher, which then blocks for good.
	l.mustPick(t, tokenPick("first", 1, 32))
	<-entered

	// Its buffer takes watcherBuffer more; every pick after that is skipped
	// for the watcher, and each pick still returns (mustPick has a deadline).
	const extra = 100
	before := l.scrape(t)
	for i := range watcherBuffer + extra {
		l.mustPick(t, tokenPick(fmt.Sprintf("p%d", i), uint32(i*100), 32))
	}
	if got := l.srv.Audit().Skipped(); got != extra {
		t.Fatalf("skipped = %d, want %d", got, extra)
	}
	checkDeltas(t, before, l.scrape(t), []metricCheck{
		{"switchyard_audit_watcher_skipped_total", nil, extra},
		{"switchyard_picks_total", map[string]string{"outcome": "picked"}, watcherBuffer + extra},
	})
}
