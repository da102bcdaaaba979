package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// buildBinary compiles cmd/switchyard into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "switchyard")
	cmd := exec.Command("go", "build", "-o", bin, "../cmd/switchyard")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryServeAndSIGTERM runs `switchyard serve` as a process, uses it
// over JSON and through `switchyard pick`, and checks SIGTERM exits 0.
func TestBinaryServeAndSIGTERM(t *testing.T) {
	bin := buildBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cmd := exec.CommandContext(ctx, bin, "serve", "--listen", "127.0.0.1:0", "--log-format", "json")
	cmd.Env = append(os.Environ(), "SWITCHYARD_MAX_CANDIDATES=8")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	var start map[string]any
	for lines.Scan() {
		var rec map[string]any
		if json.Unmarshal(lines.Bytes(), &rec) == nil && rec["msg"] == "switchyard serving" {
			start = rec
			break
		}
	}
	if start == nil {
		t.Fatalf("no start-up line from serve (scan err %v)", lines.Err())
	}
	go io.Copy(io.Discard, stderr)
	if start["max_candidates"] != "8" {
		t.Errorf("start-up line shows max_candidates=%v, want 8 from SWITCHYARD_MAX_CANDIDATES", start["max_candidates"])
	}
	addr := start["addr"].(string)

	post := func(path, body string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, id := range []string{"a", "b"} {
		if code := post("/switchyard.v1.ReplicaService/RegisterReplica", `{"replica":{"id":"`+id+`","model":"m"}}`); code != 200 {
			t.Fatalf("register %s: HTTP %d", id, code)
		}
	}
	out, err := exec.CommandContext(ctx, bin, "pick", "--addr", addr, "--model", "m", "--random-tokens", "100", "--request-id", "cli-1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "request cli-1 -> ") {
		t.Fatalf("switchyard pick: %v\n%s", err, out)
	}
	if out, err := exec.CommandContext(ctx, bin, "version").Output(); err != nil || !strings.HasPrefix(string(out), "switchyard ") {
		t.Fatalf("switchyard version: %v %q", err, out)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) || err != nil {
		t.Fatalf("serve after SIGTERM: %v, want exit 0", err)
	}
}

// TestBinaryRejectsBadConfig checks that a bad flag, environment value or
// config key stops serve with a message naming it.
func TestBinaryRejectsBadConfig(t *testing.T) {
	bin := buildBinary(t)
	cfg := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(cfg, []byte("listen: 127.0.0.1:0\nmax_candidtes: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"unknown flag", []string{"serve", "--no-such-flag"}, "", "no-such-flag"},
		{"bad env value", []string{"serve", "--listen", "127.0.0.1:0"}, "SWITCHYARD_BLOCK_SIZE=sixteen", "SWITCHYARD_BLOCK_SIZE"},
		{"negative limit", []string{"serve", "--listen", "127.0.0.1:0", "--max-candidates", "-1"}, "", "max-candidates"},
		{"config typo", []string{"serve", "--config", cfg}, "", `unknown key "max_candidtes"`},
		{"unknown policy", []string{"serve", "--listen", "127.0.0.1:0", "--policy", "nope"}, "", "nope"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, bin, tc.args...)
			cmd.Env = os.Environ()
			if tc.env != "" {
				cmd.Env = append(cmd.Env, tc.env)
			}
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("serve succeeded, want failure; output:\n%s", out)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Fatalf("output does not name %q:\n%s", tc.want, out)
			}
		})
	}
}
