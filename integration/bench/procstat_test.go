package bench

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	cases := []struct {
		name, stat string
		want       time.Duration
		bad        bool
	}{
		{"plain", "4242 (switchyard) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 100 0 0", 3 * time.Second, false},
		{"name with spaces and parens", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0", 30 * time.Millisecond, false},
		{"no name", "7 a R 1", 0, true},
		{"short", "7 (a) R 1 2 3", 0, true},
		{"not a number", "7 (a) R 1 7 7 0 -1 0 0 0 0 0 x 2 0", 0, true},
	}
	for _, tc := range cases {
		got, err := parseStatCPU([]byte(tc.stat))
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("%s: %v, %v; want %v (error %v)", tc.name, got, err, tc.want, tc.bad)
		}
	}
}

func TestParseStatusRSS(t *testing.T) {
	got, err := parseStatusRSS(strings.NewReader("Name:\tx\nVmPeak:\t  9000 kB\nVmRSS:\t  1234 kB\nThreads:\t3\n"))
	if err != nil || got != 1234<<10 {
		t.Fatalf("%d, %v", got, err)
	}
	for _, bad := range []string{"Name:\tx\n", "VmRSS:\t12 MB\n", "VmRSS:\tx kB\n"} {
		if _, err := parseStatusRSS(strings.NewReader(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// fakeProc builds a proc tree: a tcp table with a listener on port 0xC383 (50051) inode 999 and
// one established socket on the same port, process 31 holding the listener, 32 another socket.
func fakeProc(t *testing.T) procFS {
	t.Helper()
	root := t.TempDir()
	write := func(rel, s string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("net/tcp", `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:C383 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 999 1 0 100 0 0 10 0
   1: 0100007F:C383 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 555 1 0 20 4 30 10 -1
   2: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 777 1 0 100 0 0 10 0
`)
	write("net/tcp6", "  sl  local_address remote_address st tx_queue rx_queue tr tm->when retrnsmt uid timeout inode\n")
	write("31/stat", "31 (switchyard) S 1 31 31 0 -1 0 0 0 0 0 100 20 0 0 20 0")
	write("31/status", "Name:\tswitchyard\nVmRSS:\t  2048 kB\n")
	write("self/stat", "x")
	for pid, inode := range map[string]string{"31": "999", "32": "555"} {
		if err := os.MkdirAll(filepath.Join(root, pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("socket:["+inode+"]", filepath.Join(root, pid, "fd", "3")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink("/dev/null", filepath.Join(root, pid, "fd", "0")); err != nil {
			t.Fatal(err)
		}
	}
	return procFS{root: root}
}

func TestFindListenerAndSample(t *testing.T) {
	fs := fakeProc(t)
	pid, err := fs.findListener(50051)
	if err != nil || pid != 31 {
		t.Fatalf("listener of 50051: %d, %v", pid, err)
	}
	if _, err := fs.findListener(8080); !errors.Is(err, ErrNoProcess) {
		t.Errorf("port 8080 has a listener inode no process holds: %v", err)
	}
	if _, err := fs.findListener(9); !errors.Is(err, ErrNoProcess) {
		t.Errorf("port 9: %v", err)
	}
	s, err := fs.sample(31)
	if err != nil || s.cpu != 1200*time.Millisecond || s.rss != 2<<20 {
		t.Fatalf("sample %+v, %v", s, err)
	}
	if _, err := fs.sample(32); err == nil {
		t.Error("sampled a process without stat")
	}
}

func TestSampleThisProcess(t *testing.T) {
	s, err := procFS{root: "/proc"}.sample(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if s.rss <= 0 || s.cpu < 0 {
		t.Fatalf("sample of this process %+v", s)
	}
}

func TestLocalPort(t *testing.T) {
	cases := []struct {
		addr string
		port int
		ok   bool
	}{
		{"localhost:50051", 50051, true},
		{":7000", 7000, true},
		{"127.0.0.1:80", 80, true},
		{"[::1]:81", 81, true},
		{"0.0.0.0:82", 82, true},
		{"192.0.2.10:50051", 0, false}, // TEST-NET: never this machine
		{"router.example:50051", 0, false},
		{"localhost", 0, false},
		{"localhost:http", 0, false},
	}
	for _, tc := range cases {
		if port, ok := localPort(tc.addr); port != tc.port || ok != tc.ok {
			t.Errorf("%s: %d %v, want %d %v", tc.addr, port, ok, tc.port, tc.ok)
		}
	}
}

func TestWindowSummary(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var samples []procSample
	for i := range 11 {
		samples = append(samples, procSample{at: t0.Add(time.Duration(i) * 6 * time.Second),
			cpu: time.Duration(i) * 3 * time.Second, rss: int64(100+i) << 20})
	}
	p := window(9, samples, t0, t0.Add(time.Minute))
	if p.Error != "" || p.PID != 9 || len(p.RSSMB) != 11 {
		t.Fatalf("%+v", p)
	}
	// 3 s of CPU every 6 s is half a core; RSS grows 1 MB every 6 s, 10 MB a minute.
	if p.CPUPercent < 49.9 || p.CPUPercent > 50.1 || p.RSSStartMB != 100 || p.RSSEndMB != 110 || p.RSSMaxMB != 110 ||
		p.RSSSlopeMBPerMn < 9.99 || p.RSSSlopeMBPerMn > 10.01 {
		t.Fatalf("%+v", p)
	}
	if p := window(9, samples[:1], t0, t0.Add(time.Minute)); p.Error == "" {
		t.Error("one sample gave a summary")
	}
	if p := window(9, samples, t0.Add(time.Hour), t0.Add(2*time.Hour)); p.Error == "" {
		t.Error("samples outside the window were used")
	}
}
