package selfmon

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// The host's side of a client delay: a goroutine that is ready to run waits
// for a core whether its own process or another one holds the cores, so the
// process's figures alone cannot tell a busy client from a busy machine.
// These are the kernel's counters for the whole machine (Linux's /proc; on
// other systems the files are absent and the host figures are unknown).

// CPUStat is the aggregate "cpu" line of /proc/stat (in clock ticks, all
// CPUs summed) and the number of CPUs it covers.
type CPUStat struct {
	Total uint64 // every state but the guest ones (already in user and nice)
	Idle  uint64 // idle and iowait: no task wanted the CPU
	Steal uint64 // taken by the hypervisor while this machine had work
	CPUs  int    // the "cpuN" lines: online CPUs
}

// Busy is the ticks some task ran.
func (s CPUStat) Busy() uint64 { return s.Total - s.Idle }

// ParseCPUStat reads the aggregate CPU line and counts the per-CPU lines of
// /proc/stat. The line holds user, nice, system, idle, iowait, irq,
// softirq, steal, guest and guest_nice; kernels before 2.6.11 stop after
// idle or iowait, and the missing fields count 0.
func ParseCPUStat(b []byte) (CPUStat, error) {
	var s CPUStat
	found := false
	for line := range bytes.Lines(b) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || !bytes.HasPrefix(fields[0], []byte("cpu")) {
			continue
		}
		if n := fields[0][3:]; len(n) > 0 {
			if _, err := strconv.ParseUint(string(n), 10, 32); err == nil {
				s.CPUs++
			}
			continue
		}
		if found {
			return CPUStat{}, errors.New("two aggregate cpu lines")
		}
		found = true
		if err := s.parseAggregate(fields[1:]); err != nil {
			return CPUStat{}, err
		}
	}
	switch {
	case !found:
		return CPUStat{}, errors.New("no aggregate cpu line")
	case s.CPUs == 0:
		return CPUStat{}, errors.New("no per-CPU lines")
	}
	return s, nil
}

// parseAggregate sums the aggregate line's fields (after "cpu").
func (s *CPUStat) parseAggregate(fields [][]byte) error {
	const idle, iowait, steal, guest = 3, 4, 7, 8
	if len(fields) < idle+1 {
		return fmt.Errorf("aggregate cpu line has %d fields, want at least 4", len(fields))
	}
	for i, f := range fields[:min(len(fields), guest)] {
		v, err := strconv.ParseUint(string(f), 10, 64)
		if err != nil {
			return fmt.Errorf("aggregate cpu field %d: %w", i+1, err)
		}
		if s.Total+v < s.Total {
			return fmt.Errorf("aggregate cpu field %d: sum overflows", i+1)
		}
		s.Total += v
		switch i {
		case idle, iowait:
			s.Idle += v
		case steal:
			s.Steal = v
		}
	}
	return nil
}

// Pressure is the "some" line of /proc/pressure/cpu: the share of time at
// least one runnable task waited for a CPU.
type Pressure struct {
	SomeAvg10 float64       // percent over the last 10 s
	SomeTotal time.Duration // cumulative stall time since boot
}

// ParsePressure reads the "some" line of a PSI file
// ("some avg10=1.23 avg60=0.50 avg300=0.10 total=123456", total in µs).
func ParsePressure(b []byte) (Pressure, error) {
	for line := range bytes.Lines(b) {
		fields := bytes.Fields(line)
		if len(fields) == 0 || string(fields[0]) != "some" {
			continue
		}
		var p Pressure
		var haveAvg, haveTotal bool
		for _, f := range fields[1:] {
			k, v, ok := bytes.Cut(f, []byte("="))
			if !ok {
				continue
			}
			switch string(k) {
			case "avg10":
				x, err := strconv.ParseFloat(string(v), 64)
				if err != nil || x < 0 || x > 100 {
					return Pressure{}, fmt.Errorf("some avg10 %q: not a percentage", v)
				}
				p.SomeAvg10, haveAvg = x, true
			case "total":
				us, err := strconv.ParseUint(string(v), 10, 64)
				if err != nil || us > math.MaxInt64/uint64(time.Microsecond) {
					return Pressure{}, fmt.Errorf("some total %q: not a count of microseconds", v)
				}
				p.SomeTotal, haveTotal = time.Duration(us)*time.Microsecond, true
			}
		}
		if !haveAvg || !haveTotal {
			return Pressure{}, errors.New("some line lacks avg10 or total")
		}
		return p, nil
	}
	return Pressure{}, errors.New("no some line")
}

// ParseLoadAvg reads the one-minute load average, the first field of
// /proc/loadavg ("0.52 0.58 0.59 1/123 4567").
func ParseLoadAvg(b []byte) (float64, error) {
	fields := bytes.Fields(b)
	if len(fields) == 0 {
		return 0, errors.New("empty load average")
	}
	v, err := strconv.ParseFloat(string(fields[0]), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("load average %q: not a non-negative number", fields[0])
	}
	return v, nil
}

// hostSnapshot is one reading of the host counters; a file that could not
// be read or parsed leaves its part unset.
type hostSnapshot struct {
	stat    *CPUStat
	psi     *Pressure
	load1   float64
	hasLoad bool
}

// readHost reads the host counters under the proc directory (the files are
// a few hundred bytes, read whole).
func readHost(proc string) hostSnapshot {
	var h hostSnapshot
	if b, err := os.ReadFile(filepath.Join(proc, "stat")); err == nil {
		if s, err := ParseCPUStat(b); err == nil {
			h.stat = &s
		}
	}
	if b, err := os.ReadFile(filepath.Join(proc, "pressure", "cpu")); err == nil {
		if p, err := ParsePressure(b); err == nil {
			h.psi = &p
		}
	}
	if b, err := os.ReadFile(filepath.Join(proc, "loadavg")); err == nil {
		if v, err := ParseLoadAvg(b); err == nil {
			h.load1, h.hasLoad = v, true
		}
	}
	return h
}

// Host is what the machine as a whole did over a span (a sample's interval
// or the run): its JSON form is the run document's "client.host" object.
type Host struct {
	CPUs int `json:"cpus"` // online CPUs of the machine
	// BusyCores is the mean number of CPUs some task ran on; OtherCores
	// the part of it that was not this process (BusyCores less the
	// process's own CPU, at least 0).
	BusyCores  float64 `json:"busy_cores"`
	OtherCores float64 `json:"other_cores"`
	// StealShare is the share of the machine's CPU time the hypervisor took.
	StealShare float64 `json:"steal_share"`
	// CPUPressure is the share of the span during which some runnable task
	// waited for a CPU (pressure stall information, "some"); nil where the
	// kernel does not provide it.
	CPUPressure *float64 `json:"cpu_pressure,omitempty"`
	// LoadAvg1 is the one-minute load average at the span's end, the
	// fallback measure of contention where CPUPressure is nil.
	LoadAvg1 *float64 `json:"load_avg_1,omitempty"`
}

// hostBetween is the host's figures from a to b over wall, the process
// having used own CPU time meanwhile; nil when /proc/stat was not read at
// both ends or did not advance (the kernel counts in ticks of 10 ms).
func hostBetween(a, b hostSnapshot, wall, own time.Duration) *Host {
	if a.stat == nil || b.stat == nil || wall <= 0 || b.stat.Total <= a.stat.Total || b.stat.Busy() < a.stat.Busy() {
		return nil
	}
	total := float64(b.stat.Total - a.stat.Total)
	h := &Host{CPUs: b.stat.CPUs}
	h.BusyCores = min(float64(b.stat.Busy()-a.stat.Busy())/total, 1) * float64(h.CPUs)
	h.OtherCores = max(h.BusyCores-max(own.Seconds(), 0)/wall.Seconds(), 0)
	if b.stat.Steal >= a.stat.Steal {
		h.StealShare = min(float64(b.stat.Steal-a.stat.Steal)/total, 1)
	}
	if a.psi != nil && b.psi != nil && b.psi.SomeTotal >= a.psi.SomeTotal {
		p := min(float64(b.psi.SomeTotal-a.psi.SomeTotal)/float64(wall), 1)
		h.CPUPressure = &p
	}
	if b.hasLoad {
		l := b.load1
		h.LoadAvg1 = &l
	}
	return h
}
