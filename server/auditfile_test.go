package server

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	v1 "github.com/switchyard-llm/switchyard/gen/go/switchyard/v1"
	"github.com/switchyard-llm/switchyard/scoring"
)

func testDecision(i int) *scoring.Decision {
	return &scoring.Decision{
		DecisionID: fmt.Sprintf("d%d", i), RequestID: fmt.Sprintf("req-%03d", i), Model: "m", Policy: "token_load",
		ReplicaID: "a", Fallbacks: []string{"b"}, PromptTokens: 64, CachedTokens: 16,
		Candidates: []scoring.CandidateScore{{ReplicaID: "a", Rank: 1, Cost: 1.5}, {ReplicaID: "b", Rank: 2, Cost: 2}},
		Time:       time.Unix(1_700_000_000+int64(i), 0).UTC(),
	}
}

// readDecisions parses a JSONL audit file; a missing file is empty.
func readDecisions(t *testing.T, path string) []*v1.Decision {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []*v1.Decision
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		d := &v1.Decision{}
		if err := protojson.Unmarshal(sc.Bytes(), d); err != nil {
			t.Fatalf("%s: line %d: %v", path, len(out)+1, err)
		}
		out = append(out, d)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAuditFileRotation(t *testing.T) {
	cases := []struct {
		name      string
		decisions int
		maxBytes  int64
		backups   int
	}{
		{"no rotation", 5, 1 << 20, 2},
		{"rotates, keeps 2 backups", 40, 1500, 2},
		{"rotates, keeps 1 backup", 40, 1500, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			af, err := OpenAuditFile(AuditFileConfig{Path: path, MaxBytes: tc.maxBytes, Backups: tc.backups}, nil)
			if err != nil {
				t.Fatal(err)
			}
			log := NewAuditLog(100)
			if err := af.attach(log); err != nil {
				t.Fatal(err)
			}
			for i := range tc.decisions {
				log.Record(testDecision(i))
			}
			log.Record(testDecision(tc.decisions - 1)) // an idempotent retry is not written twice
			if err := af.Close(); err != nil {
				t.Fatal(err)
			}
			st := af.Stats()
			if st.Written != int64(tc.decisions) || st.Dropped != 0 || st.Errors != 0 {
				t.Fatalf("stats %+v, want %d written and nothing lost", st, tc.decisions)
			}
			if _, err := os.Stat(fmt.Sprintf("%s.%d", path, tc.backups+1)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("backup %d exists beyond the limit of %d", tc.backups+1, tc.backups)
			}
			// Oldest backup first, the live file last: request ids ascend
			// without a hole and end with the last decision.
			var all []*v1.Decision
			for i := tc.backups; i >= 1; i-- {
				all = append(all, readDecisions(t, fmt.Sprintf("%s.%d", path, i))...)
			}
			live := readDecisions(t, path)
			all = append(all, live...)
			if len(live) == 0 {
				t.Fatal("the live file is empty")
			}
			first := tc.decisions - len(all)
			for i, d := range all {
				if want := testDecision(first + i).RequestID; d.GetRequestId() != want {
					t.Fatalf("decision %d is %s, want %s", i, d.GetRequestId(), want)
				}
			}
			if tc.maxBytes < 1<<20 && st.Rotations == 0 {
				t.Error("no rotation happened")
			}
			for i := 0; i <= tc.backups; i++ {
				name := path
				if i > 0 {
					name = fmt.Sprintf("%s.%d", path, i)
				}
				if fi, err := os.Stat(name); err == nil && fi.Size() > tc.maxBytes {
					t.Errorf("%s is %d bytes, over the limit of %d", name, fi.Size(), tc.maxBytes)
				}
			}
			if got := all[len(all)-1]; got.GetReplicaId() != "a" || len(got.GetCandidates()) != 2 || got.GetCandidates()[0].GetCost() != 1.5 {
				t.Errorf("decision content not kept: %v", got)
			}
		})
	}
}

func TestAuditFileAppendsAndMisuse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	for round := range 2 {
		af, err := OpenAuditFile(AuditFileConfig{Path: path}, nil)
		if err != nil {
			t.Fatal(err)
		}
		log := NewAuditLog(10)
		if err := af.attach(log); err != nil {
			t.Fatal(err)
		}
		if err := af.attach(NewAuditLog(10)); !errors.Is(err, ErrAuditFile) {
			t.Errorf("second attach: err = %v, want ErrAuditFile", err)
		}
		log.Record(testDecision(round))
		if err := af.Close(); err != nil {
			t.Fatal(err)
		}
		if err := af.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		if err := af.attach(log); !errors.Is(err, ErrAuditFile) {
			t.Errorf("attach after Close: err = %v, want ErrAuditFile", err)
		}
		log.Record(testDecision(10 + round)) // no longer subscribed: not written
	}
	if got := readDecisions(t, path); len(got) != 2 || got[1].GetRequestId() != testDecision(1).RequestID {
		t.Fatalf("reopening did not append: %d decisions", len(got))
	}

	if _, err := OpenAuditFile(AuditFileConfig{}, nil); !errors.Is(err, ErrAuditFile) {
		t.Errorf("no path: err = %v, want ErrAuditFile", err)
	}
	if _, err := OpenAuditFile(AuditFileConfig{Path: t.TempDir()}, nil); err == nil {
		t.Error("a directory opened as the audit file")
	}
	unattached, err := OpenAuditFile(AuditFileConfig{Path: filepath.Join(t.TempDir(), "x.jsonl")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := unattached.Close(); err != nil {
		t.Errorf("closing an unattached file: %v", err)
	}
}
