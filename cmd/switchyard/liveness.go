package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/switchyard-llm/switchyard/server"
)

// livenessFlags are serve's replica liveness settings.
type livenessFlags struct {
	interval         time.Duration
	failures         int
	heartbeatTimeout time.Duration
}

func (c *livenessFlags) flags(fs *flag.FlagSet) {
	fs.DurationVar(&c.interval, "liveness-interval", time.Second, "how often replicas' health URLs are probed and heartbeat deadlines checked (0 = liveness off)")
	fs.IntVar(&c.failures, "liveness-failures", server.DefaultLivenessFailureThreshold, "failed probes in a row that take a replica out of routing")
	fs.DurationVar(&c.heartbeatTimeout, "heartbeat-timeout", 0, "take out a replica that heartbeated and then went silent this long (0 = liveness-interval × liveness-failures)")
}

func (c *livenessFlags) validate() error {
	switch {
	case c.interval < 0:
		return fmt.Errorf("-liveness-interval: must not be negative, got %s", c.interval)
	case c.failures <= 0:
		return fmt.Errorf("-liveness-failures: must be positive, got %d", c.failures)
	case c.heartbeatTimeout < 0:
		return fmt.Errorf("-heartbeat-timeout: must not be negative, got %s", c.heartbeatTimeout)
	}
	return nil
}

func (c *livenessFlags) config() server.LivenessConfig {
	return server.LivenessConfig{Interval: c.interval, FailureThreshold: c.failures, HeartbeatTimeout: c.heartbeatTimeout}
}
