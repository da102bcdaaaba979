package containers

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
)

// testLabel marks every container and network these tests create, so that leftovers of a
// killed run (Ryuk is off) can be found and removed.
const testLabel = "org.switchyard.test"

// harness is what every test shares: the Docker client and the image build context.
type harness struct {
	docker *testcontainers.DockerClient
	ctxDir string // build context: the static binary and the repository's Dockerfile
	tag    string // image tag of this run
	err    error  // why the harness could not be set up
	skip   bool   // err means "no Docker here" rather than a failure
}

// setup is built once per test binary.
var setup = sync.OnceValue(newHarness)

// TestMain disables Ryuk and pins the host of published ports before testcontainers reads its
// configuration, and removes the image and the build context afterwards.
func TestMain(m *testing.M) {
	for k, v := range map[string]string{
		"TESTCONTAINERS_RYUK_DISABLED": "true",
		// Published ports are reached on loopback: testcontainers would otherwise guess a
		// gateway address when it believes it runs inside a container.
		"TESTCONTAINERS_HOST_OVERRIDE": "127.0.0.1",
	} {
		if err := os.Setenv(k, v); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	h := setup()
	if h.docker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		removeImage(ctx, h)
		cancel()
		_ = h.docker.Close()
	}
	if h.ctxDir != "" {
		_ = os.RemoveAll(h.ctxDir)
	}
	os.Exit(code)
}

// need returns the harness or ends the test: skipped without Docker (failed under CI=true).
func need(t *testing.T) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("container tests are long; skipped with -short")
	}
	h := setup()
	switch {
	case h.err == nil:
		return h
	case h.skip && os.Getenv("CI") != "true":
		t.Skipf("no Docker engine reachable, container tests skipped: %v", h.err)
	}
	t.Fatalf("container test harness: %v", h.err)
	return nil
}

func newHarness() *harness {
	h := &harness{tag: "run-" + strconv.FormatInt(time.Now().UnixNano(), 36)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	docker, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err == nil {
		_, err = docker.Ping(ctx, client.PingOptions{})
	}
	if err != nil {
		h.err, h.skip = fmt.Errorf("docker: %w", err), true
		return h
	}
	h.docker = docker
	removeLeftovers(ctx, docker)
	if h.ctxDir, err = os.MkdirTemp("", "switchyard-image-"); err != nil {
		h.err = err
		return h
	}
	h.err = buildContext(ctx, h.ctxDir)
	return h
}

// buildContext compiles the static binary and copies the Dockerfile next to it.
func buildContext(ctx context.Context, dir string) error {
	build := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", filepath.Join(dir, "switchyard"), "../../cmd/switchyard")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	for _, name := range []string{"Dockerfile", ".dockerignore"} {
		b, err := os.ReadFile(filepath.Join("..", "..", name))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// removeLeftovers removes the containers and networks of earlier runs that were killed before
// cleaning up (testcontainers labels everything org.testcontainers=true; ours also carry
// testLabel).
func removeLeftovers(ctx context.Context, docker *testcontainers.DockerClient) {
	f := client.Filters{}.Add("label", "org.testcontainers=true").Add("label", testLabel)
	cs, err := docker.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err == nil {
		for _, c := range cs.Items {
			_, _ = docker.ContainerRemove(ctx, c.ID, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
		}
	}
	ns, err := docker.NetworkList(ctx, client.NetworkListOptions{Filters: client.Filters{}.Add("label", testLabel)})
	if err == nil {
		for _, n := range ns.Items {
			_, _ = docker.NetworkRemove(ctx, n.ID, client.NetworkRemoveOptions{})
		}
	}
	is, err := docker.ImageList(ctx, client.ImageListOptions{Filters: client.Filters{}.Add("reference", imageRepo+":*")})
	if err == nil {
		for _, i := range is.Items {
			_, _ = docker.ImageRemove(ctx, i.ID, client.ImageRemoveOptions{Force: true, PruneChildren: true})
		}
	}
}

// imageRepo is the repository of the images these tests build.
const imageRepo = "switchyard-containers-test"

func removeImage(ctx context.Context, h *harness) {
	_, _ = h.docker.ImageRemove(ctx, imageRepo+":"+h.tag, client.ImageRemoveOptions{Force: true, PruneChildren: true})
}

// dockerfile is the image every container runs: built from the repository's Dockerfile, once
// (later builds hit Docker's cache), and kept until the run ends.
func (h *harness) dockerfile() testcontainers.FromDockerfile {
	return testcontainers.FromDockerfile{
		Context: h.ctxDir, Dockerfile: "Dockerfile", Repo: imageRepo, Tag: h.tag,
		KeepImage: true, BuildLogWriter: io.Discard,
	}
}
