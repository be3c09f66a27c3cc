package selfmon

import (
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A /proc/stat of a two-CPU machine (fields: user nice system idle iowait
// irq softirq steal guest guest_nice).
const procStat = `cpu  206099 7 53640 29733 166 0 598 1633 500 0
cpu0 103000 3 26800 14800 80 0 300 800 250 0
cpu1 103099 4 26840 14933 86 0 298 833 250 0
intr 123456 0 0
ctxt 987654
btime 1700000000
processes 4242
procs_running 13
`

func TestParseCPUStat(t *testing.T) {
	s, err := ParseCPUStat([]byte(procStat))
	if err != nil {
		t.Fatal(err)
	}
	// The guest fields are inside user and nice already: not added again.
	want := CPUStat{Total: 206099 + 7 + 53640 + 29733 + 166 + 0 + 598 + 1633, Idle: 29733 + 166, Steal: 1633, CPUs: 2}
	if s != want {
		t.Errorf("got %+v, want %+v", s, want)
	}
	if s.Busy() != want.Total-want.Idle {
		t.Errorf("busy %d", s.Busy())
	}
	// An old kernel's four fields.
	s, err = ParseCPUStat([]byte("cpu 10 0 5 85\ncpu0 10 0 5 85\n"))
	if err != nil || s != (CPUStat{Total: 100, Idle: 85, CPUs: 1}) {
		t.Errorf("four fields: %+v %v", s, err)
	}
	for name, in := range map[string]string{
		"empty":           "",
		"no aggregate":    "cpu0 1 2 3 4\n",
		"no per-cpu":      "cpu 1 2 3 4\n",
		"short":           "cpu 1 2 3\ncpu0 1 2 3\n",
		"not a number":    "cpu 1 x 3 4\ncpu0 1 2 3 4\n",
		"negative":        "cpu 1 -2 3 4\ncpu0 1 2 3 4\n",
		"two aggregates":  "cpu 1 2 3 4\ncpu 1 2 3 4\ncpu0 1 2 3 4\n",
		"overflowing sum": "cpu 18446744073709551615 1 0 0\ncpu0 1 2 3 4\n",
	} {
		if s, err := ParseCPUStat([]byte(in)); err == nil {
			t.Errorf("%s: parsed %+v", name, s)
		}
	}
}

func TestParsePressure(t *testing.T) {
	p, err := ParsePressure([]byte("some avg10=92.09 avg60=96.29 avg300=95.84 total=1176930678\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"))
	if err != nil || p.SomeAvg10 != 92.09 || p.SomeTotal != 1176930678*time.Microsecond {
		t.Errorf("got %+v %v", p, err)
	}
	for name, in := range map[string]string{
		"empty":       "",
		"full only":   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
		"no total":    "some avg10=1.00 avg60=0.00 avg300=0.00\n",
		"bad avg":     "some avg10=x avg60=0.00 avg300=0.00 total=1\n",
		"over 100":    "some avg10=101 avg60=0.00 avg300=0.00 total=1\n",
		"huge total":  "some avg10=1 total=18446744073709551615\n",
		"minus total": "some avg10=1 total=-5\n",
	} {
		if p, err := ParsePressure([]byte(in)); err == nil {
			t.Errorf("%s: parsed %+v", name, p)
		}
	}
}

func TestParseLoadAvg(t *testing.T) {
	if v, err := ParseLoadAvg([]byte("13.07 15.52 12.02 13/191 14238\n")); err != nil || v != 13.07 {
		t.Errorf("got %v %v", v, err)
	}
	for _, in := range []string{"", "\n", "x 1 2", "-1 0 0", "NaN 1 1", "+Inf 1 1"} {
		if v, err := ParseLoadAvg([]byte(in)); err == nil {
			t.Errorf("%q: parsed %v", in, v)
		}
	}
}

// TestHostBetween computes the host's figures from two readings: 2 CPUs
// over 1 s (200 ticks), 150 of them busy, 10 stolen, the process using
// 0.25 s of CPU and some task waiting for a CPU 0.6 s of it.
func TestHostBetween(t *testing.T) {
	a := hostSnapshot{stat: &CPUStat{Total: 1000, Idle: 400, Steal: 5, CPUs: 2}, psi: &Pressure{SomeTotal: time.Second}}
	b := hostSnapshot{stat: &CPUStat{Total: 1200, Idle: 450, Steal: 15, CPUs: 2}, psi: &Pressure{SomeTotal: 1600 * time.Millisecond},
		load1: 3.5, hasLoad: true}
	h := hostBetween(a, b, time.Second, 250*time.Millisecond)
	if h == nil {
		t.Fatal("no figures")
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if h.CPUs != 2 || !near(h.BusyCores, 1.5) || !near(h.OtherCores, 1.25) || !near(h.StealShare, 0.05) ||
		h.CPUPressure == nil || !near(*h.CPUPressure, 0.6) || h.LoadAvg1 == nil || *h.LoadAvg1 != 3.5 {
		t.Errorf("got %+v", h)
	}
	b.psi = nil
	if h := hostBetween(a, b, time.Second, 0); h == nil || h.CPUPressure != nil {
		t.Errorf("without pressure: %+v", h)
	}
	if hostBetween(a, a, time.Second, 0) != nil || hostBetween(hostSnapshot{}, b, time.Second, 0) != nil || hostBetween(a, b, 0, 0) != nil {
		t.Error("figures from readings that do not advance")
	}
}

// TestReadHostFromFiles reads a proc directory written by the test, and one
// that lacks the pressure file (older kernels, other systems).
func TestReadHostFromFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", procStat)
	write("loadavg", "0.50 0.40 0.30 1/100 42\n")
	h := readHost(dir)
	if h.stat == nil || h.stat.CPUs != 2 || h.psi != nil || !h.hasLoad || h.load1 != 0.5 {
		t.Errorf("got %+v", h)
	}
	write("pressure/cpu", "some avg10=1.00 avg60=0.50 avg300=0.25 total=100\n")
	if h := readHost(dir); h.psi == nil || h.psi.SomeTotal != 100*time.Microsecond {
		t.Errorf("with pressure: %+v", h)
	}
	if h := readHost(filepath.Join(dir, "absent")); h.stat != nil || h.psi != nil || h.hasLoad {
		t.Errorf("absent directory: %+v", h)
	}
}

// FuzzParseHost: the parsers of the kernel's files never panic, and what
// they accept is consistent.
func FuzzParseHost(f *testing.F) {
	f.Add([]byte(procStat))
	f.Add([]byte("some avg10=92.09 avg60=96.29 avg300=95.84 total=1176930678\nfull avg10=0.00 total=0\n"))
	f.Add([]byte("13.07 15.52 12.02 13/191 14238\n"))
	f.Add([]byte("cpu 1 2 3 4\ncpu0 1 2 3 4\ncpu 5"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if s, err := ParseCPUStat(b); err == nil {
			if s.CPUs < 1 || s.Idle > s.Total || s.Steal > s.Total {
				t.Errorf("inconsistent %+v from %q", s, b)
			}
		}
		if p, err := ParsePressure(b); err == nil && (p.SomeAvg10 < 0 || p.SomeAvg10 > 100 || p.SomeTotal < 0) {
			t.Errorf("inconsistent %+v from %q", p, b)
		}
		if v, err := ParseLoadAvg(b); err == nil && (v < 0 || math.IsNaN(v) || math.IsInf(v, 0)) {
			t.Errorf("load %v from %q", v, b)
		}
	})
}
