package enginesim

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
)

// RegistrationConfig says how the engine announces itself to a switchyard router.
type RegistrationConfig struct {
	// Router is the router's gRPC address, e.g. "router:50051".
	Router string
	// Replica is what to register: id, model, data-plane address, capacity, health URL and
	// KV-event endpoints as the router should reach them.
	Replica *v1.Replica
	// Interval is the heartbeat period. 0 = 1s.
	Interval time.Duration
	// Logger receives the loop's logs; nil = slog.Default().
	Logger *slog.Logger
}

// RunRegistration registers the replica and heartbeats every Interval until ctx is done. A
// heartbeat answered NOT_FOUND (the router restarted, or dropped the replica) registers it
// again; other failures are logged and retried on the next beat, so the loop outlives router
// outages.
func RunRegistration(ctx context.Context, cfg RegistrationConfig) error {
	if cfg.Router == "" || cfg.Replica.GetId() == "" || cfg.Replica.GetModel() == "" {
		return fmt.Errorf("%w: registration needs a router address, a replica id and a model", ErrInvalid)
	}
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	conn, err := grpc.NewClient(cfg.Router, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("registration: dial %s: %w", cfg.Router, err)
	}
	defer conn.Close()
	client := v1.NewReplicaServiceClient(conn)
	id := cfg.Replica.GetId()
	registered, failing := false, false
	t := time.NewTicker(cfg.Interval)
	defer t.Stop()
	for {
		cctx, cancel := context.WithTimeout(ctx, max(cfg.Interval, time.Second))
		var err error
		if !registered {
			_, err = client.RegisterReplica(cctx, &v1.RegisterReplicaRequest{Replica: cfg.Replica})
			if err == nil {
				registered = true
				log.Info("registered with the router", "router", cfg.Router, "replica", id)
			}
		} else {
			_, err = client.Heartbeat(cctx, &v1.HeartbeatRequest{ReplicaId: id})
			if status.Code(err) == codes.NotFound {
				registered = false
				log.Info("the router does not know this replica: registering again", "replica", id)
				cancel()
				continue
			}
		}
		cancel()
		switch {
		case err != nil && !failing && ctx.Err() == nil:
			log.Warn("router unreachable; retrying every heartbeat", "router", cfg.Router, "err", err)
			failing = true
		case err == nil && failing:
			log.Info("router reachable again", "router", cfg.Router)
			failing = false
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
