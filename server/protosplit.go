package server

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// splitListener serves two HTTP stacks on one port. Each accepted connection
// is sniffed: an HTTP/2 connection whose first request has a gRPC content type
// goes to grpc-go's own server (its HTTP/2 transport is about twice as fast
// as net/http's for small unary calls); everything else — HTTP/1.1, h2c
// Connect or gRPC-Web — goes to net/http where connect-go answers.
//
// gRPC clients wait for the server's SETTINGS frame before they send their
// first request, so the sniffer writes an empty SETTINGS frame itself, and
// later removes the client's acknowledgement of it from the byte stream so the
// real server sees exactly the acknowledgements it expects.
type splitListener struct {
	root       net.Listener
	grpc, http *chanListener
	timeout    time.Duration
	sniffFails atomic.Int64
	wg         sync.WaitGroup
}

// sniffTimeout bounds how long a new connection may take to show its first
// request before it is closed.
const sniffTimeout = 10 * time.Second

const http2Preface = http2.ClientPreface

func newSplitListener(root net.Listener) *splitListener {
	s := &splitListener{
		root:    root,
		grpc:    newChanListener(root.Addr()),
		http:    newChanListener(root.Addr()),
		timeout: sniffTimeout,
	}
	return s
}

// run accepts connections until the root listener is closed, then closes
// both child listeners.
func (s *splitListener) run() {
	defer func() {
		s.wg.Wait()
		s.grpc.Close()
		s.http.Close()
	}()
	for {
		conn, err := s.root.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.dispatch(conn)
		}()
	}
}

func (s *splitListener) dispatch(conn net.Conn) {
	_ = conn.SetReadDeadline(time.Now().Add(s.timeout))
	toGRPC, wrapped, err := sniff(conn)
	if err != nil {
		s.sniffFails.Add(1)
		conn.Close()
		return
	}
	_ = conn.SetReadDeadline(time.Time{})
	target := s.http
	if toGRPC {
		target = s.grpc
	}
	if !target.deliver(wrapped) {
		conn.Close()
	}
}

// sniff reads the start of a connection and reports whether it is a gRPC
// (HTTP/2, application/grpc) connection, with a net.Conn that replays what was
// read.
func sniff(conn net.Conn) (bool, net.Conn, error) {
	var head [len(http2Preface)]byte
	n := 0
	for n < len(head) {
		m, err := conn.Read(head[n:])
		n += m
		if !bytes.HasPrefix([]byte(http2Preface), head[:n]) {
			// Not HTTP/2 prior knowledge: HTTP/1.x.
			return false, &replayConn{Conn: conn, r: io.MultiReader(bytes.NewReader(head[:n]), conn)}, nil
		}
		if err != nil {
			return false, nil, fmt.Errorf("reading preface: %w", err)
		}
	}
	// HTTP/2. Prompt the client with our SETTINGS, then read frames until the
	// first request's headers.
	fr := http2.NewFramer(conn, nil)
	if err := fr.WriteSettings(); err != nil {
		return false, nil, fmt.Errorf("writing settings: %w", err)
	}
	var seen bytes.Buffer
	rd := http2.NewFramer(nil, io.TeeReader(conn, &seen))
	rd.ReadMetaHeaders = hpack.NewDecoder(4096, nil)
	rd.MaxHeaderListSize = 1 << 20
	for {
		f, err := rd.ReadFrame()
		if err != nil {
			return false, nil, fmt.Errorf("reading first frames: %w", err)
		}
		mh, ok := f.(*http2.MetaHeadersFrame)
		if !ok {
			continue
		}
		isGRPC := false
		for _, hf := range mh.RegularFields() {
			if hf.Name == "content-type" {
				isGRPC = strings.HasPrefix(hf.Value, "application/grpc") &&
					!strings.HasPrefix(hf.Value, "application/grpc-web")
			}
		}
		frames := io.MultiReader(bytes.NewReader(seen.Bytes()), conn)
		r := io.MultiReader(strings.NewReader(http2Preface), &dropFirstSettingsAck{r: frames})
		return isGRPC, &replayConn{Conn: conn, r: r}, nil
	}
}

// replayConn is a connection whose reads come from r (bytes already read,
// then the connection).
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// dropFirstSettingsAck passes an HTTP/2 frame stream through, except for the
// first SETTINGS frame with the ACK flag: the client's acknowledgement of the
// sniffer's SETTINGS, which the real server never sent.
type dropFirstSettingsAck struct {
	r       io.Reader
	done    bool
	pending []byte // bytes of the current frame not yet returned
	left    uint32 // payload bytes of the current frame still to pass through
}

const (
	frameHeaderLen    = 9
	frameTypeSettings = 0x4
	flagAck           = 0x1
)

func (d *dropFirstSettingsAck) Read(p []byte) (int, error) {
	for {
		if d.done {
			return d.r.Read(p)
		}
		if len(d.pending) > 0 {
			n := copy(p, d.pending)
			d.pending = d.pending[n:]
			return n, nil
		}
		if d.left > 0 {
			if uint32(len(p)) > d.left {
				p = p[:d.left]
			}
			n, err := d.r.Read(p)
			d.left -= uint32(n)
			return n, err
		}
		var hdr [frameHeaderLen]byte
		if _, err := io.ReadFull(d.r, hdr[:]); err != nil {
			return 0, err
		}
		length := uint32(hdr[0])<<16 | uint32(hdr[1])<<8 | uint32(hdr[2])
		if hdr[3] == frameTypeSettings && hdr[4]&flagAck != 0 && length == 0 &&
			binary.BigEndian.Uint32(hdr[5:])&0x7fffffff == 0 {
			d.done = true
			continue
		}
		d.pending = append(d.pending[:0], hdr[:]...)
		d.left = length
	}
}

// chanListener is a net.Listener fed by the splitListener.
type chanListener struct {
	addr   net.Addr
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

func (l *chanListener) deliver(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.closed:
		return false
	}
}

// Accept implements net.Listener.
func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close implements net.Listener.
func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr implements net.Listener.
func (l *chanListener) Addr() net.Addr { return l.addr }
