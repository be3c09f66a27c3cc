package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/sse"
)

// processCPU is the user and system CPU time this process has used (server
// and client together).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// lateness collects how late the server sent events against their
// schedule, overall and for events due after steadyAfter (once every stream
// has started and the connection burst is over).
type lateness struct {
	mu          sync.Mutex
	steadyAfter time.Time
	d, steady   []time.Duration
}

func (l *lateness) add(due time.Time, d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	if due.After(l.steadyAfter) {
		l.steady = append(l.steady, d)
	}
	l.mu.Unlock()
}

// quantile of sorted durations, nearest rank, in milliseconds.
func quantileMS(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, int(q*float64(len(sorted))))
	return float64(sorted[i]) / float64(time.Millisecond)
}

// BenchmarkConcurrentStreams shows the simulator is not the bottleneck: one
// instance serves 1000 concurrent streaming chat requests (text and WAV
// audio events, send stamps on, stats on) over loopback, the client in the
// same process. Each stream carries 3.2 s of audio in the default 0.32 s
// chunks (20 KB of base64 per event) plus 8 text words; the requests start
// spread over 250 ms. At RTF 1 the streams are real time (about 3000 audio
// events and 48 MB/s of PCM per second in total); at RTF 0.5 twice that.
// Reported per sub-benchmark: streams completed per run, wall time per run,
// event rate, CPU used by the process (server and client) in cores, per
// event and relative to the schedule's length (cores-needed: the share of
// the machine a run needs to stay on time), the p50/p99/max lateness of
// event sends against their schedule (server side), the p99 lateness of
// events due after the start-up burst (2 x the arrival spread), and the p99
// delay between a send stamp and its receipt by the client.
func BenchmarkConcurrentStreams(b *testing.B) {
	for _, rtf := range []float64{1, 0.5} {
		b.Run(fmt.Sprintf("streams=1000/rtf=%g", rtf), func(b *testing.B) { benchStreams(b, 1000, rtf) })
	}
}

func benchStreams(b *testing.B, streams int, rtf float64) {
	const spread = 250 * time.Millisecond
	var late lateness
	cfg := Config{
		Addr:       "127.0.0.1:0",
		SampleRate: 24000,
		Seed:       1,
		Stamp:      true,
		Timing: Timing{
			TTFT:         20 * time.Millisecond,
			WordInterval: 20 * time.Millisecond,
			TTFA:         50 * time.Millisecond,
			ChunkAudio:   320 * time.Millisecond,
			RTF:          rtf,
			Jitter:       0.1,
			AudioPerChar: 50 * time.Millisecond,
			MinAudio:     3200 * time.Millisecond,
			MaxAudio:     3200 * time.Millisecond,
		},
		StatsEnabled: true,
		onSend:       late.add,
	}
	run, err := Start(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer run.Close()
	// A large read buffer keeps the in-process client's share of the CPU small.
	tr := &http.Transport{MaxIdleConnsPerHost: streams, DisableCompression: true, ReadBufferSize: 64 << 10}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	var runs, completed, events int64
	var wall, cpu time.Duration
	var stampDelays []time.Duration
	var mu sync.Mutex
	for b.Loop() {
		start := time.Now()
		late.mu.Lock()
		late.d, late.steady = late.d[:0], late.steady[:0]
		late.steadyAfter = start.Add(2 * spread)
		late.mu.Unlock()
		var ok, evs atomic.Int64
		cpu0 := processCPU()
		var wg sync.WaitGroup
		for i := range streams {
			wg.Go(func() {
				// Spread the arrivals like an open-loop generator would.
				time.Sleep(time.Duration(i) * spread / time.Duration(streams))
				body, _ := json.Marshal(chatReq(fmt.Sprintf("stream %d says hello to the benchmark", i), nil))
				ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, run.URL+"/v1/chat/completions", bytes.NewReader(body))
				resp, err := client.Do(req)
				if err != nil {
					b.Errorf("stream %d: %v", i, err)
					return
				}
				defer resp.Body.Close()
				rd := sse.NewReader(resp.Body)
				var delays []time.Duration
				n := 0
				for {
					ev, err := rd.Next()
					if err != nil {
						b.Errorf("stream %d: %v after %d events", i, err, n)
						return
					}
					n++
					if s, found := bytes.CutPrefix(ev.Comment, []byte("sent=")); found {
						if ns, err := strconv.ParseInt(string(s), 10, 64); err == nil {
							delays = append(delays, time.Since(time.Unix(0, ns)))
						}
					}
					if string(ev.Data) == "[DONE]" {
						break
					}
				}
				ok.Add(1)
				evs.Add(int64(n))
				mu.Lock()
				stampDelays = append(stampDelays, delays...)
				mu.Unlock()
			})
		}
		wg.Wait()
		wall += time.Since(start)
		cpu += processCPU() - cpu0
		runs++
		completed += ok.Load()
		events += evs.Load()
	}
	late.mu.Lock()
	d, steady := slices.Clone(late.d), slices.Clone(late.steady)
	late.mu.Unlock()
	slices.Sort(d)
	slices.Sort(steady)
	slices.Sort(stampDelays)
	b.ReportMetric(float64(completed)/float64(runs), "streams/run")
	b.ReportMetric(wall.Seconds()/float64(runs), "wall-s/run")
	b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
	b.ReportMetric(cpu.Seconds()/wall.Seconds(), "cpu-cores")
	// The schedule's own length: the last start, its first audio, then nine
	// more chunks of 0.32 s at the RTF. CPU per run over it is the share of
	// the machine a run needs to stay on time, however busy the machine was.
	nominal := spread + cfg.Timing.TTFA + time.Duration(9*0.32*rtf*float64(time.Second))
	b.ReportMetric(cpu.Seconds()/float64(runs)/nominal.Seconds(), "cores-needed")
	b.ReportMetric(float64(cpu.Microseconds())/float64(events), "cpu-us/event")
	b.ReportMetric(quantileMS(d, 0.5), "p50-late-ms")
	b.ReportMetric(quantileMS(d, 0.99), "p99-late-ms")
	b.ReportMetric(quantileMS(d, 1), "max-late-ms")
	b.ReportMetric(quantileMS(steady, 0.99), "p99-late-steady-ms")
	b.ReportMetric(quantileMS(stampDelays, 0.99), "p99-stamp-ms")
	b.ReportMetric(0, "ns/op") // a run is a fixed workload; its wall time is reported above
}
