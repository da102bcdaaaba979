package workload

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// azureTime is the TIMESTAMP layout of the Azure LLM inference traces.
const azureTime = "2006-01-02 15:04:05.999999999"

// ReadAzureCSV reads an Azure LLM inference trace (TIMESTAMP,ContextTokens,GeneratedTokens):
// arrivals and lengths only, so every prompt gets fresh block ids (no prefix sharing). Rows
// with zero context or generated tokens are dropped and counted. Bad rows are errors naming
// the line.
func ReadAzureCSV(r io.Reader, name string) (*Workload, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = 3
	cr.ReuseRecord = true
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w: header: %w", name, ErrFormat, err)
	}
	if strings.TrimPrefix(strings.Join(head, ","), "\ufeff") != "TIMESTAMP,ContextTokens,GeneratedTokens" {
		return nil, fmt.Errorf("%s: %w: header %q, want TIMESTAMP,ContextTokens,GeneratedTokens", name, ErrFormat, strings.Join(head, ","))
	}
	w := &Workload{Name: name, Tokenization: "fresh hash ids per prompt (no prefix information)", Dropped: map[string]int{}}
	var t0 time.Time
	var next uint64
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w: %w", name, line, ErrFormat, err)
		}
		ts, err := time.Parse(azureTime, strings.TrimSpace(rec[0]))
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w: TIMESTAMP: %w", name, line, ErrFormat, err)
		}
		in, err1 := strconv.Atoi(strings.TrimSpace(rec[1]))
		out, err2 := strconv.Atoi(strings.TrimSpace(rec[2]))
		if err := errors.Join(err1, err2); err != nil || in < 0 || out < 0 {
			return nil, fmt.Errorf("%s line %d: %w: token counts %q, %q", name, line, ErrFormat, rec[1], rec[2])
		}
		if in == 0 || out == 0 {
			w.Dropped["zero_tokens"]++
			continue
		}
		if len(w.Requests) == 0 {
			t0 = ts
		}
		if ts.Before(t0) {
			return nil, fmt.Errorf("%s line %d: %w: TIMESTAMP goes back in time", name, line, ErrFormat)
		}
		ids := make([]uint64, blocksOf(in))
		for i := range ids {
			ids[i] = next
			next++
		}
		w.Requests = append(w.Requests, Request{Timestamp: ts.Sub(t0), InputLength: in, OutputLength: out, HashIDs: ids})
	}
	if err := w.Finalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}
