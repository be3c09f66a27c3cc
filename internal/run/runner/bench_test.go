//go:build linux

package runner_test

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
)

// The 1000-stream benchmark's workload: the "typical 80 ms chunk",
// generated at real time (RTF 1), 5 s of audio per stream (63 chunks), so
// every stream lasts a little over 5 s and all 1000 overlap for most of it.
const (
	benchStreams  = 1000
	benchDeadline = 2 * time.Minute // bounds one whole run of 1000 streams
	benchScenario = "chat-voice"    // the default workload: chat, text and WAV audio
)

// benchTiming is the simulator timing of the benchmark. The serve flags in
// serveFlags must say the same.
func benchTiming() simulator.Timing {
	return simulator.Timing{
		TTFT:         20 * time.Millisecond,
		WordInterval: 20 * time.Millisecond,
		TTFA:         50 * time.Millisecond,
		ChunkAudio:   80 * time.Millisecond,
		RTF:          1,
		Jitter:       0.1,
		Stall:        500 * time.Millisecond,
		AudioPerChar: 50 * time.Millisecond,
		MinAudio:     5 * time.Second,
		MaxAudio:     5 * time.Second,
	}
}

// serveFlags are the `omnibench serve` flags of benchTiming, with send
// stamps on.
func serveFlags() []string {
	t := benchTiming()
	d := func(v time.Duration) string { return v.String() }
	return []string{
		"serve", "--addr", "127.0.0.1:0", "--seed", "1", "--log-stats", "--stamp",
		"--ttft", d(t.TTFT), "--word-interval", d(t.WordInterval), "--ttfa", d(t.TTFA),
		"--chunk-audio", d(t.ChunkAudio), "--rtf", fmt.Sprint(t.RTF), "--jitter", fmt.Sprint(t.Jitter),
		"--stall", d(t.Stall), "--audio-per-char", d(t.AudioPerChar),
		"--min-audio", d(t.MinAudio), "--max-audio", d(t.MaxAudio),
	}
}

// BenchmarkConcurrentStreams1000 is the scale proof: the client
// (through runner.Run, exactly as `omnibench run` drives it) sustains 1000
// concurrent streaming chat requests, one stream per worker of a closed loop
// of concurrency 1000, against the simulator with 80 ms audio chunks at real
// time and send stamps on.
//
//   - sim=in-process: runner.Run starts the embedded simulator, so server
//     and client share one process and one Go scheduler (the `omnibench run`
//     default without --url). It also shows one simulator instance serving
//     1000 concurrent streams.
//   - sim=subprocess: the simulator runs as a separate `omnibench serve`
//     process built for the benchmark, so the client's timestamping is not
//     disturbed by the server's goroutines. This is the fairer measurement of
//     the client.
//
// One iteration is one run of 1000 streams (use -benchtime=1x and -count).
// Reported: streams completed without error and failed streams per run, wall
// time of the load phase, audio events per second; the send-stamp delay
// (the simulator's write of an event to the client's parse of it: the
// timestamping delay) at p50/p99/max over every event, and at p50/p99 in
// the steady state (steady-*: only events received while all 1000 streams
// were delivering audio, which leaves out the closed loop's start-up burst
// of 1000 simultaneous connections) with the length of that window; TTFP
// p50/p99 (the start-up burst included); the share of streams that played
// without an underrun over 100 ms; this process's CPU in cores and per
// stamped event (server included in-process), and the server process's CPU
// in cores (subprocess); and how many of each process's threads were, on
// average, waiting for a CPU (runq-wait-threads: the machine's other load).
func BenchmarkConcurrentStreams1000(b *testing.B) {
	ensureFiles(b, 2*benchStreams+256) // client and server end of every connection, plus slack
	b.Run("sim=in-process", func(b *testing.B) {
		cfg := simulator.Config{Addr: "127.0.0.1:0", Seed: 1, Timing: benchTiming(), StatsEnabled: true, Stamp: true}
		benchRuns(b, runner.Config{Simulator: cfg}, nil)
	})
	b.Run("sim=subprocess", func(b *testing.B) {
		srv := startServe(b)
		benchRuns(b, runner.Config{Target: srv.url}, srv)
	})
}

// benchRuns performs one 1000-stream run per benchmark iteration and reports
// the aggregated metrics.
func benchRuns(b *testing.B, base runner.Config, srv *serveProcess) {
	wl := benchWorkload(b)
	base.Workload = wl
	base.Scenario = benchScenario
	base.Seed = 1
	base.Load = load.Config{Concurrency: benchStreams, Requests: benchStreams}
	base.Client = client.Options{MaxConns: benchStreams, Timeout: time.Minute, IdleTimeout: 30 * time.Second}
	// Scrapes happen outside the load phase and would only add noise to the
	// CPU figures; the server still records its metrics (stats on).
	base.Scrape = runner.ScrapeOff

	var (
		runs, ok, failed, audioEvents, stampEvents, continuous, unaligned int
		wall, steadyWall, cpu, srvCPU, wait, srvWait                      time.Duration
		stamps, steady, ttfp                                              []float64
		firstErr                                                          string
	)
	for b.Loop() {
		ctx, cancel := context.WithTimeout(b.Context(), benchDeadline)
		cpu0, srv0 := processCPU(), srv.cpu()
		wait0, srvWait0 := runqueueWait("self"), srv.runqueueWait()
		cfg, records := keepRecords(base)
		out, err := runner.Run(ctx, cfg)
		cpu += processCPU() - cpu0
		srvCPU += srv.cpu() - srv0
		wait += runqueueWait("self") - wait0
		srvWait += srv.runqueueWait() - srvWait0
		cancel()
		if err != nil {
			b.Fatalf("run %d: %v", runs+1, err)
		}
		runs++
		wall += out.Load.Elapsed
		recs := records()
		from, to := steadyWindow(recs)
		if to > from {
			steadyWall += time.Duration((to - from) * float64(time.Second))
		}
		for i := range recs {
			r := &recs[i]
			if !r.OK() {
				failed++
				if firstErr == "" {
					firstErr = r.ErrorClass + ": " + r.Error
				}
				continue
			}
			ok++
			audioEvents += len(r.ChunkArrivalsS)
			stampEvents += len(r.StampDelaysS)
			stamps = append(stamps, r.StampDelaysS...)
			if r.HasAudio() {
				ttfp = append(ttfp, r.TTFPS)
			}
			if r.Continuity != nil && r.Continuity.OK["100"] {
				continuous++
			}
			at := chatEventTimes(r)
			if at == nil {
				unaligned++
				continue
			}
			for k, t := range at {
				if t >= from && t <= to {
					steady = append(steady, r.StampDelaysS[k])
				}
			}
		}
	}
	if failed > 0 {
		b.Logf("%d of %d streams failed; first: %s", failed, runs*benchStreams, firstErr)
	}
	if unaligned > 0 {
		b.Logf("%d streams left out of the steady-state stamps: their stamps did not match their events", unaligned)
	}
	slices.Sort(stamps)
	slices.Sort(steady)
	slices.Sort(ttfp)
	n := float64(runs)
	b.ReportMetric(float64(ok)/n, "streams/run")
	b.ReportMetric(float64(failed)/n, "errors/run")
	b.ReportMetric(wall.Seconds()/n, "wall-s/run")
	b.ReportMetric(float64(audioEvents)/wall.Seconds(), "audio-events/s")
	b.ReportMetric(1000*quantile(stamps, 0.5), "p50-stamp-ms")
	b.ReportMetric(1000*quantile(stamps, 0.99), "p99-stamp-ms")
	b.ReportMetric(1000*quantile(stamps, 1), "max-stamp-ms")
	b.ReportMetric(steadyWall.Seconds()/n, "steady-s/run")
	b.ReportMetric(1000*quantile(steady, 0.5), "steady-p50-stamp-ms")
	b.ReportMetric(1000*quantile(steady, 0.99), "steady-p99-stamp-ms")
	b.ReportMetric(1000*quantile(ttfp, 0.5), "p50-ttfp-ms")
	b.ReportMetric(1000*quantile(ttfp, 0.99), "p99-ttfp-ms")
	b.ReportMetric(100*float64(continuous)/float64(max(ok, 1)), "continuous-%")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu-cores")
	// Every stamped event (text, audio, role, usage, [DONE]) costs a read and
	// a parse; this process's CPU per event (server included in-process).
	b.ReportMetric(float64(cpu.Microseconds())/float64(max(stampEvents, 1)), "cpu-us/event")
	// Time this process's threads were runnable but waited for a CPU, per
	// second: near 0 on an idle machine; on a shared one it shows how much
	// of the delays other processes caused.
	b.ReportMetric(wait.Seconds()/wall.Seconds(), "runq-wait-threads")
	if srv != nil {
		b.ReportMetric(srvCPU.Seconds()/wall.Seconds(), "server-cpu-cores")
		b.ReportMetric(srvWait.Seconds()/wall.Seconds(), "server-runq-wait-threads")
	}
	b.ReportMetric(0, "ns/op") // a run is a fixed workload; its wall time is reported above
}

// steadyWindow is the span of a run, in seconds from its start, in which
// every stream was delivering audio: from the last stream's first audio
// chunk to the first stream's last one. Stamps received in it measure the
// client sustaining all streams at once, without the start-up burst of 1000
// simultaneous connections (closed loop) and the tail.
func steadyWindow(recs []results.Record) (from, to float64) {
	from, to = math.Inf(-1), math.Inf(1)
	for i := range recs {
		r := &recs[i]
		if !r.OK() || !r.HasAudio() {
			continue
		}
		from = max(from, r.SentS+r.TTFPS)
		to = min(to, r.SentS+r.LastAudioS)
	}
	return from, to
}

// chatEventTimes is the receive time of each stamped event of a streaming
// chat record, in seconds from the start of the run, aligned with
// StampDelaysS; nil when they do not line up. The simulator stamps every
// event: the role chunk (taken at the first response byte), the text and
// audio events (their recorded times, merged in time order), the usage
// chunk and [DONE] (taken at the end of the response).
func chatEventTimes(r *results.Record) []float64 {
	text := make([]float64, 0, len(r.TextGapsS)+1)
	if r.TTFTS > 0 {
		t := r.TTFTS
		text = append(text, t)
		for _, g := range r.TextGapsS {
			t += g
			text = append(text, t)
		}
	}
	mid := append(text, r.ChunkArrivalsS...)
	slices.Sort(mid)
	if len(r.StampDelaysS) != len(mid)+3 {
		return nil
	}
	at := make([]float64, 0, len(mid)+3)
	at = append(at, r.FirstByteS)
	at = append(at, mid...)
	at = append(at, r.E2ES, r.E2ES)
	for k := range at {
		at[k] += r.SentS
	}
	return at
}

// quantile is the nearest-rank q-quantile of sorted values (0 when empty).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// processCPU is the user and system CPU time this process has used so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// runqueueWait is the time the threads of process pid ("self" for this
// one) have spent runnable but waiting for a CPU, from the kernel's
// schedstat (0 when it cannot be read).
func runqueueWait(pid string) time.Duration {
	files, err := filepath.Glob("/proc/" + pid + "/task/*/schedstat")
	if err != nil {
		return 0
	}
	var total time.Duration
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // the thread exited
		}
		// Fields: time on CPU, time waiting on a run queue (both ns), slices.
		fields := strings.Fields(string(b))
		if len(fields) < 2 {
			continue
		}
		var ns int64
		if _, err := fmt.Sscan(fields[1], &ns); err == nil {
			total += time.Duration(ns)
		}
	}
	return total
}

// ensureFiles raises the soft open-file limit to at least n (up to the hard
// limit) and skips the benchmark when that is not enough. Go programs
// already raise it to the hard limit at start-up; this check makes a low hard
// limit a clear skip instead of dial errors.
func ensureFiles(b *testing.B, n uint64) {
	b.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatalf("reading the open-file limit: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	lim.Cur = min(n, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatalf("raising the open-file limit to %d: %v", lim.Cur, err)
	}
	if lim.Cur < n {
		b.Skipf("open-file limit %d (hard limit) is below the %d this benchmark needs; raise it with ulimit -Hn", lim.Cur, n)
	}
}

// serveProcess is a running `omnibench serve` child process.
type serveProcess struct {
	url string
	pid int
}

// startServe builds the omnibench binary and starts `omnibench serve` with
// the benchmark's timing on a free loopback port. The process is stopped
// (interrupt, then kill) when the benchmark ends.
func startServe(b *testing.B) *serveProcess { return startServeWith(b, serveFlags()) }

// startServeWith is startServe with the given serve arguments.
func startServeWith(b *testing.B, args []string) *serveProcess {
	b.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		b.Skipf("the subprocess variant builds omnibench and needs the go command: %v", err)
	}
	bin := filepath.Join(b.TempDir(), "omnibench")
	bctx, bcancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer bcancel()
	build := exec.CommandContext(bctx, goBin, "build", "-o", bin, "github.com/omnibench/omnibench/cmd/omnibench")
	if msg, err := build.CombinedOutput(); err != nil {
		b.Fatalf("building omnibench: %v\n%s", err, msg)
	}
	return startChild(b, exec.Command(bin, args...))
}

// startChild starts cmd, a server that writes "omnibench serve: listening
// on URL" to its stderr, and returns it once it has. The process is
// stopped (interrupt, then kill) when the benchmark ends.
func startChild(b *testing.B, cmd *exec.Cmd) *serveProcess {
	b.Helper()
	bin := cmd.Path
	// The server must not outlive a benchmark binary that is killed (for
	// example by -timeout) before its cleanups run.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	logw := &serveLog{url: make(chan string, 1)}
	cmd.Stderr = logw
	if err := cmd.Start(); err != nil {
		b.Fatalf("starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		t := time.NewTimer(10 * time.Second)
		defer t.Stop()
		select {
		case <-exited:
		case <-t.C:
			_ = cmd.Process.Kill()
			<-exited
		}
	}

	t := time.NewTimer(30 * time.Second)
	defer t.Stop()
	select {
	case u := <-logw.url:
		b.Cleanup(stop)
		if !strings.HasPrefix(u, "http://127.0.0.1:") {
			b.Fatalf("%s listens on %s, want 127.0.0.1", bin, u)
		}
		return &serveProcess{url: u, pid: cmd.Process.Pid}
	case err := <-exited:
		b.Fatalf("%s exited before listening: %v\n%s", bin, err, logw.text())
	case <-t.C:
		stop()
		b.Fatalf("%s did not report its address within 30s\n%s", bin, logw.text())
	}
	return nil
}

// runqueueWait is runqueueWait of the server process (0 for nil).
func (p *serveProcess) runqueueWait() time.Duration {
	if p == nil {
		return 0
	}
	return runqueueWait(fmt.Sprint(p.pid))
}

// serveLog keeps the child's stderr and reports the URL from its
// "listening on" line.
type serveLog struct {
	mu   sync.Mutex
	buf  []byte
	sent bool
	url  chan string // receives the URL once
}

func (l *serveLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	if !l.sent {
		const marker = "omnibench serve: listening on "
		if _, rest, found := strings.Cut(string(l.buf), marker); found {
			if u, _, complete := strings.Cut(rest, "\n"); complete {
				l.url <- strings.TrimSpace(u)
				l.sent = true
			}
		}
	}
	if len(l.buf) > 64<<10 { // keep the start, which explains a failed start-up
		l.buf = l.buf[:64<<10]
	}
	return len(p), nil
}

func (l *serveLog) text() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.buf)
}

// cpu is the user and system CPU time the server process has used so far,
// from /proc (0 for a nil process or when /proc cannot be read).
func (p *serveProcess) cpu() time.Duration {
	if p == nil {
		return 0
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime and stime are fields 14 and 15, in clock ticks.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0
	}
	var utime, stime int64
	if _, err := fmt.Sscan(f[11], &utime); err != nil {
		return 0
	}
	if _, err := fmt.Sscan(f[12], &stime); err != nil {
		return 0
	}
	return time.Duration(utime+stime) * time.Second / clockTicks
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// keepRecords returns cfg with an OnRecord that keeps a copy of every
// finished record (the Outcome keeps only their figures), and the function
// that returns them once the run is over.
func keepRecords(cfg runner.Config) (runner.Config, func() []results.Record) {
	var (
		mu   sync.Mutex
		recs []results.Record
	)
	next := cfg.OnRecord
	cfg.OnRecord = func(r *results.Record) {
		if next != nil {
			next(r)
		}
		mu.Lock()
		recs = append(recs, *r)
		mu.Unlock()
	}
	return cfg, func() []results.Record {
		mu.Lock()
		defer mu.Unlock()
		return recs
	}
}

// benchWorkload is the workload of benchScenario, which every client
// benchmark runs.
func benchWorkload(b *testing.B) *scenarios.Workload {
	b.Helper()
	sc, err := scenarios.Get(benchScenario)
	if err != nil {
		b.Fatal(err)
	}
	wl, err := sc.Workload()
	if err != nil {
		b.Fatal(err)
	}
	return wl
}
