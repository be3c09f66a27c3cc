package selfmon

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func ptr(v float64) *float64 { return &v }

// TestClassify drives the thresholds and the OS's figures with injected
// values: which cause each combination names.
func TestClassify(t *testing.T) {
	quiet := &Host{CPUs: 2, BusyCores: 0.3, OtherCores: 0.1, CPUPressure: ptr(0.01)}
	busy := &Host{CPUs: 2, BusyCores: 1.9, OtherCores: 1.8, CPUPressure: ptr(0.92)}
	for _, tc := range []struct {
		name       string
		e          Evidence
		th         Thresholds
		cause      Cause
		delayMS    float64
		reasonPart string
	}{
		{name: "idle", e: Evidence{Cores: 2, CPUShare: 0.3, SchedP99MS: 0.1, StampP99MS: ptr(0.4), Host: quiet}, cause: CauseNone, delayMS: 0.4},
		{name: "cpu at the limit", e: Evidence{Cores: 2, CPUShare: 0.8, SchedP99MS: 1}, cause: CauseNone, delayMS: 1},
		{name: "cpu above", e: Evidence{Cores: 2, CPUShare: 0.85, SchedP99MS: 1}, cause: CauseClientCPU, delayMS: 1, reasonPart: "CPU 85 % of 2 cores"},
		{name: "cpu above on a busy host", e: Evidence{Cores: 2, CPUShare: 0.95, SchedP99MS: 30, Host: busy}, cause: CauseClientCPU, delayMS: 30},
		{name: "cpu above with the embedded simulator", e: Evidence{Cores: 2, CPUShare: 0.95, Server: ServerEmbedded}, cause: CauseClientCPU},
		{name: "sched p99, host quiet", e: Evidence{Cores: 2, CPUShare: 0.5, SchedP99MS: 8.4, Host: quiet}, cause: CauseScheduling, delayMS: 8.4, reasonPart: "scheduling latency p99 8.4 ms > 5 ms"},
		{name: "sched p99, host unknown", e: Evidence{Cores: 2, CPUShare: 0.5, SchedP99MS: 8.4}, cause: CauseScheduling, delayMS: 8.4},
		{name: "stamp p99, host busy", e: Evidence{Cores: 2, CPUShare: 0.01, SchedP99MS: 1, StampP99MS: ptr(420), Host: busy}, cause: CauseHostBusy, delayMS: 420, reasonPart: "send-stamp delay p99 420.0 ms"},
		{name: "host busy by other CPU alone", e: Evidence{Cores: 2, CPUShare: 0.01, SchedP99MS: 9, Host: &Host{CPUs: 2, OtherCores: 1.2, CPUPressure: ptr(0.02)}}, cause: CauseHostBusy, delayMS: 9},
		{name: "host busy by pressure alone", e: Evidence{Cores: 2, CPUShare: 0.01, SchedP99MS: 9, Host: &Host{CPUs: 2, OtherCores: 0.4, CPUPressure: ptr(0.3)}}, cause: CauseHostBusy, delayMS: 9},
		{name: "host busy by load average without pressure", e: Evidence{Cores: 2, CPUShare: 0.01, SchedP99MS: 9, Host: &Host{CPUs: 2, OtherCores: 0.4, LoadAvg1: ptr(13.6)}}, cause: CauseHostBusy, delayMS: 9},
		{name: "load average within the CPUs", e: Evidence{Cores: 2, CPUShare: 0.01, SchedP99MS: 9, Host: &Host{CPUs: 2, OtherCores: 0.4, LoadAvg1: ptr(1.5)}}, cause: CauseScheduling, delayMS: 9},
		{name: "loopback server on a busy host", e: Evidence{Cores: 2, CPUShare: 0.2, SchedP99MS: 9, Host: busy, Server: ServerLoopback}, cause: CauseSharedWithServer, delayMS: 9},
		{name: "embedded simulator, host quiet", e: Evidence{Cores: 2, CPUShare: 0.6, SchedP99MS: 9, Host: quiet, Server: ServerEmbedded}, cause: CauseSharedWithServer, delayMS: 9},
		{name: "embedded simulator, host busy", e: Evidence{Cores: 2, CPUShare: 0.1, SchedP99MS: 9, Host: busy, Server: ServerEmbedded}, cause: CauseHostBusy, delayMS: 9},
		{name: "steal", e: Evidence{Cores: 2, CPUShare: 0.1, SchedP99MS: 9, Host: &Host{CPUs: 2, OtherCores: 1.5, StealShare: 0.25}}, cause: CauseSteal, delayMS: 9},
		{name: "custom delay", e: Evidence{Cores: 2, CPUShare: 0.5, SchedP99MS: 8.4}, th: Thresholds{Delay: 10 * time.Millisecond}, cause: CauseNone, delayMS: 8.4},
		{name: "custom cpu", e: Evidence{Cores: 4, CPUShare: 0.7}, th: Thresholds{CPUShare: 0.6}, cause: CauseClientCPU, reasonPart: "CPU 70 % of 4 cores > 60 %"},
	} {
		cause, reasons, delay := Classify(tc.th, tc.e)
		if cause != tc.cause || delay != tc.delayMS {
			t.Errorf("%s: cause %s delay %v, want %s %v (%q)", tc.name, cause, delay, tc.cause, tc.delayMS, reasons)
		}
		if (cause == CauseNone) != (len(reasons) == 0) || !strings.Contains(strings.Join(reasons, "; "), tc.reasonPart) {
			t.Errorf("%s: reasons %q", tc.name, reasons)
		}
		if !slices.Contains(Causes(), cause) {
			t.Errorf("%s: cause %q is not listed in Causes", tc.name, cause)
		}
	}
}

// TestJudgeWarnsWithTheCause: the verdict and its warning name the cause,
// give its figures and the advice that fits it. A delayed client on a busy
// host with one stream at 1 % CPU was judged saturated and told to use
// fewer streams per process; now only its own CPU saturates it, and no
// run of one stream is told to use fewer.
func TestJudgeWarnsWithTheCause(t *testing.T) {
	busy := &Host{CPUs: 2, BusyCores: 1.82, OtherCores: 1.8, CPUPressure: ptr(0.92)}
	for _, tc := range []struct {
		name      string
		r         Report
		c         Circumstances
		cause     Cause
		saturated bool
		want      []string // parts of the warning
		not       []string
	}{
		{name: "quiet", r: Report{Cores: 2, CPUShare: 0.01, SchedLatencyP99MS: 0.05}, c: Circumstances{StampP99MS: ptr(0.3), Streams: 1}, cause: CauseNone},
		{name: "host busy, one stream", r: Report{Cores: 2, CPUShare: 0.01, SchedLatencyP99MS: 0.2, PeakStreams: 1, Host: busy},
			c: Circumstances{StampP99MS: ptr(40), Streams: 1}, cause: CauseHostBusy,
			want: []string{"the host is busy: other processes used 1.8 of 2 cores (CPU pressure 92 %), the load generator 1 % of its 2 cores;", "up to 40.0 ms"},
			not:  []string{"fewer streams", "saturated", "shard"}},
		{name: "host busy, many streams", r: Report{Cores: 2, CPUShare: 0.2, SchedLatencyP99MS: 12, PeakStreams: 16, Host: busy},
			c: Circumstances{Streams: 16}, cause: CauseHostBusy, want: []string{"the host is busy"}, not: []string{"fewer streams"}},
		{name: "client cpu", r: Report{Cores: 2, CPUShare: 0.95, SchedLatencyP99MS: 12, PeakStreams: 64},
			c: Circumstances{Streams: 64}, cause: CauseClientCPU, saturated: true,
			want: []string{"the load generator was saturated: it used 95 % of its 2 cores", "CPU 95 % of 2 cores > 80 %", "shard", "fewer streams per process"}},
		{name: "client cpu, one stream", r: Report{Cores: 1, CPUShare: 0.9, PeakStreams: 1},
			c: Circumstances{Streams: 1}, cause: CauseClientCPU, saturated: true, want: []string{"shard"}, not: []string{"fewer streams"}},
		{name: "client cpu, unbounded open loop", r: Report{Cores: 2, CPUShare: 0.9, PeakStreams: 30},
			c: Circumstances{Streams: 0}, cause: CauseClientCPU, saturated: true, want: []string{"fewer streams per process"}},
		{name: "client cpu, embedded", r: Report{Cores: 2, CPUShare: 0.9, PeakStreams: 8},
			c: Circumstances{Streams: 8, Server: ServerEmbedded}, cause: CauseClientCPU, saturated: true,
			want: []string{"the embedded simulator in it", "run the server apart (omnibench serve)"}},
		{name: "embedded simulator", r: Report{Cores: 2, CPUShare: 0.5, SchedLatencyP99MS: 9, PeakStreams: 4},
			c: Circumstances{Streams: 4, Server: ServerEmbedded}, cause: CauseSharedWithServer,
			want: []string{"the embedded simulator shares the client's cores", "pass --url"}, not: []string{"fewer streams"}},
		{name: "loopback server", r: Report{Cores: 2, CPUShare: 0.1, SchedLatencyP99MS: 9, Host: busy},
			c: Circumstances{Streams: 4, Server: ServerLoopback}, cause: CauseSharedWithServer,
			want: []string{"the server on this machine shares the client's cores: other processes, the server among them, used 1.8 of 2 cores", "another machine"}},
		{name: "steal", r: Report{Cores: 2, CPUShare: 0.1, SchedLatencyP99MS: 9, Host: &Host{CPUs: 2, StealShare: 0.3}},
			c: Circumstances{Streams: 4}, cause: CauseSteal, want: []string{"hypervisor took 30 %", "dedicated CPUs"}, not: []string{"fewer streams"}},
		{name: "scheduling, one stream", r: Report{Cores: 2, CPUShare: 0.1, SchedLatencyP99MS: 9, PeakStreams: 1},
			c: Circumstances{Streams: 1}, cause: CauseScheduling, want: []string{"goroutines waited to run", "repeat the run"}, not: []string{"fewer streams"}},
		{name: "scheduling, many streams", r: Report{Cores: 2, CPUShare: 0.1, SchedLatencyP99MS: 9, PeakStreams: 40},
			c: Circumstances{Streams: 40}, cause: CauseScheduling, want: []string{"fewer streams per process or shards"}},
	} {
		r := tc.r
		r.Judge(Thresholds{}, tc.c)
		if r.Cause != tc.cause || r.Saturated != tc.saturated {
			t.Errorf("%s: cause %s saturated %v, want %s %v", tc.name, r.Cause, r.Saturated, tc.cause, tc.saturated)
		}
		w := r.Warning()
		if (w == "") != (tc.cause == CauseNone) {
			t.Errorf("%s: warning %q for cause %s", tc.name, w, r.Cause)
		}
		for _, part := range tc.want {
			if !strings.Contains(w, part) {
				t.Errorf("%s: warning %q lacks %q", tc.name, w, part)
			}
		}
		for _, part := range tc.not {
			if strings.Contains(w, part) {
				t.Errorf("%s: warning %q says %q", tc.name, w, part)
			}
		}
	}
}
