package server

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/switchyard-llm/switchyard/clients/vllm"
)

// kvSources keeps the server's subscriptions to engines' native vLLM
// KV-event streams (ZMQ): the ones configured at start-up (AddKVSource) and
// the ones replicas name when they register (Replica.kv_events).
type kvSources struct {
	sub *vllm.Subscriber
	log *slog.Logger

	mu         sync.Mutex
	registered map[string]vllm.Endpoint // subscriptions made by RegisterReplica
	cancel     context.CancelFunc
	done       chan struct{}
}

func newKVSources(sink vllm.Sink, log *slog.Logger) (*kvSources, error) {
	sub, err := vllm.New(sink, vllm.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("server: vLLM event subscriber: %w", err)
	}
	return &kvSources{sub: sub, log: log, registered: map[string]vllm.Endpoint{}}, nil
}

// start runs the subscriber until stop.
func (k *kvSources) start() {
	ctx, cancel := context.WithCancel(context.Background())
	k.mu.Lock()
	k.cancel, k.done = cancel, make(chan struct{})
	k.mu.Unlock()
	go func() {
		defer close(k.done)
		if err := k.sub.Run(ctx); err != nil && ctx.Err() == nil {
			k.log.Error("vLLM event subscriber stopped", "err", err)
		}
	}()
}

// stop ends every subscription and waits for them.
func (k *kvSources) stop() {
	k.mu.Lock()
	cancel, done := k.cancel, k.done
	k.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// add subscribes to a configured engine.
func (k *kvSources) add(ep vllm.Endpoint) error {
	return k.sub.Add(ep)
}

// syncRegistered makes the subscription of a replica that registered match
// what it asked for: ep nil = none. Subscriptions configured at start-up are
// left alone when the replica asks for none.
func (k *kvSources) syncRegistered(ctx context.Context, replica string, ep *vllm.Endpoint) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	old, had := k.registered[replica]
	if ep != nil && had && old == *ep {
		return nil
	}
	if had || ep != nil {
		// A new endpoint replaces any subscription, configured or not.
		k.sub.Remove(ctx, replica)
		delete(k.registered, replica)
	}
	if ep == nil {
		return nil
	}
	if err := k.sub.Add(*ep); err != nil {
		return err
	}
	k.registered[replica] = *ep
	return nil
}

// forget removes a deregistered replica's subscription if its registration
// made it.
func (k *kvSources) forget(ctx context.Context, replica string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.registered[replica]; ok {
		k.sub.Remove(ctx, replica)
		delete(k.registered, replica)
	}
}

// endpoint returns the replica's current subscription.
func (k *kvSources) endpoint(replica string) (vllm.Endpoint, bool) {
	for _, ep := range k.sub.Replicas() {
		if ep.Replica == replica {
			return ep, true
		}
	}
	return vllm.Endpoint{}, false
}
