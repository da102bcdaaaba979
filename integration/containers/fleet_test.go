package containers

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	switchyard "github.com/switchyard-llm/switchyard/clients/go"
	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/integration/enginesim"
)

// model is the model the fleet's engines serve.
const model = "m"

// fleet is a router and engine-sims on one Docker network.
type fleet struct {
	t       *testing.T
	h       *harness
	net     *testcontainers.DockerNetwork
	router  *testcontainers.DockerContainer
	engines map[string]*testcontainers.DockerContainer
	ids     []string
}

// Liveness settings of the fleet's router: a probe every 500ms, out after 4 failures in a row
// (about 2s); engines heartbeat every 500ms (the heartbeat timeout is then 2s as well).
var routerCmd = []string{
	"serve", "--listen", ":50051", "--block-size", "16", "--seed", "1",
	"--liveness-interval", "500ms", "--liveness-failures", "4", "--log-level", "info",
}

// engineCmd is engine-sim's command line for replica id.
func engineCmd(id string) []string {
	return []string{
		"engine-sim", "--model", model, "--replica-id", id, "--listen", ":8000",
		"--kv-events", "tcp://*:5557", "--kv-replay", "tcp://*:5558",
		"--router", "router:50051", "--advertise-host", id, "--heartbeat", "500ms",
		"--block-size", "16", "--num-blocks", "4096", "--speedup", "20",
	}
}

// startFleet starts the network, the router and the engines ids, and waits for every engine
// to register healthy.
func startFleet(ctx context.Context, t *testing.T, h *harness, ids ...string) *fleet {
	t.Helper()
	f := &fleet{t: t, h: h, engines: map[string]*testcontainers.DockerContainer{}, ids: ids}
	nw, err := tcnetwork.New(ctx, tcnetwork.WithLabels(map[string]string{testLabel: "fleet"}))
	if err != nil {
		t.Fatalf("network: %v", err)
	}
	f.net = nw
	t.Cleanup(func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		for _, c := range f.containers() {
			if err := testcontainers.TerminateContainer(c); err != nil {
				t.Logf("terminate: %v", err)
			}
		}
		if err := nw.Remove(cctx); err != nil {
			t.Logf("network remove: %v", err)
		}
	})
	router, err := testcontainers.Run(ctx, "",
		testcontainers.WithDockerfile(h.dockerfile()),
		tcnetwork.WithNetwork([]string{"router"}, nw),
		testcontainers.WithCmd(routerCmd...),
		testcontainers.WithExposedPorts("50051/tcp"),
		testcontainers.WithLabels(map[string]string{testLabel: "router"}),
		testcontainers.WithWaitStrategy(routerReady()),
	)
	if router != nil {
		f.router = router
	}
	if err != nil {
		t.Fatalf("router container: %v", err)
	}
	for _, id := range ids {
		c, err := testcontainers.Run(ctx, "",
			testcontainers.WithDockerfile(h.dockerfile()),
			// On the default bridge first, for the host's port mappings, and on the fleet's
			// network, where the router reaches it by name: cutting that one leaves the data
			// plane's path intact, as a partition between router and engine would.
			bridgeFirst(),
			tcnetwork.WithNetwork([]string{id}, nw),
			testcontainers.WithCmd(engineCmd(id)...),
			testcontainers.WithExposedPorts("8000/tcp"),
			testcontainers.WithLabels(map[string]string{testLabel: "engine"}),
			testcontainers.WithWaitStrategy(wait.ForHTTP("/health").WithPort("8000/tcp").WithStartupTimeout(time.Minute)),
		)
		if c != nil {
			f.engines[id] = c
		}
		if err != nil {
			t.Fatalf("engine %s container: %v", id, err)
		}
	}
	f.waitHealthy(ctx, ids...)
	return f
}

// routerReady waits for the router's gRPC health check, asked as JSON over HTTP/1.1 (Connect),
// since a scratch image has no shell for testcontainers' in-container port check.
func routerReady() wait.Strategy {
	return wait.ForHTTP("/grpc.health.v1.Health/Check").WithPort("50051/tcp").
		WithMethod(http.MethodPost).WithBody(&rereadable{b: []byte("{}")}).
		WithHeaders(map[string]string{"Content-Type": "application/json"}).
		WithResponseMatcher(func(body io.Reader) bool {
			b, _ := io.ReadAll(body)
			return strings.Contains(string(b), "SERVING")
		}).WithStartupTimeout(time.Minute)
}

// rereadable is a request body that starts over after each complete read: the wait strategy
// keeps one reader for the container's life and reads it again when the container restarts.
type rereadable struct {
	b   []byte
	off int
}

func (r *rereadable) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		r.off = 0
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

// bridgeFirst attaches the container to Docker's default bridge as its first network.
func bridgeFirst() testcontainers.CustomizeRequestOption {
	return func(req *testcontainers.GenericContainerRequest) error {
		req.Networks = append([]string{"bridge"}, req.Networks...)
		return nil
	}
}

func (f *fleet) containers() []*testcontainers.DockerContainer {
	var out []*testcontainers.DockerContainer
	for _, id := range f.ids {
		if c := f.engines[id]; c != nil {
			out = append(out, c)
		}
	}
	if f.router != nil {
		out = append(out, f.router)
	}
	return out
}

// endpoint is host:port of a container's mapped port (looked up each time: a restarted
// container may get another host port).
func endpoint(ctx context.Context, c *testcontainers.DockerContainer, port string) (string, error) {
	host, err := c.Host(ctx)
	if err != nil {
		return "", err
	}
	p, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", err
	}
	return host + ":" + strconv.Itoa(int(p.Num())), nil
}

// routerAddr is the router's gRPC address on the host.
func (f *fleet) routerAddr(ctx context.Context) string {
	f.t.Helper()
	a, err := endpoint(ctx, f.router, "50051/tcp")
	if err != nil {
		f.t.Fatalf("router address: %v", err)
	}
	return a
}

// engineURL is an engine's HTTP base URL on the host.
func (f *fleet) engineURL(ctx context.Context, id string) (string, error) {
	c := f.engines[id]
	if c == nil {
		return "", fmt.Errorf("no engine %q", id)
	}
	a, err := endpoint(ctx, c, "8000/tcp")
	if err != nil {
		return "", err
	}
	return "http://" + a, nil
}

// client dials the router.
func (f *fleet) client(ctx context.Context) *switchyard.Client {
	f.t.Helper()
	c, err := switchyard.Dial(f.routerAddr(ctx), switchyard.WithTimeout(5*time.Second))
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = c.Close() })
	return c
}

// driver is a data plane on the host using the router and the engines' mapped ports.
func (f *fleet) driver(ctx context.Context, prefix string) *enginesim.Driver {
	f.t.Helper()
	d, err := enginesim.NewDriver(enginesim.DriverConfig{
		Router: f.routerAddr(ctx), Model: model, IDPrefix: prefix, RequestTimeout: 20 * time.Second,
		Resolve: func(replica string) (string, error) {
			rctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			return f.engineURL(rctx, replica)
		},
	})
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { _ = d.Close() })
	return d
}

// replicas lists the router's view by replica id.
func (f *fleet) replicas(ctx context.Context, c *switchyard.Client) (map[string]*v1.ReplicaStatus, error) {
	list, err := c.ListReplicas(ctx, model)
	if err != nil {
		return nil, err
	}
	out := map[string]*v1.ReplicaStatus{}
	for _, r := range list {
		out[r.GetReplica().GetId()] = r
	}
	return out, nil
}

// waitFor polls cond every 100ms until it holds or the timeout passes, then fails with the
// last explanation cond gave.
func waitFor(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("%s: not reached in %s: %s", what, timeout, why)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitHealthy waits until every listed engine is registered and healthy.
func (f *fleet) waitHealthy(ctx context.Context, ids ...string) {
	f.t.Helper()
	c := f.client(ctx)
	waitFor(ctx, f.t, 45*time.Second, "engines registered and healthy", func() (bool, string) {
		reps, err := f.replicas(ctx, c)
		if err != nil {
			return false, err.Error()
		}
		for _, id := range ids {
			r := reps[id]
			if r == nil {
				return false, id + " not registered"
			}
			if r.GetHealth() != v1.ReplicaHealth_REPLICA_HEALTH_HEALTHY {
				return false, fmt.Sprintf("%s is %s", id, r.GetHealth())
			}
		}
		return true, ""
	})
}

// engineCache reads an engine's real prefix cache.
func (f *fleet) engineCache(ctx context.Context, id string) (enginesim.CacheState, error) {
	var st enginesim.CacheState
	base, err := f.engineURL(ctx, id)
	if err != nil {
		return st, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/debug/cache", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// waitIndexMatches waits until, for every listed engine, the router's index holds exactly as
// many blocks as the engine's prefix cache (router and engine blocks are both 16 tokens), with
// the engine idle so the numbers can settle.
func (f *fleet) waitIndexMatches(ctx context.Context, c *switchyard.Client, ids ...string) map[string]int64 {
	f.t.Helper()
	got := map[string]int64{}
	waitFor(ctx, f.t, 30*time.Second, "router index matches the engines' caches", func() (bool, string) {
		reps, err := f.replicas(ctx, c)
		if err != nil {
			return false, err.Error()
		}
		var diffs []string
		for _, id := range ids {
			st, err := f.engineCache(ctx, id)
			if err != nil {
				return false, fmt.Sprintf("%s cache: %v", id, err)
			}
			indexed := reps[id].GetCache().GetDeviceBlocks()
			got[id] = indexed
			if st.Running+st.Waiting > 0 || indexed != int64(st.Blocks) {
				diffs = append(diffs, fmt.Sprintf("%s: index %d, engine %d (running %d, waiting %d)", id, indexed, st.Blocks, st.Running, st.Waiting))
			}
		}
		return len(diffs) == 0, strings.Join(diffs, "; ")
	})
	return got
}

// metric sums the router's Prometheus samples whose name starts with name and whose labels
// contain every given label="value" pair.
func (f *fleet) metric(ctx context.Context, name string, labels ...string) float64 {
	f.t.Helper()
	a := f.routerAddr(ctx)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a+"/metrics", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("router metrics: %v", err)
	}
	defer resp.Body.Close()
	sum := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, name) {
			continue
		}
		ok := true
		for _, l := range labels {
			ok = ok && strings.Contains(line, l)
		}
		if !ok {
			continue
		}
		if v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += v
		}
	}
	return sum
}

// disconnect cuts a container off the fleet's network; reconnect puts it back under its name.
func (f *fleet) disconnect(ctx context.Context, id string) {
	f.t.Helper()
	_, err := f.h.docker.NetworkDisconnect(ctx, f.net.ID, client.NetworkDisconnectOptions{Container: f.engines[id].GetContainerID(), Force: true})
	if err != nil {
		f.t.Fatalf("network disconnect %s: %v", id, err)
	}
}

func (f *fleet) reconnect(ctx context.Context, id string) {
	f.t.Helper()
	_, err := f.h.docker.NetworkConnect(ctx, f.net.ID, client.NetworkConnectOptions{
		Container: f.engines[id].GetContainerID(), EndpointConfig: &network.EndpointSettings{Aliases: []string{id}},
	})
	if err != nil {
		f.t.Fatalf("network connect %s: %v", id, err)
	}
}

// kill sends SIGKILL to a container, as a crashed engine process or node.
func (f *fleet) kill(ctx context.Context, c *testcontainers.DockerContainer) {
	f.t.Helper()
	if _, err := f.h.docker.ContainerKill(ctx, c.GetContainerID(), client.ContainerKillOptions{Signal: "SIGKILL"}); err != nil {
		f.t.Fatalf("kill: %v", err)
	}
}
