package selfmon

import (
	"fmt"
	"strings"
	"time"
)

// Thresholds decide when the load generator's delay counts.
type Thresholds struct {
	// CPUShare is the mean share of the usable cores above which the
	// client is the bottleneck; 0 means DefaultCPUShare.
	CPUShare float64
	// Delay is the scheduling-latency and stamp-delay p99 above which the
	// client's own delay is in the latencies; 0 means DefaultDelay.
	Delay time.Duration
}

// Defaults of Thresholds: at 80 % of its cores a Go process's goroutines
// start queueing for a CPU, and 5 ms is well above an idle scheduler's
// latency (tens of µs) and well below the latencies being measured.
const (
	DefaultCPUShare = 0.8
	DefaultDelay    = 5 * time.Millisecond
)

// The host counts as contended when other processes kept half of its CPUs
// busy, when some task waited for a CPU a tenth of the time (an idle
// machine shows a percent or two), or, where the kernel gives no pressure
// figure, when more tasks were runnable on average than it has CPUs. Steal
// counts from a tenth of the machine's CPU time: below that a virtual
// machine's delays are the guest's own.
const (
	hostBusyOtherShare = 0.5
	hostBusyPressure   = 0.1
	stealShare         = 0.1
)

func (t Thresholds) cpuShare() float64 {
	if t.CPUShare <= 0 {
		return DefaultCPUShare
	}
	return t.CPUShare
}

func (t Thresholds) delayMS() float64 {
	if t.Delay <= 0 {
		return float64(DefaultDelay) / float64(time.Millisecond)
	}
	return float64(t.Delay) / float64(time.Millisecond)
}

// Cause is what delayed the load generator, by the OS's figures.
type Cause string

// The causes, in the order Classify tries them after its thresholds.
const (
	CauseNone Cause = "none" // no threshold passed
	// CauseClientCPU: the process used more than its CPU share of its
	// cores. The only cause that makes the client the bottleneck.
	CauseClientCPU Cause = "client_cpu"
	// CauseSteal: the hypervisor took the machine's CPU time.
	CauseSteal Cause = "steal"
	// CauseHostBusy: other processes kept the machine's CPUs busy.
	CauseHostBusy Cause = "host_busy"
	// CauseSharedWithServer: the server runs in the process (the embedded
	// simulator) or, on the same machine, among the busy other processes.
	CauseSharedWithServer Cause = "shared_with_server"
	// CauseScheduling: a delay over the threshold that none of the CPU
	// figures explains (GC pauses, bursts of goroutines waking together).
	CauseScheduling Cause = "scheduling"
)

// Causes lists every Cause, CauseNone first.
func Causes() []Cause {
	return []Cause{CauseNone, CauseClientCPU, CauseSteal, CauseHostBusy, CauseSharedWithServer, CauseScheduling}
}

// Server says where the server under test runs relative to the client.
type Server string

const (
	// ServerRemote: not known to be on this machine.
	ServerRemote Server = "remote"
	// ServerLoopback: on this machine, reached over a loopback address.
	ServerLoopback Server = "loopback"
	// ServerEmbedded: the simulator inside the client's own process.
	ServerEmbedded Server = "embedded"
)

// Circumstances are what the caller knows of a run beyond the monitor's
// figures.
type Circumstances struct {
	// StampP99MS is the send-stamp delay p99; nil without a stamping server.
	StampP99MS *float64
	Server     Server // "" counts as ServerRemote
	// Streams is the most requests the load could have open at once; 0
	// means unbounded (an open loop without a cap).
	Streams int
}

// Judge sets r's verdict from its figures and c (see Classify):
// Saturated only when the client itself was the bottleneck.
func (r *Report) Judge(th Thresholds, c Circumstances) {
	r.StampDelayP99MS = c.StampP99MS
	r.ThresholdCPUShare, r.ThresholdDelayMS = th.cpuShare(), th.delayMS()
	r.Server = c.Server
	if r.Server == "" {
		r.Server = ServerRemote
	}
	r.SingleStream = c.Streams == 1 || c.Streams == 0 && r.PeakStreams <= 1
	r.Cause, r.Reasons, r.ClientDelayMS = Classify(th, Evidence{
		CPUShare: r.CPUShare, Cores: r.Cores, SchedP99MS: r.SchedLatencyP99MS, StampP99MS: c.StampP99MS,
		Host: r.Host, Server: r.Server,
	})
	r.Saturated = r.Cause == CauseClientCPU
}

// Evidence is the figures Classify weighs.
type Evidence struct {
	CPUShare   float64 // the process's CPU over its usable cores
	Cores      int
	SchedP99MS float64
	StampP99MS *float64
	Host       *Host // nil when the host's counters could not be read
	Server     Server
}

// Classify names the cause of the load generator's delay. The thresholds
// decide whether there is one: the process's CPU share over th.CPUShare, or
// the scheduling-latency or send-stamp p99 over th.Delay (reasons lists
// each one passed; delayMS is the larger p99, how much of a latency may be
// delay that is not the server's). Then the OS's figures decide which:
// the process's own CPU first (the client is the bottleneck even when the
// machine is busy too), then the hypervisor's steal, then the other
// processes (the server among them when it is on this machine), then the
// embedded simulator sharing the process, and what is left is the
// scheduler's.
func Classify(th Thresholds, e Evidence) (cause Cause, reasons []string, delayMS float64) {
	delayMS = e.SchedP99MS
	if e.StampP99MS != nil {
		delayMS = max(delayMS, *e.StampP99MS)
	}
	cpuHigh := e.CPUShare > th.cpuShare()
	if cpuHigh {
		reasons = append(reasons, fmt.Sprintf("CPU %.0f %% of %d cores > %.0f %%", 100*e.CPUShare, e.Cores, 100*th.cpuShare()))
	}
	lim := th.delayMS()
	if e.SchedP99MS > lim {
		reasons = append(reasons, fmt.Sprintf("goroutine scheduling latency p99 %s ms > %g ms", ms(e.SchedP99MS), lim))
	}
	if e.StampP99MS != nil && *e.StampP99MS > lim {
		reasons = append(reasons, fmt.Sprintf("send-stamp delay p99 %s ms > %g ms", ms(*e.StampP99MS), lim))
	}
	switch {
	case len(reasons) == 0:
		return CauseNone, nil, delayMS
	case cpuHigh:
		return CauseClientCPU, reasons, delayMS
	case e.Host != nil && e.Host.StealShare >= stealShare:
		return CauseSteal, reasons, delayMS
	case e.Host.contended():
		if e.Server == ServerLoopback {
			return CauseSharedWithServer, reasons, delayMS
		}
		return CauseHostBusy, reasons, delayMS
	case e.Server == ServerEmbedded:
		return CauseSharedWithServer, reasons, delayMS
	}
	return CauseScheduling, reasons, delayMS
}

// contended reports whether the machine was short of CPUs for reasons
// other than this process (false when unknown).
func (h *Host) contended() bool {
	switch {
	case h == nil || h.CPUs < 1:
		return false
	case h.OtherCores >= hostBusyOtherShare*float64(h.CPUs):
		return true
	case h.CPUPressure != nil:
		return *h.CPUPressure >= hostBusyPressure
	}
	return h.LoadAvg1 != nil && *h.LoadAvg1 > float64(h.CPUs)
}

// Warning is the report's top-line warning: what delayed the load
// generator, by how much, and the advice that fits the cause; "" when
// nothing did.
func (r *Report) Warning() string {
	if r.Cause == "" || r.Cause == CauseNone {
		return ""
	}
	delay := fmt.Sprintf("latencies include up to %s ms of delay that is not the server's", ms(r.ClientDelayMS))
	used := fmt.Sprintf("%.0f %% of its %d cores", 100*r.CPUShare, r.Cores)
	reasons := strings.Join(r.Reasons, "; ")
	switch r.Cause {
	case CauseClientCPU:
		advice := "shard the load over processes or machines (run --shard)"
		if !r.SingleStream {
			advice += ", or use fewer streams per process"
		}
		if r.Server == ServerEmbedded {
			advice = "run the server apart (omnibench serve) and pass --url, or " + advice
			used += ", the embedded simulator in it"
		}
		return fmt.Sprintf("the load generator was saturated: it used %s (%s); %s; %s", used, reasons, delay, advice)
	case CauseSteal:
		steal := 0.0
		if r.Host != nil {
			steal = r.Host.StealShare
		}
		return fmt.Sprintf("the hypervisor took %.0f %% of the machine's CPU time (steal), the load generator used %s; %s; measure from a machine with dedicated CPUs",
			100*steal, used, delay)
	case CauseHostBusy:
		return fmt.Sprintf("the host is busy: %s, the load generator %s; %s; measure on a quieter machine or stop the other work",
			r.Host.busyText(""), used, delay)
	case CauseSharedWithServer:
		if r.Server == ServerEmbedded {
			return fmt.Sprintf("the embedded simulator shares the client's cores: the process, the simulator in it, used %s (%s); %s; run the server apart (omnibench serve) and pass --url",
				used, reasons, delay)
		}
		return fmt.Sprintf("the server on this machine shares the client's cores: %s, the load generator %s; %s; run the server on another machine",
			r.Host.busyText(", the server among them,"), used, delay)
	}
	advice := "repeat the run to see whether it recurs"
	if !r.SingleStream {
		advice = "use fewer streams per process or shards (run --shard)"
	}
	return fmt.Sprintf("the load generator's goroutines waited to run (%s) though it used %s and the host was not busy; %s; %s",
		reasons, used, delay, advice)
}

// busyText is "other processes used 1.8 of 2 cores (CPU pressure 92 %)",
// with among after "processes".
func (h *Host) busyText(among string) string {
	if h == nil {
		return "other processes" + among + " kept the cores busy"
	}
	s := fmt.Sprintf("other processes%s used %.1f of %d cores", among, h.OtherCores, h.CPUs)
	switch {
	case h.CPUPressure != nil:
		s += fmt.Sprintf(" (CPU pressure %.0f %%)", 100**h.CPUPressure)
	case h.LoadAvg1 != nil:
		s += fmt.Sprintf(" (load average %.1f)", *h.LoadAvg1)
	}
	return s
}

// ms formats milliseconds with one decimal, or three significant digits
// below 1 ms (so a sub-millisecond figure does not read 0.0).
func ms(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.1f", v)
}
