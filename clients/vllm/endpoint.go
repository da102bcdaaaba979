package vllm

import (
	"fmt"
	"net"
	"strconv"
	"strings"
)

// maxRanks bounds the data-parallel ranks one Endpoint may fan out to.
const maxRanks = 1024

// Endpoint configures the sockets of one engine replica.
type Endpoint struct {
	// Replica names the replica in every Batch and reset.
	Replica string
	// Live is the engine's PUB endpoint, "tcp://host:port" or "ipc://path".
	Live string
	// Replay is the engine's replay ROUTER endpoint; empty when the engine has
	// none, in which case every gap resets the replica.
	Replay string
	// Bind makes switchyard listen on Live and the engine connect to it
	// (vLLM connects when its endpoint has no "*"). A Live host of "*" implies Bind.
	Bind bool
	// Topic is the ZMQ subscription prefix; "" receives every topic.
	Topic string
	// Ranks is the number of data-parallel ranks; rank r uses the Live and
	// Replay ports plus r, as vLLM does. 0 means 1.
	Ranks int
}

// ParseEndpointFlag parses the --vllm-events flag syntax:
//
//	replica=LIVE[,replay=URL][,topic=T][,bind][,ranks=N]
//
// e.g. "replica-a=tcp://10.0.0.5:5557,replay=tcp://10.0.0.5:5558,topic=kv".
// The result is validated.
func ParseEndpointFlag(s string) (Endpoint, error) {
	parts := strings.Split(s, ",")
	name, live, ok := strings.Cut(parts[0], "=")
	if !ok {
		return Endpoint{}, fmt.Errorf("%w: %q: want replica=tcp://host:port first", ErrInvalidConfig, s)
	}
	ep := Endpoint{Replica: strings.TrimSpace(name), Live: strings.TrimSpace(live)}
	for _, p := range parts[1:] {
		key, val, hasVal := strings.Cut(strings.TrimSpace(p), "=")
		switch {
		case key == "replay" && hasVal:
			ep.Replay = val
		case key == "topic" && hasVal:
			ep.Topic = val
		case key == "bind" && !hasVal:
			ep.Bind = true
		case key == "bind":
			b, err := strconv.ParseBool(val)
			if err != nil {
				return Endpoint{}, fmt.Errorf("%w: %q: bind=%q is not a boolean", ErrInvalidConfig, s, val)
			}
			ep.Bind = b
		case key == "ranks" && hasVal:
			n, err := strconv.Atoi(val)
			if err != nil {
				return Endpoint{}, fmt.Errorf("%w: %q: ranks=%q is not an integer", ErrInvalidConfig, s, val)
			}
			ep.Ranks = n
		default:
			return Endpoint{}, fmt.Errorf("%w: %q: unknown option %q (want replay=, topic=, bind, ranks=)", ErrInvalidConfig, s, p)
		}
	}
	return ep.normalize()
}

// String formats the endpoint in the syntax ParseEndpointFlag reads.
func (e Endpoint) String() string {
	var b strings.Builder
	b.WriteString(e.Replica + "=" + e.Live)
	if e.Replay != "" {
		b.WriteString(",replay=" + e.Replay)
	}
	if e.Topic != "" {
		b.WriteString(",topic=" + e.Topic)
	}
	if e.Bind {
		b.WriteString(",bind")
	}
	if e.Ranks > 1 {
		b.WriteString(",ranks=" + strconv.Itoa(e.Ranks))
	}
	return b.String()
}

// Validate reports whether the endpoint can be subscribed to.
func (e Endpoint) Validate() error {
	_, err := e.normalize()
	return err
}

// normalize validates e and fills defaults: Ranks 1, Bind for a "*" host.
func (e Endpoint) normalize() (Endpoint, error) {
	bad := func(format string, args ...any) (Endpoint, error) {
		return Endpoint{}, fmt.Errorf("%w: replica %q: %s", ErrInvalidConfig, e.Replica, fmt.Sprintf(format, args...))
	}
	if e.Replica == "" || strings.ContainsAny(e.Replica, " \t\n,=") {
		return bad("replica name must be non-empty without spaces, ',' or '='")
	}
	if e.Ranks == 0 {
		e.Ranks = 1
	}
	if e.Ranks < 0 || e.Ranks > maxRanks {
		return bad("ranks %d not in 1..%d", e.Ranks, maxRanks)
	}
	if strings.Contains(e.Topic, ",") {
		return bad("topic must not contain ','")
	}
	host, err := checkAddr(e.Live, e.Ranks)
	if err != nil {
		return bad("live endpoint: %v", err)
	}
	if host == "*" {
		e.Bind = true
	}
	if e.Replay != "" {
		host, err := checkAddr(e.Replay, e.Ranks)
		if err != nil {
			return bad("replay endpoint: %v", err)
		}
		if host == "*" || host == "" {
			return bad("replay endpoint %q must name the engine's host", e.Replay)
		}
	}
	return e, nil
}

// checkAddr validates a tcp:// or ipc:// address that ranks consecutive
// ports must fit, and returns its host ("" for ipc).
func checkAddr(addr string, ranks int) (string, error) {
	scheme, rest, ok := strings.Cut(addr, "://")
	switch {
	case !ok || rest == "":
		return "", fmt.Errorf("%q: want tcp://host:port or ipc://path", addr)
	case scheme == "ipc":
		if ranks > 1 {
			return "", fmt.Errorf("%q: several ranks need a tcp port to offset", addr)
		}
		return "", nil
	case scheme != "tcp":
		return "", fmt.Errorf("%q: unsupported transport %q", addr, scheme)
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil {
		return "", fmt.Errorf("%q: %w", addr, err)
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 0 || p+ranks-1 > 65535 || (p == 0 && ranks > 1) {
		return "", fmt.Errorf("%q: port %q does not fit %d rank(s)", addr, port, ranks)
	}
	return host, nil
}

// rankAddr offsets a validated address's port by rank (vLLM's data-parallel
// convention); rank 0 and ipc addresses are returned unchanged.
func rankAddr(addr string, rank int) string {
	if rank == 0 || addr == "" {
		return addr
	}
	rest := strings.TrimPrefix(addr, "tcp://")
	host, port, _ := net.SplitHostPort(rest)
	p, _ := strconv.Atoi(port)
	return "tcp://" + net.JoinHostPort(host, strconv.Itoa(p+rank))
}
