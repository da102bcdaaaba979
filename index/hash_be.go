//go:build ppc64 || mips || mips64 || s390x

package index

import "encoding/binary"

// blockConverter encodes a block of tokens as little-endian bytes. Big-endian
// machines must copy; the buffer is reused across the blocks of one call.
type blockConverter struct{ buf []byte }

func (c *blockConverter) bytes(tokens []uint32) []byte {
	c.buf = c.buf[:0]
	for _, t := range tokens {
		c.buf = binary.LittleEndian.AppendUint32(c.buf, t)
	}
	return c.buf
}
