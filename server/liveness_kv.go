package server

import "context"

// restartKVSource starts a restored replica's ZMQ event stream afresh, if it has one: the
// new stream has no sequence history, so its first live batch makes it catch up from the
// engine's replay buffer, rebuilding the entries the quarantine dropped (or, without a replay
// endpoint, it starts from what the engine stores next).
func (s *Server) restartKVSource(ctx context.Context, id string) {
	if s.zmqErr != nil {
		return
	}
	if err := s.zmq.restart(ctx, id); err != nil {
		s.log.Warn("liveness: restarting the replica's KV-event stream failed", "replica", id, "err", err)
	}
}

// restart removes a replica's subscription and adds it again; a replica without one is left
// alone.
func (k *kvSources) restart(ctx context.Context, replica string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	ep, ok := k.endpoint(replica)
	if !ok {
		return nil
	}
	k.sub.Remove(ctx, replica)
	return k.sub.Add(ep)
}
