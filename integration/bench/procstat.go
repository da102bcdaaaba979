package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// ErrNoProcess reports that no local process could be found for the router.
var ErrNoProcess = errors.New("bench: router process not found")

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// procFS reads process statistics from a proc file system (root "/proc"; tests use a copy).
type procFS struct{ root string }

// procSample is one reading of a process: CPU time used so far and resident memory.
type procSample struct {
	at  time.Time
	cpu time.Duration
	rss int64 // bytes
}

// sample reads pid's CPU time and resident set size.
func (p procFS) sample(pid int) (procSample, error) {
	s := procSample{at: time.Now()}
	stat, err := os.ReadFile(filepath.Join(p.root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return s, err
	}
	if s.cpu, err = parseStatCPU(stat); err != nil {
		return s, fmt.Errorf("%s/%d/stat: %w", p.root, pid, err)
	}
	f, err := os.Open(filepath.Join(p.root, strconv.Itoa(pid), "status"))
	if err != nil {
		return s, err
	}
	defer f.Close()
	if s.rss, err = parseStatusRSS(f); err != nil {
		return s, fmt.Errorf("%s/%d/status: %w", p.root, pid, err)
	}
	return s, nil
}

// parseStatCPU returns utime+stime from the contents of /proc/<pid>/stat. The command name
// (field 2) may hold spaces and parentheses, so fields are counted after its last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	end := bytes.LastIndexByte(stat, ')')
	if end < 0 {
		return 0, errors.New("no command name")
	}
	f := strings.Fields(string(stat[end+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("%d fields after the command name, want at least 13", len(f))
	}
	utime, err1 := strconv.ParseUint(f[11], 10, 64)
	stime, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * clockTick, nil
}

// parseStatusRSS returns VmRSS from /proc/<pid>/status, in bytes.
func parseStatusRSS(r io.Reader) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("VmRSS line %q", sc.Text())
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		return kb << 10, err
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errors.New("no VmRSS line")
}

// findListener returns the local process listening on TCP port port: the socket's inode from
// net/tcp and net/tcp6, then the process with a descriptor on it.
func (p procFS) findListener(port int) (int, error) {
	inodes := map[string]bool{}
	for _, name := range []string{"tcp", "tcp6"} {
		f, err := os.Open(filepath.Join(p.root, "net", name))
		if err != nil {
			continue
		}
		err = listenInodes(f, port, inodes)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s/net/%s: %w", p.root, name, err)
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("%w: no socket listening on port %d", ErrNoProcess, port)
	}
	dirs, err := os.ReadDir(p.root)
	if err != nil {
		return 0, err
	}
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join(p.root, d.Name(), "fd"))
		if err != nil {
			continue // not ours to read, or gone
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(p.root, d.Name(), "fd", fd.Name()))
			if err != nil {
				continue
			}
			if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
				return pid, nil
			}
		}
	}
	return 0, fmt.Errorf("%w: port %d is listened on by a process this user cannot see", ErrNoProcess, port)
}

// listenInodes adds the inodes of the sockets in LISTEN state on port from a net/tcp table.
func listenInodes(r io.Reader, port int, inodes map[string]bool) error {
	sc := bufio.NewScanner(r)
	for first := true; sc.Scan(); first = false {
		f := strings.Fields(sc.Text())
		if first || len(f) < 10 {
			continue // header
		}
		_, hexPort, ok := strings.Cut(f[1], ":")
		if !ok {
			return fmt.Errorf("local address %q", f[1])
		}
		v, err := strconv.ParseUint(hexPort, 16, 16)
		if err != nil {
			return fmt.Errorf("local address %q: %w", f[1], err)
		}
		const stateListen = "0A"
		if int(v) == port && f[3] == stateListen {
			inodes[f[9]] = true
		}
	}
	return sc.Err()
}

// localPort returns the port of addr when its host is this machine (a loopback address,
// "localhost", an empty host or one of this machine's addresses).
func localPort(addr string) (int, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0, false
	}
	if host == "" || host == "localhost" {
		return n, true
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return 0, false
	}
	if ip.IsLoopback() || ip.IsUnspecified() {
		return n, true
	}
	ifaces, err := net.InterfaceAddrs()
	if err != nil {
		return 0, false
	}
	for _, a := range ifaces {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.Equal(ip) {
			return n, true
		}
	}
	return 0, false
}
