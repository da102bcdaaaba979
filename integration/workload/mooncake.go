package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// maxLine bounds one JSONL row (a 1M-token prompt has ~2k ids, far below this).
const maxLine = 16 << 20

// mooncakeRow is one row of the (extended) Mooncake JSONL format.
type mooncakeRow struct {
	Timestamp    *float64 `json:"timestamp"`
	InputLength  *int     `json:"input_length"`
	OutputLength *int     `json:"output_length"`
	HashIDs      []int64  `json:"hash_ids"`
	SessionID    string   `json:"session_id"`
	Delay        *float64 `json:"delay"`
}

// ReadMooncake reads a Mooncake JSONL trace, optionally extended with session_id and delay (ms
// after the previous turn of the same session completes). timestamp is in ms. Blank lines are
// skipped; rows with output_length 0 are dropped and counted in Dropped["zero_output"]. Any
// other bad row is an error naming its line, and nothing is returned.
func ReadMooncake(r io.Reader, name string) (*Workload, error) {
	w := &Workload{Name: name, Tokenization: "hash ids expanded (ExpandBlock)", Dropped: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		req, drop, err := parseMooncakeRow(b)
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", name, line, err)
		}
		if drop != "" {
			w.Dropped[drop]++
			continue
		}
		w.Requests = append(w.Requests, req)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, ErrFormat, err)
	}
	if err := w.Finalize(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

func parseMooncakeRow(b []byte) (Request, string, error) {
	var row mooncakeRow
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&row); err != nil {
		return Request{}, "", fmt.Errorf("%w: %w", ErrFormat, err)
	}
	switch {
	case row.Timestamp == nil:
		return Request{}, "", fmt.Errorf("%w: timestamp is missing", ErrFormat)
	case row.InputLength == nil:
		return Request{}, "", fmt.Errorf("%w: input_length is missing", ErrFormat)
	case row.OutputLength == nil:
		return Request{}, "", fmt.Errorf("%w: output_length is missing", ErrFormat)
	case !finiteMS(*row.Timestamp):
		return Request{}, "", fmt.Errorf("%w: timestamp %v is negative or not finite", ErrFormat, *row.Timestamp)
	case row.Delay != nil && !finiteMS(*row.Delay):
		return Request{}, "", fmt.Errorf("%w: delay %v is negative or not finite", ErrFormat, *row.Delay)
	case row.Delay != nil && row.SessionID == "":
		return Request{}, "", fmt.Errorf("%w: delay without session_id", ErrFormat)
	}
	if *row.OutputLength == 0 {
		return Request{}, "zero_output", nil
	}
	req := Request{
		Timestamp:    msToDuration(*row.Timestamp),
		SessionID:    row.SessionID,
		InputLength:  *row.InputLength,
		OutputLength: *row.OutputLength,
		HashIDs:      make([]uint64, len(row.HashIDs)),
	}
	for i, id := range row.HashIDs {
		if id < 0 {
			return Request{}, "", fmt.Errorf("%w: hash_ids[%d] = %d is negative", ErrFormat, i, id)
		}
		req.HashIDs[i] = uint64(id)
	}
	if row.Delay != nil {
		req.Delay, req.HasDelay = msToDuration(*row.Delay), true
	}
	return req, "", req.validate()
}

func finiteMS(v float64) bool { return v >= 0 && v < 1e15 && !math.IsNaN(v) }

func msToDuration(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// WriteMooncake writes w as extended Mooncake JSONL, one request per line in order, with
// session_id and delay only where set. ReadMooncake reads it back to an equal workload.
func WriteMooncake(out io.Writer, w *Workload) error {
	bw := bufio.NewWriter(out)
	var b []byte
	for i := range w.Requests {
		r := &w.Requests[i]
		if r.HashIDs == nil && r.InputLength > 0 {
			return fmt.Errorf("request %d: %w: no hash ids", i, ErrFormat)
		}
		b = append(b[:0], `{"timestamp": `...)
		b = appendMS(b, r.Timestamp)
		b = append(b, `, "input_length": `...)
		b = strconv.AppendInt(b, int64(r.InputLength), 10)
		b = append(b, `, "output_length": `...)
		b = strconv.AppendInt(b, int64(r.OutputLength), 10)
		b = append(b, `, "hash_ids": [`...)
		for j, id := range r.HashIDs {
			if j > 0 {
				b = append(b, ", "...)
			}
			b = strconv.AppendUint(b, id, 10)
		}
		b = append(b, ']')
		if r.SessionID != "" {
			b = append(b, `, "session_id": `...)
			q, err := json.Marshal(r.SessionID)
			if err != nil {
				return fmt.Errorf("request %d: session_id: %w", i, err)
			}
			b = append(b, q...)
		}
		if r.HasDelay {
			b = append(b, `, "delay": `...)
			b = appendMS(b, r.Delay)
		}
		b = append(b, "}\n"...)
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendMS writes d in milliseconds: an integer when whole, else with ns precision.
func appendMS(b []byte, d time.Duration) []byte {
	if d%time.Millisecond == 0 {
		return strconv.AppendInt(b, int64(d/time.Millisecond), 10)
	}
	return strconv.AppendFloat(b, float64(d)/1e6, 'f', -1, 64)
}
