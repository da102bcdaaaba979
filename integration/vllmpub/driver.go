// Package vllmpub drives publisher.py, a stand-in vLLM engine written in
// Python that puts KV-cache events on the wire exactly as vLLM's ZMQ
// publisher does (PUB with three frames, both event encodings, int and bin
// hashes, a ROUTER replay socket). Tests use it to check switchyard against a
// publisher it did not write.
//
// publisher.py runs under Debian's /usr/bin/python3, which sees the
// python3-zmq and python3-msgpack packages; the python3 first on PATH on
// these machines is a separate build that does not.
package vllmpub

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// Python is the interpreter that has Debian's python3-zmq and python3-msgpack.
const Python = "/usr/bin/python3"

// script is publisher.py, found next to this file.
func script() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "publisher.py")
}

// Require skips the test when Python lacks zmq or msgpack, except under
// CI=true, where the missing packages fail it.
func Require(t testing.TB) {
	t.Helper()
	out, err := exec.Command(Python, "-c", "import zmq, msgpack").CombinedOutput()
	if err == nil {
		return
	}
	msg := fmt.Sprintf("%s cannot import zmq and msgpack (apt-get install python3-zmq python3-msgpack): %v %s", Python, err, out)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// FreeAddr returns a free loopback TCP endpoint, "tcp://127.0.0.1:PORT".
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return "tcp://127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// Publisher is one running publisher.py process, controlled over its stdin
// and stdout (one JSON command and one JSON reply per line).
type Publisher struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan string
	gen   float64
	n     float64 // batches sent, for unique timestamps
	// Ready holds the endpoints the publisher bound.
	Ready struct {
		Pub, Replay string
	}
}

// Start runs publisher.py with args (see its --help). gen makes this
// process's batch timestamps distinct from an earlier one's. The process is
// killed when the test ends.
func Start(t testing.TB, gen float64, args ...string) *Publisher {
	t.Helper()
	cmd := exec.Command(Python, append([]string{script()}, args...)...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &Publisher{t: t, cmd: cmd, in: in, lines: make(chan string, 16), gen: gen}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(p.Kill)
	p.read(&p.Ready)
	return p
}

func (p *Publisher) read(v any) {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		if !ok {
			p.t.Fatal("publisher exited")
		}
		if err := json.Unmarshal([]byte(line), v); err != nil {
			p.t.Fatalf("publisher said %q: %v", line, err)
		}
	case <-time.After(15 * time.Second):
		p.t.Fatal("publisher did not answer")
	}
}

// Do sends one command and returns the reply's seq.
func (p *Publisher) Do(cmd map[string]any) uint64 {
	p.t.Helper()
	b, _ := json.Marshal(cmd)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		p.t.Fatal(err)
	}
	var reply struct {
		OK    bool   `json:"ok"`
		Seq   uint64 `json:"seq"`
		Error string `json:"error"`
	}
	p.read(&reply)
	if !reply.OK {
		p.t.Fatalf("publisher refused %s: %s", b, reply.Error)
	}
	return reply.Seq
}

// Send publishes (or, with publish false, only buffers for replay) one batch
// of events in vLLM's field names, and returns its unique timestamp.
func (p *Publisher) Send(events []map[string]any, encoding, hash string, publish bool) float64 {
	p.n++
	ts := p.gen*1e6 + p.n
	p.Do(map[string]any{"op": "send", "events": events, "encoding": encoding, "hash": hash, "rank": 0, "ts": ts, "publish": publish})
	return ts
}

// Kill stops the process at once, as a crashed engine.
func (p *Publisher) Kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}
