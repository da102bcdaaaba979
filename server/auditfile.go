package server

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/switchyard-llm/switchyard/scoring"
)

// AuditFileConfig configures the JSONL audit log. The zero value of each
// field but Path selects its documented default.
type AuditFileConfig struct {
	// Path is the file decisions are appended to (required).
	Path string
	// MaxBytes is the size past which the file is rotated. Default 100 MiB.
	MaxBytes int64
	// Backups is how many rotated files are kept: Path.1 (newest) to
	// Path.N. Default 3.
	Backups int
	// Buffer is how many decisions the writer may fall behind before it
	// skips them (counted, never blocking a pick). Default 4096.
	Buffer int
}

// Defaults of AuditFileConfig's fields.
const (
	DefaultAuditFileMaxBytes = 100 << 20
	DefaultAuditFileBackups  = 3
	DefaultAuditFileBuffer   = 4096
)

// ErrAuditFile classifies audit file misuse: a bad configuration, or a file
// attached to a second server or after Close.
var ErrAuditFile = errors.New("audit file")

// AuditFileStats are the audit file's running totals.
type AuditFileStats struct {
	Written   int64 // decisions written
	Dropped   int64 // decisions skipped because the writer fell behind
	Rotations int64 // size-based rotations
	Errors    int64 // write, rotate and open errors (each loses a decision or a rotation)
}

// AuditFile appends every decision a server records to a file, one
// protojson Decision per line (the API's JSON), rotating it by size. Its
// writer runs on its own goroutine behind a bounded buffer, so a slow disk
// never slows PickReplica: when the buffer is full decisions are skipped and
// counted.
type AuditFile struct {
	cfg AuditFileConfig
	log *slog.Logger

	mu       sync.Mutex
	attached bool
	closed   bool
	watcher  *auditWatcher
	cancel   func()
	stop     chan struct{}
	done     chan struct{}
	closeErr error

	written, rotations, errs atomic.Int64

	// Owned by the writer goroutine (or by Close when never attached).
	file    *os.File
	bw      *bufio.Writer
	size    int64
	failing bool
}

// OpenAuditFile opens (appending) or creates the audit file. The file
// receives decisions once it is given to a server in Config.AuditFile; the
// caller closes it after the server's Shutdown.
func OpenAuditFile(cfg AuditFileConfig, log *slog.Logger) (*AuditFile, error) {
	if cfg.Path == "" {
		return nil, fmt.Errorf("%w: path is required", ErrAuditFile)
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultAuditFileMaxBytes
	}
	if cfg.Backups <= 0 {
		cfg.Backups = DefaultAuditFileBackups
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultAuditFileBuffer
	}
	if log == nil {
		log = slog.Default()
	}
	f := &AuditFile{cfg: cfg, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	if err := f.open(); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *AuditFile) open() error {
	file, err := os.OpenFile(f.cfg.Path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("audit file: %w", err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return fmt.Errorf("audit file: %w", err)
	}
	f.file, f.size = file, st.Size()
	if f.bw == nil {
		f.bw = bufio.NewWriterSize(file, 64<<10)
	} else {
		f.bw.Reset(file)
	}
	return nil
}

// attach subscribes the file to a log's new decisions and starts its writer.
func (f *AuditFile) attach(a *AuditLog) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.attached || f.closed {
		return fmt.Errorf("%w: %s is already attached or closed", ErrAuditFile, f.cfg.Path)
	}
	f.attached = true
	f.watcher, f.cancel = a.watchBuffered(DecisionFilter{}, f.cfg.Buffer)
	go f.run(f.watcher.ch)
	return nil
}

// Stats returns the running totals.
func (f *AuditFile) Stats() AuditFileStats {
	f.mu.Lock()
	w := f.watcher
	f.mu.Unlock()
	st := AuditFileStats{Written: f.written.Load(), Rotations: f.rotations.Load(), Errors: f.errs.Load()}
	if w != nil {
		st.Dropped = w.skipped.Load()
	}
	return st
}

// Close unsubscribes the file, writes what is buffered, and closes it.
func (f *AuditFile) Close() error {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		<-f.done
		return f.closeErr
	}
	f.closed = true
	attached := f.attached
	f.mu.Unlock()
	if attached {
		f.cancel() // no decision is offered after this returns
		close(f.stop)
	} else {
		f.closeErr = f.finish()
		close(f.done)
	}
	<-f.done
	return f.closeErr
}

// run writes decisions until stop, then drains the buffer and closes.
func (f *AuditFile) run(ch <-chan *scoring.Decision) {
	for {
		select {
		case d := <-ch:
			f.write(d)
			if len(ch) == 0 {
				f.flush()
			}
		case <-f.stop:
			for {
				select {
				case d := <-ch:
					f.write(d)
				default:
					f.closeErr = f.finish()
					close(f.done)
					return
				}
			}
		}
	}
}

func (f *AuditFile) write(d *scoring.Decision) {
	line, err := protojson.Marshal(decisionProto(d))
	if err != nil {
		f.fail("encoding a decision", err)
		return
	}
	line = append(line, '\n')
	if f.file == nil { // a failed rotation left no file open: try again
		if err := f.open(); err != nil {
			f.fail("reopening", err)
			return
		}
	}
	if f.size > 0 && f.size+int64(len(line)) > f.cfg.MaxBytes {
		if err := f.rotate(); err != nil {
			f.fail("rotating", err)
			if f.file == nil {
				return
			}
		}
	}
	n, err := f.bw.Write(line)
	f.size += int64(n)
	if err != nil {
		f.fail("writing", err)
		f.reset()
		return
	}
	f.written.Add(1)
	if f.failing {
		f.failing = false
		f.log.Info("audit file writes recovered", "path", f.cfg.Path)
	}
}

// rotate closes the file, shifts Path.i to Path.i+1 (dropping the oldest),
// renames Path to Path.1 and opens a new Path.
func (f *AuditFile) rotate() error {
	err := f.finish()
	f.file = nil
	for i := f.cfg.Backups - 1; i >= 1; i-- {
		if rerr := os.Rename(f.backup(i), f.backup(i+1)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	if rerr := os.Rename(f.cfg.Path, f.backup(1)); rerr != nil {
		err = errors.Join(err, rerr)
	}
	if oerr := f.open(); oerr != nil {
		return errors.Join(err, oerr)
	}
	f.rotations.Add(1)
	return err
}

func (f *AuditFile) backup(i int) string { return f.cfg.Path + "." + strconv.Itoa(i) }

func (f *AuditFile) flush() {
	if f.file != nil {
		if err := f.bw.Flush(); err != nil {
			f.fail("flushing", err)
			f.reset()
		}
	}
}

// finish flushes and closes the current file.
func (f *AuditFile) finish() error {
	if f.file == nil {
		return nil
	}
	err := f.bw.Flush()
	return errors.Join(err, f.file.Close())
}

// reset closes a file whose buffered writer failed (its error is sticky),
// so the next decision reopens it.
func (f *AuditFile) reset() {
	_ = f.file.Close()
	f.file = nil
}

// fail counts an error and logs the first of a run of them.
func (f *AuditFile) fail(what string, err error) {
	f.errs.Add(1)
	if !f.failing {
		f.failing = true
		f.log.Warn("audit file: "+what+" failed; decisions are being lost", "path", f.cfg.Path, "err", err)
	}
}
