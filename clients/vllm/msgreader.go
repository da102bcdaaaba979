package vllm

import (
	"bytes"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// kind classifies a msgpack value by its leading code byte.
type kind uint8

const (
	kInvalid kind = iota
	kNil
	kBool
	kInt
	kFloat
	kStr
	kBin
	kArray
	kMap
	kExt
)

func classify(c byte) kind {
	switch {
	case msgpcode.IsFixedNum(c):
		return kInt
	case msgpcode.IsFixedMap(c):
		return kMap
	case msgpcode.IsFixedArray(c):
		return kArray
	case msgpcode.IsString(c):
		return kStr
	case msgpcode.IsBin(c):
		return kBin
	case msgpcode.IsExt(c):
		return kExt
	}
	switch c {
	case msgpcode.Nil:
		return kNil
	case msgpcode.False, msgpcode.True:
		return kBool
	case msgpcode.Uint8, msgpcode.Uint16, msgpcode.Uint32, msgpcode.Uint64,
		msgpcode.Int8, msgpcode.Int16, msgpcode.Int32, msgpcode.Int64:
		return kInt
	case msgpcode.Float, msgpcode.Double:
		return kFloat
	case msgpcode.Array16, msgpcode.Array32:
		return kArray
	case msgpcode.Map16, msgpcode.Map32:
		return kMap
	}
	return kInvalid
}

// mreader reads msgpack values from one in-memory payload through the
// low-level msgpack.Decoder API, checking every length header against the
// bytes actually left, so no header can make it allocate more than the
// payload holds, and bounding the nesting it will skip through.
type mreader struct {
	buf      []byte
	br       bytes.Reader
	dec      *msgpack.Decoder
	maxDepth int
}

func newMReader(maxDepth int) *mreader {
	r := &mreader{maxDepth: maxDepth}
	// bytes.Reader is an io.ByteScanner, so the decoder reads it directly
	// without buffering and br's position is always the decoder's.
	r.dec = msgpack.NewDecoder(&r.br)
	return r
}

func (r *mreader) reset(b []byte) {
	r.buf = b
	r.br.Reset(b)
}

func (r *mreader) remaining() int { return r.br.Len() }

func truncated(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", ErrMalformed, err)
}

// next peeks at the kind of the next value without consuming it.
func (r *mreader) next() (kind, error) {
	c, err := r.dec.PeekCode()
	if err != nil {
		return kInvalid, truncated(err)
	}
	return classify(c), nil
}

// arrayLen consumes an array header; n elements need at least n bytes.
func (r *mreader) arrayLen() (int, error) {
	n, err := r.dec.DecodeArrayLen()
	return r.checkLen(n, err, 1, "array")
}

// mapLen consumes a map header; n pairs need at least 2n bytes.
func (r *mreader) mapLen() (int, error) {
	n, err := r.dec.DecodeMapLen()
	return r.checkLen(n, err, 2, "map")
}

// checkLen refuses a container header announcing more elements (of at
// least minSize bytes each) than the bytes left could hold. nil counts as empty.
func (r *mreader) checkLen(n int, err error, minSize int, what string) (int, error) {
	if err != nil {
		return 0, truncated(err)
	}
	if n < 0 {
		return 0, nil
	}
	if n > r.remaining()/minSize {
		return 0, fmt.Errorf("%w: %s of %d elements in %d bytes", ErrMalformed, what, n, r.remaining())
	}
	return n, nil
}

// raw consumes a str or bin value and returns its bytes, aliasing the payload.
func (r *mreader) raw() ([]byte, error) {
	n, err := r.dec.DecodeBytesLen()
	if err != nil {
		return nil, truncated(err)
	}
	if n <= 0 {
		return nil, nil
	}
	return r.take(n)
}

func (r *mreader) take(n int) ([]byte, error) {
	if n > r.remaining() {
		return nil, fmt.Errorf("%w: value of %d bytes in %d bytes", ErrMalformed, n, r.remaining())
	}
	pos := len(r.buf) - r.remaining()
	if _, err := r.br.Seek(int64(n), io.SeekCurrent); err != nil {
		return nil, truncated(err)
	}
	return r.buf[pos : pos+n : pos+n], nil
}

func (r *mreader) uint64() (uint64, error) {
	v, err := r.dec.DecodeUint64()
	if err != nil {
		return 0, truncated(err)
	}
	return v, nil
}

func (r *mreader) int64() (int64, error) {
	v, err := r.dec.DecodeInt64()
	if err != nil {
		return 0, truncated(err)
	}
	return v, nil
}

func (r *mreader) float64() (float64, error) {
	v, err := r.dec.DecodeFloat64()
	if err != nil {
		return 0, truncated(err)
	}
	return v, nil
}

// skip consumes one value of any type. depth is the nesting level of the
// value; containers deeper than maxDepth are refused rather than recursed into.
func (r *mreader) skip(depth int) error {
	k, err := r.next()
	if err != nil {
		return err
	}
	switch k {
	case kNil, kBool, kInt, kFloat:
		if err := r.dec.Skip(); err != nil {
			return truncated(err)
		}
		return nil
	case kStr, kBin:
		_, err := r.raw()
		return err
	case kExt:
		_, n, err := r.dec.DecodeExtHeader()
		if err != nil {
			return truncated(err)
		}
		_, err = r.take(n)
		return err
	case kArray, kMap:
		if depth >= r.maxDepth {
			return fmt.Errorf("%w: more than %d levels", ErrTooDeep, r.maxDepth)
		}
		var n int
		if k == kArray {
			n, err = r.arrayLen()
		} else {
			n, err = r.mapLen()
			n *= 2
		}
		if err != nil {
			return err
		}
		for range n {
			if err := r.skip(depth + 1); err != nil {
				return err
			}
		}
		return nil
	}
	c, _ := r.dec.PeekCode()
	return fmt.Errorf("%w: invalid msgpack code 0x%02x", ErrMalformed, c)
}

// skipN skips n consecutive values at depth.
func (r *mreader) skipN(n, depth int) error {
	for range n {
		if err := r.skip(depth); err != nil {
			return err
		}
	}
	return nil
}
