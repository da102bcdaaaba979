package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// agentRow is one row of the agent-session text traces.
type agentRow struct {
	Timestamp *int64  `json:"timestamp"` // µs since the epoch
	Input     *string `json:"input"`
	Output    *string `json:"output"`
	SessionID string  `json:"session_id"`
}

// AgentTurn is one decoded row of an agent-session trace.
type AgentTurn struct {
	Timestamp     time.Time
	SessionID     string
	Input, Output string
}

// ReadAgentTurns reads one agent-session JSONL stream ({"timestamp": µs, "input", "output",
// "session_id"}). A row without a session id takes fallbackSession. Bad rows are errors naming
// the line.
func ReadAgentTurns(r io.Reader, name, fallbackSession string) ([]AgentTurn, error) {
	var out []AgentTurn
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 1<<20), 256<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var row agentRow
		if err := json.Unmarshal(b, &row); err != nil {
			return nil, fmt.Errorf("%s line %d: %w: %w", name, line, ErrFormat, err)
		}
		switch {
		case row.Timestamp == nil:
			return nil, fmt.Errorf("%s line %d: %w: timestamp is missing", name, line, ErrFormat)
		case row.Input == nil:
			return nil, fmt.Errorf("%s line %d: %w: input is missing", name, line, ErrFormat)
		case row.Output == nil:
			return nil, fmt.Errorf("%s line %d: %w: output is missing", name, line, ErrFormat)
		}
		if row.SessionID == "" {
			row.SessionID = fallbackSession
		}
		out = append(out, AgentTurn{
			Timestamp: time.UnixMicro(*row.Timestamp), SessionID: row.SessionID,
			Input: *row.Input, Output: *row.Output,
		})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrFormat, err)
	}
	return out, nil
}

// ReadAgentDir reads every *.jsonl file under dir (recursively, in sorted path order) as agent
// sessions; see AgentWorkload.
func ReadAgentDir(dir string) (*Workload, error) {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && filepath.Ext(p) == ".jsonl" {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("agent traces %s: %w", dir, err)
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("agent traces %s: %w: no .jsonl files", dir, ErrFormat)
	}
	slices.Sort(paths)
	var turns []AgentTurn
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		t, err := ReadAgentTurns(f, p, filepath.Base(p))
		f.Close()
		if err != nil {
			return nil, err
		}
		turns = append(turns, t...)
	}
	return AgentWorkload(filepath.Base(filepath.Clean(dir)), turns)
}

// AgentWorkload tokenizes agent turns (Tokenize) and turns them into a workload: timestamps
// relative to the earliest turn, turns of a session in timestamp order, requests ordered by
// timestamp, block ids assigned so that equal token prefixes share ids across sessions.
// Empty outputs count as one token. No delays are set: replay closed loop (a think time) or
// open loop at the recorded timestamps.
func AgentWorkload(name string, turns []AgentTurn) (*Workload, error) {
	if len(turns) == 0 {
		return nil, fmt.Errorf("%s: %w: no turns", name, ErrFormat)
	}
	order := make([]int, len(turns))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return turns[a].Timestamp.Compare(turns[b].Timestamp) })
	t0 := turns[order[0]].Timestamp
	w := &Workload{Name: name, Tokenization: TokenizerName, Dropped: map[string]int{}}
	ids := newIDAssigner()
	var buf []uint32
	for _, k := range order {
		t := &turns[k]
		buf = Tokenize(buf[:0], t.Input)
		if len(buf) == 0 {
			w.Dropped["empty_input"]++
			continue
		}
		out := len(Tokenize(nil, t.Output))
		w.Requests = append(w.Requests, Request{
			Timestamp: t.Timestamp.Sub(t0), SessionID: t.SessionID,
			InputLength: len(buf), OutputLength: max(1, out), HashIDs: ids.assign(buf),
		})
	}
	if err := w.Finalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}
