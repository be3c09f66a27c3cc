//go:build linux

package runner_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
)

// profileDir, when set, receives a CPU profile of this whole process during
// each run of BenchmarkClientVsBareLoop (omnibench-<streams>.pprof,
// bare-<streams>.pprof and conn-<streams>.pprof), for `go tool pprof -top`.
// maxProfiledRuns bounds the profiles of one client and level in the
// directory.
const maxProfiledRuns = 1000

var profileDir = flag.String("omnibench.profile", "", "write a CPU profile of each run of BenchmarkClientVsBareLoop (every client) to this directory")

// bareStreams are the levels of BenchmarkClientVsBareLoop.
var bareStreams = []int{100, 1000, 2000, 5000}

// levelsFlag, when set, runs only these levels of BenchmarkClientVsBareLoop
// (for example "100" with a larger -benchtime: a level of 100 streams is a
// few seconds per run, and its p99 needs many runs to settle).
var levelsFlag = flag.String("omnibench.levels", "", "comma-separated stream levels of BenchmarkClientVsBareLoop to run (default: "+fmt.Sprint(bareStreams)+")")

// transportsFlag names the HTTP transports omnibench's client runs with in
// BenchmarkClientVsBareLoop: own (package http1), std (net/http's) or both,
// which is the A/B of the two transports, reported as omni-* and
// omni-std-* beside each other with their ratios (own-std-*).
var transportsFlag = flag.String("omnibench.transports", client.TransportOwn, "comma-separated HTTP transports of omnibench's client in BenchmarkClientVsBareLoop: own, std, or own,std for their A/B")

// transports are the transports to run omnibench's client with; the first
// is the one compared with the bare loop.
func transports(b *testing.B) []string {
	var trs []string
	for f := range strings.SplitSeq(*transportsFlag, ",") {
		tr := strings.TrimSpace(f)
		if tr != client.TransportOwn && tr != client.TransportStd {
			b.Fatalf("-omnibench.transports: %q is not %s or %s", f, client.TransportOwn, client.TransportStd)
		}
		if !slices.Contains(trs, tr) {
			trs = append(trs, tr)
		}
	}
	return trs
}

// omniName names omnibench's client on a transport in metrics and profiles:
// "omni" on its own transport, as before the A/B existed.
func omniName(tr string) string {
	if tr == client.TransportOwn {
		return "omni"
	}
	return "omni-" + tr
}

// levels are the levels to run: defaults, or those -omnibench.levels names.
func levels(b *testing.B, defaults []int) []int {
	if *levelsFlag == "" {
		return defaults
	}
	var ns []int
	for f := range strings.SplitSeq(*levelsFlag, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			b.Fatalf("-omnibench.levels: %q is not a positive stream count", f)
		}
		ns = append(ns, n)
	}
	return ns
}

// bareServeFlags is the fixed-schedule server of the comparison: no jitter,
// 4 s of audio in 50 WAV events of 80 ms at real time (RTF 1), text words
// every 20 ms, send stamps on. Every stream of a level starts at once.
func bareServeFlags() []string {
	return []string{
		"serve", "--addr", "127.0.0.1:0", "--seed", "1", "--stamp",
		"--ttft", "20ms", "--word-interval", "20ms", "--ttfa", "50ms",
		"--chunk-audio", "80ms", "--rtf", "1", "--jitter", "0",
		"--min-audio", "4s", "--max-audio", "4s",
	}
}

// levelFigures is what one client measured at one level.
type levelFigures struct {
	streams, errors, events int
	cpu                     time.Duration
	reads                   int64     // read system calls of this process
	delaysMS                []float64 // receive minus send stamp, every stamped event
	bytesPerStream          float64
	firstErr                string
}

func (f *levelFigures) cpuPerEventUS() float64 {
	return float64(f.cpu.Nanoseconds()) / 1e3 / float64(max(f.events, 1))
}

// BenchmarkClientVsBareLoop runs omnibench's client (runner.Run, as `omnibench
// run --url` drives it) and a bare read loop side by side against the same
// fixed-schedule `omnibench serve` in a separate process, at 100, 1000, 2000
// and 5000 streams that all start at once, one stream per connection. The
// bare loop is the floor any Go client pays: net/http, one goroutine per
// stream, lines split into events, the send stamp read, nothing else.
//
// Reported per level, for both clients (omni-*, bare-*): this process's CPU
// per stamped event, the p50 and p99 delay of each event against the
// server's send stamp (receive time minus stamp: what the client adds to
// every timestamp, the connection burst included), the Go runtime's memory
// growth per open stream (package selfmon, the same method for both), and
// errors; and the ratios omnibench / bare of CPU per event (cpu-ratio: the
// median over the iterations of the two clients' ratio in one iteration)
// and of delay p99 (p99-ratio: of each client's p99 over all its
// iterations' events, with its range when one iteration is left out; the
// paired median and the ratios of the medians beside them).
// The same figures (conn-*) come for the bare loop without net/http's
// Transport (connRun): what the Transport itself costs.
// The goals (docs/performance.md): CPU per event at most 1.15x, delay p99
// at most 1.2x the bare loop's, 5000 streams without errors.
//
// One iteration runs the three clients once per level, rotating which goes
// first, and the figures are medians over the iterations (-benchtime 3x or
// more keeps one disturbed run out). -omnibench.profile DIR writes a CPU profile of each
// omnibench run. -omnibench.transports own,std runs omnibench's client on
// both HTTP transports (omni-*, omni-std-*) for the A/B of the two, whose
// ratios own/std are own-std-cpu-ratio and own-std-p99-ratio; the bare
// loop is compared with the first transport named.
func BenchmarkClientVsBareLoop(b *testing.B) {
	ns, trs := levels(b, bareStreams), transports(b)
	ensureFiles(b, uint64(slices.Max(ns))+256)
	srv := startServeWith(b, bareServeFlags())
	wl := benchWorkload(b)
	for _, n := range ns {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			var bare, conn levelRuns
			omnis := make([]levelRuns, len(trs)) // per transport
			var clients []func(ctx context.Context)
			for k, tr := range trs {
				clients = append(clients, func(ctx context.Context) { omnis[k] = append(omnis[k], omniRun(ctx, b, srv.url, wl, n, tr)) })
			}
			clients = append(clients,
				func(ctx context.Context) { bare = append(bare, bareRun(ctx, b, srv.url, wl, n)) },
				func(ctx context.Context) { conn = append(conn, connRun(ctx, b, srv.url, wl, n)) },
			)
			rotateClients(b, clients, func() {
				oc, op := reportLevel(b, omniName(trs[0]), omnis[0])
				for k := 1; k < len(trs); k++ {
					reportLevel(b, omniName(trs[k]), omnis[k])
				}
				bc, bp := reportLevel(b, "bare", bare)
				reportLevel(b, "conn", conn)
				if len(trs) == 2 {
					// The transports' A/B: the same client, only the
					// RoundTripper differs.
					ab := trs[0] + "-" + trs[1]
					b.ReportMetric(pairedRatio(omnis[0], omnis[1], (*levelFigures).cpuPerEventUS), ab+"-cpu-ratio")
					ratio, _, _ := pooledP99Ratio(omnis[0], omnis[1])
					b.ReportMetric(ratio, ab+"-p99-ratio")
				}
				reportRatios(b, omnis[0], bare)
				// The ratios of the medians, for comparison with earlier runs.
				b.ReportMetric(oc/bc, "cpu-ratio-of-medians")
				b.ReportMetric(op/bp, "p99-ratio-of-medians")
			})
		})
	}
}

// rotateClients runs each client once per iteration of b's loop, rotating
// which goes first, then calls report and reports how much the machine's
// other load got in the way.
func rotateClients(b *testing.B, clients []func(ctx context.Context), report func()) {
	wait0, start := runqueueWait("self"), time.Now()
	for i := 0; b.Loop(); i++ {
		// Rotate which client goes first, so that with -benchtime 3x none
		// always meets a server just warmed up (or just loaded) by another.
		ctx, cancel := context.WithTimeout(b.Context(), benchDeadline)
		for k := range clients {
			clients[(i+k)%len(clients)](ctx)
		}
		cancel()
	}
	report()
	// Threads of this process runnable but waiting for a CPU, on average.
	b.ReportMetric((runqueueWait("self")-wait0).Seconds()/time.Since(start).Seconds(), "runq-wait-threads")
	b.ReportMetric(0, "ns/op") // each iteration is a fixed workload
}

// reportLevel reports one client's figures at one level under prefix and
// returns its median CPU per event and median p99.
func reportLevel(b *testing.B, prefix string, runs levelRuns) (cpu, p99 float64) {
	cpu, p99 = runs.median((*levelFigures).cpuPerEventUS), runs.median((*levelFigures).p99)
	b.ReportMetric(cpu, prefix+"-cpu-us/event")
	b.ReportMetric(runs.median((*levelFigures).p50), prefix+"-p50-delay-ms")
	b.ReportMetric(runs.pooledP99(-1), prefix+"-p99-delay-ms")
	b.ReportMetric(p99, prefix+"-p99-delay-ms-median-of-runs")
	b.ReportMetric(runs.max((*levelFigures).kbPerStream), prefix+"-KB/stream")
	b.ReportMetric(runs.sum(func(f *levelFigures) float64 { return float64(f.errors) }), prefix+"-errors")
	b.ReportMetric(runs.median((*levelFigures).readsPerEvent), prefix+"-reads/event")
	for _, f := range runs {
		if f.firstErr != "" {
			b.Logf("%s: %d errors (first: %s)", prefix, f.errors, f.firstErr)
			break
		}
	}
	return cpu, p99
}

// reportRatios reports omnibench's figures over the bare loop's. The
// ratios pair the clients' runs of one iteration, which ran back to back,
// and take the median over the iterations: the machine's load drifts over
// minutes, and a pair shares it.
func reportRatios(b *testing.B, omni, bare levelRuns) {
	b.ReportMetric(pairedRatio(omni, bare, (*levelFigures).cpuPerEventUS), "cpu-ratio")
	cpu := pairRatios(omni, bare, (*levelFigures).cpuPerEventUS)
	b.ReportMetric(slices.Min(cpu), "cpu-ratio-min")
	b.ReportMetric(slices.Max(cpu), "cpu-ratio-max")
	b.ReportMetric(mean(cpu), "cpu-ratio-mean")
	// The p99 ratio is of the pooled p99s: each client's p99 over every
	// event of every iteration, as merged histograms would give it. At 100
	// streams one run's p99 is the 66th-worst of 6600 events, mostly first
	// events of one start-up burst, and moves by 2x between runs; pooling
	// estimates the p99 of the distribution rather than a median of such
	// order statistics. Its range with each iteration in turn left out
	// (the jackknife) shows how much one iteration moves it.
	ratio, lo, hi := pooledP99Ratio(omni, bare)
	b.ReportMetric(ratio, "p99-ratio")
	b.ReportMetric(lo, "p99-ratio-min-leave-one-out")
	b.ReportMetric(hi, "p99-ratio-max-leave-one-out")
	b.ReportMetric(pairedRatio(omni, bare, (*levelFigures).p99), "p99-ratio-paired")
}

func (f *levelFigures) p50() float64           { return quantile(f.delaysMS, 0.5) }
func (f *levelFigures) p99() float64           { return quantile(f.delaysMS, 0.99) }
func (f *levelFigures) kbPerStream() float64   { return f.bytesPerStream / 1024 }
func (f *levelFigures) readsPerEvent() float64 { return float64(f.reads) / float64(max(f.events, 1)) }

// levelRuns are the runs of one client at one level. Its figures are
// medians over the runs: on a shared machine one run can meet another
// job's burst, and the median of an odd -benchtime (or the mean of the
// middle two) keeps it out.
type levelRuns []levelFigures

func (rs levelRuns) median(fig func(*levelFigures) float64) float64 {
	v := make([]float64, len(rs))
	for i := range rs {
		v[i] = fig(&rs[i])
	}
	return median(v)
}

// median is the middle value of v (the mean of the middle two for an even
// count), 0 for none. It sorts v.
func median(v []float64) float64 {
	slices.Sort(v)
	if len(v) == 0 {
		return 0
	}
	if m := len(v) / 2; len(v)%2 == 0 {
		return (v[m-1] + v[m]) / 2
	} else {
		return v[m]
	}
}

// pairedRatio is the median over the iterations of fig(a[i]) / fig(b[i]).
func pairedRatio(a, b levelRuns, fig func(*levelFigures) float64) float64 {
	return median(pairRatios(a, b, fig))
}

// pairRatios are the ratios of fig between the runs of a and b of each
// iteration.
func pairRatios(a, b levelRuns, fig func(*levelFigures) float64) []float64 {
	ratios := make([]float64, min(len(a), len(b)))
	for i := range ratios {
		ratios[i] = fig(&a[i]) / fig(&b[i])
	}
	return ratios
}

// mean is the arithmetic mean of xs.
func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// pooledP99 is the p99 of the delays of every run but the one at index
// skip (-1 for none).
func (rs levelRuns) pooledP99(skip int) float64 {
	n := 0
	for i := range rs {
		if i != skip {
			n += len(rs[i].delaysMS)
		}
	}
	all := make([]float64, 0, n)
	for i := range rs {
		if i != skip {
			all = append(all, rs[i].delaysMS...)
		}
	}
	slices.Sort(all)
	return quantile(all, 0.99)
}

// pooledP99Ratio is a's pooled p99 over b's, and the least and greatest
// that ratio is with one iteration (a[i] and b[i]) left out; with fewer
// than three iterations the range is the ratio itself.
func pooledP99Ratio(a, b levelRuns) (ratio, lo, hi float64) {
	ratio = a.pooledP99(-1) / b.pooledP99(-1)
	lo, hi = ratio, ratio
	if k := min(len(a), len(b)); k >= 3 {
		lo, hi = math.Inf(1), math.Inf(-1)
		for i := range k {
			r := a[:k].pooledP99(i) / b[:k].pooledP99(i)
			lo, hi = min(lo, r), max(hi, r)
		}
	}
	return ratio, lo, hi
}

func (rs levelRuns) max(fig func(*levelFigures) float64) float64 {
	m := 0.0
	for i := range rs {
		m = max(m, fig(&rs[i]))
	}
	return m
}

func (rs levelRuns) sum(fig func(*levelFigures) float64) float64 {
	t := 0.0
	for i := range rs {
		t += fig(&rs[i])
	}
	return t
}

// omniRun is one closed-loop run of n streams through runner.Run, its
// client on the named HTTP transport.
func omniRun(ctx context.Context, b *testing.B, url string, wl *scenarios.Workload, n int, transport string) levelFigures {
	cfg := runner.Config{
		Target: url, Workload: wl, Scenario: benchScenario, Seed: 1,
		Load:   load.Config{Concurrency: n, Requests: n},
		Client: client.Options{Timeout: time.Minute, IdleTimeout: 30 * time.Second, HTTPTransport: transport},
		Scrape: runner.ScrapeOff,
	}
	return runnerLevel(ctx, b, cfg, strings.Replace(omniName(transport), "omni", "omnibench", 1), n, func(r *results.Record) []float64 {
		d := make([]float64, len(r.StampDelaysS))
		for i, s := range r.StampDelaysS {
			d[i] = s * 1000
		}
		return d
	})
}

// runnerLevel measures one run of runner.Run with cfg at n streams or
// sessions: this process's CPU and read calls, delays(r) of every record in
// ms (one per event), the memory per open stream and the errors. Its CPU
// profile is named profile.
func runnerLevel(ctx context.Context, b *testing.B, cfg runner.Config, profile string, n int, delays func(*results.Record) []float64) levelFigures {
	defer startProfile(b, profile, n)()
	cpu0, reads0 := processCPU(), readCalls()
	cfg, records := keepRecords(cfg)
	out, err := runner.Run(ctx, cfg)
	fig := levelFigures{streams: n, cpu: processCPU() - cpu0, reads: readCalls() - reads0}
	if err != nil {
		b.Fatalf("omnibench at %d streams: %v", n, err)
	}
	recs := records()
	for i := range recs {
		r := &recs[i]
		if !r.OK() {
			fig.errors++
			if fig.firstErr == "" {
				fig.firstErr = r.ErrorClass + ": " + r.Error
			}
		}
		d := delays(r)
		fig.events += len(d)
		fig.delaysMS = append(fig.delaysMS, d...)
	}
	if out.Health != nil {
		fig.bytesPerStream = out.Health.MemoryPerStreamBytes
	}
	slices.Sort(fig.delaysMS)
	return fig
}

// bareRun is the bare read loop: n streams at once over net/http, each read
// line by line; a ": sent=<unix ns>" comment gives the next event's stamp,
// the blank line that ends the event its receive time. No JSON, no audio
// decoding, no record.
func bareRun(ctx context.Context, b *testing.B, url string, wl *scenarios.Workload, n int) levelFigures {
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true, ReadBufferSize: 16 << 10}
	hc := &http.Client{Transport: tr}
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = bareBody(b, wl.Request(i, 1))
	}
	return streamLevel(b, "bare", n, func(i int) ([]float64, error) {
		return bareStream(ctx, hc, url, bodies[i])
	}, tr.CloseIdleConnections)
}

// streamLevel measures one level of one of the bare clients: n streams
// started at once, stream(i) reading stream i to its end and returning its
// stamped events' delays in ms. teardown runs after the last stream, inside
// the measured run (closing connections is part of a run's cost, as
// omnibench's runner closes its client's). It returns this process's CPU
// and read calls, the delays, the memory per open stream and the errors.
func streamLevel(b *testing.B, client string, n int, stream func(i int) ([]float64, error), teardown func()) levelFigures {
	var (
		open     atomic.Int64
		mu       sync.Mutex
		fig      = levelFigures{streams: n}
		wg       sync.WaitGroup
		errCount atomic.Int64
	)
	defer startProfile(b, client, n)()
	// The monitor is inside the measured run, as runner.Run's own is in
	// omnibench's (its start forces a GC).
	cpu0, reads0 := processCPU(), readCalls()
	mon := selfmon.Start(selfmon.Options{Streams: func() int { return int(open.Load()) }})
	for i := range n {
		wg.Go(func() {
			open.Add(1)
			defer open.Add(-1)
			delays, err := stream(i)
			mu.Lock()
			defer mu.Unlock()
			fig.events += len(delays)
			fig.delaysMS = append(fig.delaysMS, delays...)
			if err != nil {
				errCount.Add(1)
				if fig.firstErr == "" {
					fig.firstErr = err.Error()
				}
			}
		})
	}
	wg.Wait()
	teardown()
	fig.bytesPerStream = mon.Stop().MemoryPerStreamBytes
	fig.cpu = processCPU() - cpu0
	fig.reads = readCalls() - reads0
	fig.errors = int(errCount.Load())
	slices.Sort(fig.delaysMS)
	return fig
}

// bareBody is the JSON body omnibench sends for spec (the same fields as
// client.Request builds for chat), so both clients ask for the same work.
func bareBody(b *testing.B, spec scenarios.RequestSpec) []byte {
	body := map[string]any{
		"model": spec.Model, "messages": []map[string]string{{"role": "user", "content": spec.Prompt}},
		"stream": true, "stream_options": map[string]any{"include_usage": true},
		"audio": map[string]any{"format": spec.AudioFormat}, "modalities": spec.Modalities,
	}
	if spec.Voice != "" {
		body["voice"] = spec.Voice
	}
	data, err := json.Marshal(body)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

var sentPrefix = []byte(": sent=")

// bareStream reads one stream to its end and returns each stamped event's
// delay in ms.
func bareStream(ctx context.Context, hc *http.Client, url string, body []byte) ([]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return readEvents(resp)
}

// readEvents is the line loop of the bare clients: the response's events
// split, each stamped event's delay in ms returned.
func readEvents(resp *http.Response) ([]float64, error) {
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	br := bufio.NewReaderSize(resp.Body, 16<<10) // an 80 ms WAV event is a 5 KB line
	delays := make([]float64, 0, 128)
	var stamp int64
	done := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			for errors.Is(err, bufio.ErrBufferFull) { // a longer line: skip the rest
				_, err = br.ReadSlice('\n')
			}
			line = nil
		}
		if err != nil {
			if err == io.EOF && done {
				return delays, nil
			}
			return delays, err
		}
		switch {
		case bytes.HasPrefix(line, sentPrefix):
			stamp, _ = strconv.ParseInt(string(bytes.TrimSpace(line[len(sentPrefix):])), 10, 64)
		case len(bytes.TrimSpace(line)) == 0: // the end of an event
			if stamp > 0 {
				delays = append(delays, float64(time.Now().UnixNano()-stamp)/1e6)
				stamp = 0
			}
		case bytes.Equal(bytes.TrimSpace(line), []byte("data: [DONE]")):
			done = true
		}
	}
}

// readCalls is the number of read system calls this process has made
// (syscr of /proc/self/io; 0 when it cannot be read): reads per event show
// how well a client's buffers batch what arrives.
func readCalls() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "syscr: "); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// startProfile writes a CPU profile of this whole process to
// <profileDir>/<client>-<streams>-<run>.pprof until the returned func is
// called (nothing without -omnibench.profile). Runs are numbered from 1 in
// the directory, so that the profiles of several iterations can be read
// together (go tool pprof takes several files).
func startProfile(b *testing.B, client string, streams int) (stop func()) {
	if *profileDir == "" {
		return func() {}
	}
	var f *os.File
	err := fs.ErrExist
	for run := 1; errors.Is(err, fs.ErrExist) && run <= maxProfiledRuns; run++ {
		name := filepath.Join(*profileDir, fmt.Sprintf("%s-%d-%d.pprof", client, streams, run))
		f, err = os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	}
	if err != nil {
		b.Fatalf("-omnibench.profile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}

// TestPooledP99Ratio checks the pooled p99 ratio and its leave-one-out
// range against nearest-rank p99s worked out by hand.
func TestPooledP99Ratio(t *testing.T) {
	seq := func(from int) []float64 {
		v := make([]float64, 100)
		for i := range v {
			v[i] = float64(from + i)
		}
		return v
	}
	// a: 1..100 twice and 1001..1100; b: 1..100 three times.
	a := levelRuns{{delaysMS: seq(1)}, {delaysMS: seq(1)}, {delaysMS: seq(1001)}}
	b := levelRuns{{delaysMS: seq(1)}, {delaysMS: seq(1)}, {delaysMS: seq(1)}}
	// Of 300 values the p99 is the 297th: 1097 in a, 99 in b. Without the
	// last iteration both are 99 (the 198th of 200); without one of the
	// first two, a's is the 198th of 1..100 and 1001..1100: 1098.
	ratio, lo, hi := pooledP99Ratio(a, b)
	if want := 1097.0 / 99; ratio != want {
		t.Errorf("ratio %v, want %v", ratio, want)
	}
	if lo != 1 || hi != 1098.0/99 {
		t.Errorf("leave-one-out range [%v, %v], want [1, %v]", lo, hi, 1098.0/99)
	}
	if got := a.pooledP99(-1); got != 1097 {
		t.Errorf("pooled p99 %v, want 1097", got)
	}
	// Two iterations give no range.
	if r, l, h := pooledP99Ratio(a[:2], b[:2]); r != 1 || l != 1 || h != 1 {
		t.Errorf("two iterations: %v [%v, %v], want 1 [1, 1]", r, l, h)
	}
}

// TestPairedCPURatios checks the paired CPU ratios, their median and their
// mean against figures worked out by hand: omnibench's runs at 12, 30 and
// 22 µs per event against the bare loop's 10, 20 and 20 µs are ratios 1.2,
// 1.5 and 1.1, whose median is 1.2 and mean 3.8/3.
func TestPairedCPURatios(t *testing.T) {
	run := func(us int) levelFigures {
		return levelFigures{events: 1000, cpu: time.Duration(us) * time.Millisecond}
	}
	omni := levelRuns{run(12), run(30), run(22)}
	bare := levelRuns{run(10), run(20), run(20), run(99)} // an unpaired run is left out
	got := pairRatios(omni, bare, (*levelFigures).cpuPerEventUS)
	want := []float64{1.2, 1.5, 1.1}
	if len(got) != len(want) {
		t.Fatalf("ratios %v, want %v", got, want)
	}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Fatalf("ratios %v, want %v", got, want)
		}
	}
	if m := pairedRatio(omni, bare, (*levelFigures).cpuPerEventUS); math.Abs(m-1.2) > 1e-12 {
		t.Errorf("median %v, want 1.2", m)
	}
	if m := mean(got); math.Abs(m-3.8/3) > 1e-12 {
		t.Errorf("mean %v, want %v", m, 3.8/3)
	}
}
