package vllm

import (
	"fmt"
	"math"
)

// Payload is one decoded EventBatch payload.
type Payload struct {
	// Time is the batch timestamp (seconds since the Unix epoch).
	Time float64
	// Rank is data_parallel_rank, valid when HasRank.
	Rank    int
	HasRank bool
	// Events are the accepted events, in order.
	Events []Event
	// Drops counts the events that were not accepted, by reason.
	Drops Drops
}

// maxRank bounds data_parallel_rank; larger values are treated as corrupt.
const maxRank = 1 << 16

// maxGroups bounds how many KV-cache groups a Decoder remembers.
const maxGroups = 1024

// maxInterned bounds the strings (media, LoRA names, spec kinds) a Decoder
// interns to avoid allocating them for every event.
const maxInterned = 256

// Decoder decodes vLLM EventBatch payloads. It is stateful per publisher: it
// remembers which KV-cache groups were announced as not full attention, so
// that removals from those groups (which carry no spec kind) are skipped too.
// A Decoder is not safe for concurrent use; use one per stream.
type Decoder struct {
	lim    Limits
	r      *mreader
	groups map[int]bool // group index -> full attention
	intern map[string]string
	ev     rawEvent
}

// NewDecoder returns a Decoder enforcing lim.
func NewDecoder(lim Limits) (*Decoder, error) {
	if err := lim.Validate(); err != nil {
		return nil, err
	}
	return &Decoder{
		lim:    lim,
		r:      newMReader(lim.MaxDepth),
		groups: make(map[int]bool),
		intern: make(map[string]string),
	}, nil
}

// Reset forgets the KV-cache groups learned so far; call it when the
// publisher restarted, since the new process may be configured differently.
func (d *Decoder) Reset() {
	clear(d.groups)
}

// Decode decodes one msgpack EventBatch payload: [ts, events, dp_rank?, ...].
// Invalid or skipped events are dropped and counted in Payload.Drops; an error
// (wrapping ErrMalformed, ErrTooLarge or ErrTooDeep) means the payload as a
// whole could not be decoded, and then no events are returned.
func (d *Decoder) Decode(payload []byte) (Payload, error) {
	if len(payload) > d.lim.MaxPayloadBytes {
		return Payload{}, fmt.Errorf("%w: payload of %d bytes, limit %d", ErrTooLarge, len(payload), d.lim.MaxPayloadBytes)
	}
	d.r.reset(payload)
	p, err := d.batch()
	d.r.reset(nil)
	if err != nil {
		return Payload{}, err
	}
	return p, nil
}

func (d *Decoder) batch() (Payload, error) {
	var p Payload
	r := d.r
	if k, err := r.next(); err != nil {
		return p, err
	} else if k != kArray {
		return p, fmt.Errorf("%w: batch is not an array", ErrMalformed)
	}
	n, err := r.arrayLen()
	if err != nil {
		return p, err
	}
	if n < 2 {
		return p, fmt.Errorf("%w: batch has %d fields, want at least ts and events", ErrMalformed, n)
	}
	if p.Time, err = d.timestamp(); err != nil {
		return p, err
	}
	if err := d.events(&p); err != nil {
		return p, err
	}
	if n >= 3 {
		if err := d.rank(&p); err != nil {
			return p, err
		}
	}
	if n > 3 {
		if err := r.skipN(n-3, 1); err != nil {
			return p, err
		}
	}
	if r.remaining() != 0 {
		return p, fmt.Errorf("%w: %d trailing bytes after the batch", ErrMalformed, r.remaining())
	}
	return p, nil
}

func (d *Decoder) timestamp() (float64, error) {
	k, err := d.r.next()
	if err != nil {
		return 0, err
	}
	var ts float64
	switch k {
	case kFloat:
		ts, err = d.r.float64()
	case kInt:
		var v int64
		v, err = d.r.int64()
		ts = float64(v)
	default:
		return 0, fmt.Errorf("%w: ts is not a number", ErrMalformed)
	}
	if err == nil && (math.IsNaN(ts) || math.IsInf(ts, 0)) {
		return 0, fmt.Errorf("%w: ts is not finite", ErrMalformed)
	}
	return ts, err
}

func (d *Decoder) rank(p *Payload) error {
	k, err := d.r.next()
	if err != nil {
		return err
	}
	switch k {
	case kNil:
		return d.r.skip(1)
	case kInt:
		v, err := d.r.int64()
		if err != nil {
			return err
		}
		if v < 0 || v >= maxRank {
			return fmt.Errorf("%w: data_parallel_rank %d out of range", ErrMalformed, v)
		}
		p.Rank, p.HasRank = int(v), true
		return nil
	}
	return fmt.Errorf("%w: data_parallel_rank is not an integer", ErrMalformed)
}

func (d *Decoder) events(p *Payload) error {
	r := d.r
	if k, err := r.next(); err != nil {
		return err
	} else if k != kArray {
		return fmt.Errorf("%w: events is not an array", ErrMalformed)
	}
	n, err := r.arrayLen()
	if err != nil {
		return err
	}
	if n > d.lim.MaxEvents {
		return fmt.Errorf("%w: %d events, limit %d", ErrTooLarge, n, d.lim.MaxEvents)
	}
	p.Events = make([]Event, 0, min(n, 256))
	for i := range n {
		ev, drop, err := d.event()
		if err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
		if drop != noDrop {
			p.Drops[drop]++
			continue
		}
		p.Events = append(p.Events, ev)
	}
	return nil
}

// str interns a short string read from the payload.
func (d *Decoder) str(b []byte) string {
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.intern) < maxInterned && len(b) <= 64 {
		d.intern[s] = s
	}
	return s
}
