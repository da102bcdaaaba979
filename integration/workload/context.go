package workload

import "slices"

// idSource hands out fresh block ids.
type idSource struct{ next uint64 }

func (s *idSource) id() uint64 {
	s.next++
	return s.next - 1
}

// growingContext is a session's token history as block ids: appended tokens first fill the
// partial last block (keeping its id, the package's continuation rule), then take fresh ids.
type growingContext struct {
	ids    []uint64
	length int
}

func (c *growingContext) extend(n int, src *idSource) {
	if n <= 0 {
		return
	}
	if c.length%BlockTokens != 0 {
		fill := min(n, BlockTokens-c.length%BlockTokens)
		c.length += fill
		n -= fill
	}
	for n > 0 {
		c.ids = append(c.ids, src.id())
		step := min(n, BlockTokens)
		c.length += step
		n -= step
	}
}

// request returns a request whose prompt is the context so far.
func (c *growingContext) request(output int) Request {
	return Request{InputLength: c.length, OutputLength: output, HashIDs: slices.Clone(c.ids)}
}
