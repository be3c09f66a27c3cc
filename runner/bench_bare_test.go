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
	"net/http"
	"os"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnibench/omnibench/client"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/runner"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/selfmon"
)

// profileDir, when set, receives a CPU profile of this whole process during
// each omnibench run of BenchmarkClientVsBareLoop (omnibench-<streams>.pprof),
// for `go tool pprof -top`.
var profileDir = flag.String("omnibench.profile", "", "write a CPU profile of each omnibench run of BenchmarkClientVsBareLoop to this directory")

// bareStreams are the levels of BenchmarkClientVsBareLoop.
var bareStreams = []int{100, 1000, 2000, 5000}

// bareServeFlags is the fixed-schedule server of the comparison: no jitter,
// 4 s of audio in 50 WAV events of 80 ms at real time (RTF 1), text words
// every 20 ms, send stamps on. Every stream of a level starts at once.
func bareServeFlags() []string {
	return []string{
		"serve", "--addr", "127.0.0.1:0", "--seed", "1",
		"--ttft", "20ms", "--word-interval", "20ms", "--ttfa", "50ms",
		"--chunk-audio", "80ms", "--rtf", "1", "--jitter", "0",
		"--min-audio", "4s", "--max-audio", "4s",
	}
}

// levelFigures is what one client measured at one level.
type levelFigures struct {
	streams, errors, events int
	cpu                     time.Duration
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
// errors; and the ratios omnibench / bare of CPU per event and delay p99.
// The goals (README speed section): CPU per event at most 1.15x, delay p99
// at most 1.2x the bare loop's, 5000 streams without errors.
//
// One iteration runs both clients once per level (use -benchtime=1x, or 2x
// for both orders); the bare loop runs first in even iterations, omnibench
// in odd ones. -omnibench.profile DIR writes a CPU profile of each
// omnibench run.
func BenchmarkClientVsBareLoop(b *testing.B) {
	ensureFiles(b, uint64(slices.Max(bareStreams))+256)
	srv := startServeWith(b, bareServeFlags())
	sc, err := scenarios.Get(benchScenario)
	if err != nil {
		b.Fatal(err)
	}
	wl, err := sc.Workload()
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range bareStreams {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			var omni, bare levelFigures
			wait0, start := runqueueWait("self"), time.Now()
			for i := 0; b.Loop(); i++ {
				// Alternate which client goes first, so that with an even
				// -benchtime neither always meets a server just warmed up
				// (or just loaded) by the other.
				ctx, cancel := context.WithTimeout(b.Context(), benchDeadline)
				if i%2 == 0 {
					bare.add(bareRun(ctx, b, srv.url, wl, n))
					omni.add(omniRun(ctx, b, srv.url, wl, n))
				} else {
					omni.add(omniRun(ctx, b, srv.url, wl, n))
					bare.add(bareRun(ctx, b, srv.url, wl, n))
				}
				cancel()
			}
			if omni.firstErr != "" || bare.firstErr != "" {
				b.Logf("errors: omnibench %d (first: %s), bare %d (first: %s)", omni.errors, omni.firstErr, bare.errors, bare.firstErr)
			}
			report := func(prefix string, f *levelFigures) (cpu, p99 float64) {
				slices.Sort(f.delaysMS)
				cpu, p99 = f.cpuPerEventUS(), quantile(f.delaysMS, 0.99)
				b.ReportMetric(cpu, prefix+"-cpu-us/event")
				b.ReportMetric(quantile(f.delaysMS, 0.5), prefix+"-p50-delay-ms")
				b.ReportMetric(p99, prefix+"-p99-delay-ms")
				b.ReportMetric(f.bytesPerStream/1024, prefix+"-KB/stream")
				b.ReportMetric(float64(f.errors), prefix+"-errors")
				return cpu, p99
			}
			oc, op := report("omni", &omni)
			bc, bp := report("bare", &bare)
			b.ReportMetric(oc/bc, "cpu-ratio")
			b.ReportMetric(op/bp, "p99-ratio")
			// Threads of this process runnable but waiting for a CPU, on
			// average: how much the machine's other load got in the way.
			b.ReportMetric((runqueueWait("self")-wait0).Seconds()/time.Since(start).Seconds(), "runq-wait-threads")
			b.ReportMetric(0, "ns/op") // each iteration is a fixed workload
		})
	}
}

func (f *levelFigures) add(g levelFigures) {
	f.streams += g.streams
	f.errors += g.errors
	f.events += g.events
	f.cpu += g.cpu
	f.delaysMS = append(f.delaysMS, g.delaysMS...)
	f.bytesPerStream = max(f.bytesPerStream, g.bytesPerStream)
	if f.firstErr == "" {
		f.firstErr = g.firstErr
	}
}

// omniRun is one closed-loop run of n streams through runner.Run.
func omniRun(ctx context.Context, b *testing.B, url string, wl *scenarios.Workload, n int) levelFigures {
	cfg := runner.Config{
		Target: url, Workload: wl, Scenario: benchScenario, Seed: 1,
		Load:   load.Config{Concurrency: n, Requests: n},
		Client: client.Options{Timeout: time.Minute, IdleTimeout: 30 * time.Second},
		Scrape: runner.ScrapeOff,
	}
	if *profileDir != "" {
		f, err := os.Create(filepath.Join(*profileDir, fmt.Sprintf("omnibench-%d.pprof", n)))
		if err != nil {
			b.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			b.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	cpu0 := processCPU()
	cfg, records := keepRecords(cfg)
	out, err := runner.Run(ctx, cfg)
	fig := levelFigures{streams: n, cpu: processCPU() - cpu0}
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
		fig.events += len(r.StampDelaysS)
		for _, d := range r.StampDelaysS {
			fig.delaysMS = append(fig.delaysMS, d*1000)
		}
	}
	if out.Health != nil {
		fig.bytesPerStream = out.Health.MemoryPerStreamBytes
	}
	return fig
}

// bareRun is the bare read loop: n streams at once over net/http, each read
// line by line; a ": sent=<unix ns>" comment gives the next event's stamp,
// the blank line that ends the event its receive time. No JSON, no audio
// decoding, no record.
func bareRun(ctx context.Context, b *testing.B, url string, wl *scenarios.Workload, n int) levelFigures {
	tr := &http.Transport{MaxIdleConnsPerHost: n, DisableCompression: true, ReadBufferSize: 16 << 10}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	bodies := make([][]byte, n)
	for i := range n {
		bodies[i] = bareBody(b, wl.Request(i, 1))
	}
	var (
		open     atomic.Int64
		mu       sync.Mutex
		fig      = levelFigures{streams: n}
		wg       sync.WaitGroup
		errCount atomic.Int64
	)
	mon := selfmon.Start(selfmon.Options{Streams: func() int { return int(open.Load()) }})
	cpu0 := processCPU()
	for i := range n {
		wg.Go(func() {
			open.Add(1)
			defer open.Add(-1)
			delays, err := bareStream(ctx, hc, url, bodies[i])
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
	fig.cpu = processCPU() - cpu0
	fig.bytesPerStream = mon.Stop().MemoryPerStreamBytes
	fig.errors = int(errCount.Load())
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
