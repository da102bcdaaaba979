//go:build !(ppc64 || mips || mips64 || s390x)

package index

import "unsafe"

// blockConverter views a block of tokens as bytes. On little-endian machines
// the in-memory layout of []uint32 already is the little-endian byte stream
// the hash is defined over, so the view is free.
type blockConverter struct{}

func (blockConverter) bytes(tokens []uint32) []byte {
	if len(tokens) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(tokens))), len(tokens)*4)
}
