// Package selfmon watches the load generator itself during a run, so that a
// report can say whether its latencies include the client's own delay: the
// process's CPU against the cores it may use (GOMAXPROCS and the CPU
// affinity, whichever is fewer), goroutine scheduling latency and GC pauses
// from runtime/metrics (histograms, of which it keeps the run's delta), and
// the memory the Go runtime holds per open stream.
//
// It also reads what the machine as a whole did (Linux's /proc/stat,
// /proc/pressure/cpu and /proc/loadavg: other processes' CPU, the
// hypervisor's steal, CPU pressure), because a goroutine waits for a core
// whoever holds it.
//
// A Monitor samples on its own goroutine every Options.Interval; Stop ends
// it and returns the run's Report. Judge decides from a Report (and the
// simulator's send-stamp delay, which the client measures per event, and
// where the server ran) whether the load generator was delayed, and by
// what (Classify): its own CPU above 80 % of its cores, the hypervisor,
// other processes, the server sharing its cores, or its scheduler. Only the
// first makes the client the bottleneck (Report.Saturated); the others are
// warnings with their figures.
//
// The process's CPU figure is the whole process's: with the embedded
// simulator it includes the server, which competes for the same cores.
package selfmon

import (
	"math"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// DefaultInterval is the sampling period when Options.Interval is 0: often
// enough to see a burst of a few seconds, rare enough to cost nothing (one
// sample reads eight runtime metrics, one getrusage and three small /proc
// files).
const DefaultInterval = 250 * time.Millisecond

// Options configures a Monitor.
type Options struct {
	// Interval between samples; 0 means DefaultInterval.
	Interval time.Duration
	// Streams reports the requests open now, for the memory per stream; nil
	// means none are counted.
	Streams func() int
	// OnSample, when set, receives every sample from the monitor's
	// goroutine (the exporter's gauges); it must return quickly.
	OnSample func(Sample)
}

// Sample is the load generator's health over one interval.
type Sample struct {
	At       time.Duration // since the monitor started
	Interval time.Duration // the span the rates cover
	// CPUShare is the process's CPU time in the interval over the interval
	// times Cores: 1 means every usable core was busy.
	CPUShare float64
	// SchedLatencyP99 is the 99th percentile of the time goroutines waited
	// to run in the interval (upper bound of its histogram bucket).
	SchedLatencyP99 time.Duration
	GCPauses        uint64        // stop-the-world GC pauses in the interval
	GCPauseTime     time.Duration // their total
	Streams         int
	Goroutines      int
	MemoryBytes     uint64 // memory the Go runtime holds (mapped and not released)
	// Host is the machine's figures over the interval; nil where its
	// counters cannot be read.
	Host *Host
}

// Report is the load generator's health over a whole run. Its JSON form is
// the run document's "client" object.
type Report struct {
	DurationS  float64 `json:"duration_s"`
	GOMAXPROCS int     `json:"gomaxprocs"`
	// Cores the process may use: GOMAXPROCS or the CPU affinity mask,
	// whichever is fewer.
	Cores    int     `json:"cores"`
	CPUCores float64 `json:"cpu_cores"` // mean cores busy over the run
	CPUShare float64 `json:"cpu_share"` // CPUCores / Cores
	// PeakCPUShare is the highest CPUShare of one sampling interval.
	PeakCPUShare float64 `json:"peak_cpu_share"`

	SchedLatencyP50MS float64 `json:"sched_latency_p50_ms"`
	SchedLatencyP99MS float64 `json:"sched_latency_p99_ms"`
	SchedLatencyMaxMS float64 `json:"sched_latency_max_ms"`

	GCPauses       uint64  `json:"gc_pauses"`
	GCPauseTotalMS float64 `json:"gc_pause_total_ms"`
	GCPauseP99MS   float64 `json:"gc_pause_p99_ms"`
	GCPauseMaxMS   float64 `json:"gc_pause_max_ms"`

	PeakGoroutines int `json:"peak_goroutines"`
	PeakStreams    int `json:"peak_streams"`
	// BaseMemoryBytes is the memory the Go runtime holds at the start;
	// PeakMemoryBytes the most during the run. MemoryPerStreamBytes is the
	// peak growth of the memory in use (heap objects and goroutine stacks)
	// over the live memory at the start (measured right after a GC), divided
	// by the most streams open at a sample; 0 when no stream was open at a
	// sample. It is an upper bound: the peak may hold garbage not yet
	// collected (and the sample with the most open streams may come before
	// their buffers exist, in a connection burst, so the peak memory is
	// taken wherever it is). Kernel socket buffers are not in it.
	BaseMemoryBytes      uint64  `json:"base_memory_bytes"`
	PeakMemoryBytes      uint64  `json:"peak_memory_bytes"`
	MemoryPerStreamBytes float64 `json:"memory_per_stream_bytes"`

	// Host is the machine's figures over the run (other processes' CPU,
	// steal, CPU pressure); nil where its counters cannot be read.
	Host *Host `json:"host,omitempty"`

	// Filled by Judge: the thresholds applied, the stamp delay, where the
	// server ran, the verdict.
	ThresholdCPUShare float64  `json:"threshold_cpu_share"`
	ThresholdDelayMS  float64  `json:"threshold_delay_ms"`
	StampDelayP99MS   *float64 `json:"stamp_delay_p99_ms,omitempty"` // with a stamping server (the simulator)
	Server            Server   `json:"server,omitempty"`
	// SingleStream marks a run of one stream at a time, to which no advice
	// to use fewer streams applies.
	SingleStream bool `json:"single_stream,omitempty"`
	// Cause is what delayed the load generator (CauseNone when nothing
	// passed a threshold); Saturated is true only for CauseClientCPU, the
	// one cause that makes the client the bottleneck and its verdicts
	// (ab, capacity, compare gates) unusable.
	Cause     Cause `json:"cause,omitempty"`
	Saturated bool  `json:"saturated"`
	// ClientDelayMS is the largest client-side delay measured (scheduling
	// latency p99, stamp delay p99): how much of a latency may be delay
	// that is not the server's when there is a cause.
	ClientDelayMS float64  `json:"client_delay_ms"`
	Reasons       []string `json:"reasons,omitempty"`
}

// Monitor samples the process until Stop.
type Monitor struct {
	opts  Options
	cores int
	start time.Time

	stop chan struct{}
	done chan struct{}

	mu      sync.Mutex // guards what the sampler and Stop share below
	first   snapshot
	prev    snapshot
	peakCPU float64
	peakG   int
	peakMem uint64
	peakS   int
	peakUse uint64 // the most memory in use at a sample
}

// snapshot is one reading of the process counters.
type snapshot struct {
	at       time.Time
	cpu      time.Duration
	sched    *metrics.Float64Histogram
	gcPauses *metrics.Float64Histogram
	gcCPU    float64 // /cpu/classes/gc/pause:cpu-seconds
	memTotal uint64
	memFree  uint64
	objects  uint64 // heap objects, live and not yet swept
	stacks   uint64 // goroutine stack spans in use
	goros    uint64
	host     hostSnapshot
}

// procDir is where the host counters are read (Linux's procfs).
const procDir = "/proc"

// The runtime/metrics names read; all exist since Go 1.22.
const (
	mSched    = "/sched/latencies:seconds"
	mGCPauses = "/sched/pauses/total/gc:seconds"
	mGCCPU    = "/cpu/classes/gc/pause:cpu-seconds"
	mMemTotal = "/memory/classes/total:bytes"
	mMemFree  = "/memory/classes/heap/released:bytes"
	mObjects  = "/memory/classes/heap/objects:bytes"
	mStacks   = "/memory/classes/heap/stacks:bytes"
	mGoros    = "/sched/goroutines:goroutines"
)

// Cores is how many cores this process may use: GOMAXPROCS or the CPU
// affinity mask read at start-up (runtime.NumCPU), whichever is fewer.
func Cores() int { return max(1, min(runtime.GOMAXPROCS(0), runtime.NumCPU())) }

// Start takes the first reading and starts sampling.
func Start(opts Options) *Monitor {
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	m := &Monitor{opts: opts, cores: Cores(), stop: make(chan struct{}), done: make(chan struct{})}
	// A GC first, so the base of the memory per stream is live memory, not
	// garbage of whatever ran before (a few ms on a small heap, once a run).
	runtime.GC()
	m.first = read()
	m.prev = m.first
	m.start = m.first.at
	m.peakMem = m.first.mem()
	go m.loop()
	return m
}

func (m *Monitor) loop() {
	defer close(m.done)
	t := time.NewTicker(m.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-t.C:
			s := m.sample()
			if m.opts.OnSample != nil {
				m.opts.OnSample(s)
			}
		}
	}
}

// sample takes a reading and folds it into the peaks.
func (m *Monitor) sample() Sample {
	cur := read()
	streams := 0
	if m.opts.Streams != nil {
		streams = m.opts.Streams()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := between(m.prev, cur, m.cores)
	s.At = cur.at.Sub(m.start)
	s.Streams = streams
	m.prev = cur
	m.peakCPU = max(m.peakCPU, s.CPUShare)
	m.peakG = max(m.peakG, s.Goroutines)
	m.peakMem = max(m.peakMem, s.MemoryBytes)
	m.peakS = max(m.peakS, streams)
	m.peakUse = max(m.peakUse, cur.inUse())
	return s
}

// Stop takes a last sample, ends the sampling and returns the run's report.
func (m *Monitor) Stop() Report {
	close(m.stop)
	<-m.done
	m.sample()
	m.mu.Lock()
	defer m.mu.Unlock()
	last := m.prev
	r := Report{GOMAXPROCS: runtime.GOMAXPROCS(0), Cores: m.cores, PeakGoroutines: m.peakG, PeakStreams: m.peakS,
		BaseMemoryBytes: m.first.mem(), PeakMemoryBytes: m.peakMem, PeakCPUShare: m.peakCPU}
	wall := last.at.Sub(m.first.at)
	r.DurationS = wall.Seconds()
	if wall > 0 {
		r.CPUCores = (last.cpu - m.first.cpu).Seconds() / wall.Seconds()
		r.CPUShare = r.CPUCores / float64(m.cores)
	}
	sched := delta(m.first.sched, last.sched)
	r.SchedLatencyP50MS = 1000 * Quantile(sched, 0.5)
	r.SchedLatencyP99MS = 1000 * Quantile(sched, 0.99)
	r.SchedLatencyMaxMS = 1000 * Quantile(sched, 1)
	gc := delta(m.first.gcPauses, last.gcPauses)
	r.GCPauses = total(gc)
	r.GCPauseP99MS = 1000 * Quantile(gc, 0.99)
	r.GCPauseMaxMS = 1000 * Quantile(gc, 1)
	r.GCPauseTotalMS = 1000 * gcWall(last.gcCPU-m.first.gcCPU)
	r.Host = hostBetween(m.first.host, last.host, wall, last.cpu-m.first.cpu)
	if base := m.first.inUse(); m.peakS > 0 && m.peakUse > base {
		r.MemoryPerStreamBytes = float64(m.peakUse-base) / float64(m.peakS)
	}
	return r
}

// gcWall converts the runtime's GC pause CPU time, which it books as the
// pause times GOMAXPROCS, back to wall time.
func gcWall(cpuSeconds float64) float64 {
	return max(cpuSeconds, 0) / float64(runtime.GOMAXPROCS(0))
}

// between is the sample of the interval from a to b.
func between(a, b snapshot, cores int) Sample {
	s := Sample{Interval: b.at.Sub(a.at), Goroutines: int(b.goros), MemoryBytes: b.mem()}
	if s.Interval > 0 {
		s.CPUShare = max((b.cpu-a.cpu).Seconds(), 0) / s.Interval.Seconds() / float64(cores)
	}
	s.SchedLatencyP99 = time.Duration(Quantile(delta(a.sched, b.sched), 0.99) * float64(time.Second))
	gc := delta(a.gcPauses, b.gcPauses)
	s.GCPauses = total(gc)
	s.GCPauseTime = time.Duration(gcWall(b.gcCPU-a.gcCPU) * float64(time.Second))
	s.Host = hostBetween(a.host, b.host, s.Interval, b.cpu-a.cpu)
	return s
}

// inUse is the memory in heap objects and goroutine stacks.
func (s snapshot) inUse() uint64 { return s.objects + s.stacks }

func (s snapshot) mem() uint64 {
	if s.memFree > s.memTotal {
		return 0
	}
	return s.memTotal - s.memFree
}

// read takes one reading of the process counters.
func read() snapshot {
	samples := []metrics.Sample{{Name: mSched}, {Name: mGCPauses}, {Name: mGCCPU}, {Name: mMemTotal}, {Name: mMemFree},
		{Name: mObjects}, {Name: mStacks}, {Name: mGoros}}
	metrics.Read(samples)
	s := snapshot{at: time.Now(), cpu: processCPU(), host: readHost(procDir)}
	for _, x := range samples {
		switch x.Name {
		case mSched:
			s.sched = histogram(x.Value)
		case mGCPauses:
			s.gcPauses = histogram(x.Value)
		case mGCCPU:
			if x.Value.Kind() == metrics.KindFloat64 {
				s.gcCPU = x.Value.Float64()
			}
		case mMemTotal:
			s.memTotal = uint64Of(x.Value)
		case mMemFree:
			s.memFree = uint64Of(x.Value)
		case mObjects:
			s.objects = uint64Of(x.Value)
		case mStacks:
			s.stacks = uint64Of(x.Value)
		case mGoros:
			s.goros = uint64Of(x.Value)
		}
	}
	return s
}

// histogram copies a histogram value (the runtime may reuse its slices);
// nil when the metric is not supported.
func histogram(v metrics.Value) *metrics.Float64Histogram {
	if v.Kind() != metrics.KindFloat64Histogram {
		return nil
	}
	h := v.Float64Histogram()
	return &metrics.Float64Histogram{Counts: append([]uint64(nil), h.Counts...), Buckets: append([]float64(nil), h.Buckets...)}
}

func uint64Of(v metrics.Value) uint64 {
	if v.Kind() != metrics.KindUint64 {
		return 0
	}
	return v.Uint64()
}

// delta is the histogram of the observations between a and b (b's counts
// minus a's, per bucket); nil when either is missing or they differ in
// shape.
func delta(a, b *metrics.Float64Histogram) *metrics.Float64Histogram {
	if a == nil || b == nil || len(a.Counts) != len(b.Counts) {
		return nil
	}
	d := &metrics.Float64Histogram{Counts: make([]uint64, len(b.Counts)), Buckets: b.Buckets}
	for i := range b.Counts {
		if b.Counts[i] >= a.Counts[i] {
			d.Counts[i] = b.Counts[i] - a.Counts[i]
		}
	}
	return d
}

func total(h *metrics.Float64Histogram) uint64 {
	if h == nil {
		return 0
	}
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// Quantile is the q-quantile (0 < q <= 1) of a runtime histogram, in its
// unit: the upper bound of the bucket that holds the observation of rank
// ceil(q × total), so it never understates a delay (for the last bucket,
// whose upper bound is +Inf, its lower bound). 0 for an empty or nil
// histogram. Counts[i] counts observations in [Buckets[i], Buckets[i+1]).
func Quantile(h *metrics.Float64Histogram, q float64) float64 {
	n := total(h)
	if n == 0 || len(h.Buckets) != len(h.Counts)+1 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(n)))
	rank = min(max(rank, 1), n)
	var cum uint64
	for i, c := range h.Counts {
		cum += c
		if cum >= rank {
			hi := h.Buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = h.Buckets[i]
			}
			return max(hi, 0)
		}
	}
	return 0
}
