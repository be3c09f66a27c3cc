//go:build linux

package runner_test

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/metrics"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scrape"
)

// scrapeLoadStreams is the load of BenchmarkStampDelayWithScrapes: enough
// concurrent streams to keep the client busy, each about 4 s long.
const scrapeLoadStreams = 500

var (
	scrapeIntervalsFlag = flag.String("omnibench.scrape-intervals", "1s,5s",
		"comma-separated scrape intervals BenchmarkStampDelayWithScrapes runs beside no interval scrapes")
	busyFlag = flag.Int("omnibench.busy", 0,
		"competing jobs BenchmarkStampDelayWithScrapes starts, each a process keeping one CPU busy")
)

// BenchmarkStampDelayWithScrapes measures whether the run's interval
// scrapes move the load's stamp delay p99. Every iteration runs
// omnibench's runner in rotating order against the same `omnibench serve`
// (send stamps on, in a process of its own): without interval scrapes and
// with them at each interval -omnibench.scrape-intervals names, by default
// every second (five times the default rate, to amplify their cost) and
// every 5 s (the default). -omnibench.busy N adds N competing jobs, each
// keeping a CPU busy, as on a machine shared with other work. The scrapes read a
// static copy of the server's exposition at 16 stages of 32 replicas with
// stats on (17 MB), served by another process that does nothing else, so
// that neither the server under test nor omnibench's process pays for
// rendering or serving it: what is left is omnibench's side of a scrape.
//
// Each run is 500 streams, one round of warm-up and two measured rounds
// (about 13 s); only the measured rounds' delays count, which leaves out
// the start-up burst of 500 streams opened at once. A run with scrapes
// and the run without them of the same iteration are a pair, made within
// seconds of each other on the same machine load. It reports per mode the
// pooled p99, the median of the pairs' p99 ratios with the least and
// greatest pair, and the jackknife range of the pooled ratio; each pair is
// logged. Pairs of runs share the machine's load only roughly (other jobs
// come and go within seconds), so it also measures inside each run: the
// runtime's histogram of the time goroutines waited for a processor,
// sampled every few milliseconds, split between the periods during an
// interval scrape and the others, which the same run's load shares.
func BenchmarkStampDelayWithScrapes(b *testing.B) {
	ensureFiles(b, 2*scrapeLoadStreams+256)
	replicas := strings.TrimSuffix(strings.Repeat("32,", 16), ",")
	srv := startServeWith(b, append(bareServeFlags(), "--log-stats", "--replicas", replicas))
	wl := benchWorkload(b)
	copied := startStaticExposition(b, srv.url+"/metrics")
	modes := scrapeModes(b)
	startBusyLoops(b, *busyFlag)
	runs := make([]levelRuns, len(modes))
	intervals := make([]int, len(modes))
	waits := make([]schedWaits, len(modes))
	var clients []func(ctx context.Context)
	for k, m := range modes {
		clients = append(clients, func(ctx context.Context) {
			cfg := runner.Config{
				Target: srv.url, Workload: wl, Scenario: benchScenario, Seed: 1,
				Load: load.Config{Concurrency: scrapeLoadStreams, Warmup: scrapeLoadStreams,
					Requests: 2 * scrapeLoadStreams},
				Client:         client.Options{Timeout: time.Minute, IdleTimeout: 30 * time.Second},
				Scrape:         runner.ScrapeOn,
				ScrapeInterval: m.every,
				MetricsURL:     copied,
			}
			lines := &markerCounter{}
			cfg.Out = lines
			stop := sampleSchedLatencies()
			fig := runnerLevel(ctx, b, cfg, "scrapes-"+m.name, scrapeLoadStreams, measuredStampDelaysMS)
			waits[k].add(stop(), lines.windows)
			if fig.errors > 0 || lines.gaps > 0 {
				b.Fatalf("%s: %d failed requests (the first %s), %d failed scrapes", m.name, fig.errors, fig.firstErr, lines.gaps)
			}
			runs[k] = append(runs[k], fig)
			intervals[k] += lines.intervals
		})
	}
	rotateClients(b, clients, func() {
		b.ReportMetric(runs[0].pooledP99(-1), "none-p99-delay-ms")
		waits[0].report(b, "none")
		for k := 1; k < len(modes); k++ {
			reportScrapeMode(b, modes[k].name, runs[k], runs[0])
			b.ReportMetric(float64(intervals[k])/float64(len(runs[k])), modes[k].name+"-interval-scrapes/run")
			waits[k].report(b, modes[k].name)
		}
	})
}

// scrapeMode is one of BenchmarkStampDelayWithScrapes's kinds of run: no
// interval scrapes (every 0) or one every so often.
type scrapeMode struct {
	name  string
	every time.Duration
}

// scrapeModes are no interval scrapes and the intervals that
// -omnibench.scrape-intervals names.
func scrapeModes(b *testing.B) []scrapeMode {
	modes := []scrapeMode{{"none", 0}}
	for _, f := range strings.Split(*scrapeIntervalsFlag, ",") {
		every, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || every <= 0 {
			b.Fatalf("-omnibench.scrape-intervals: %q is not a positive duration", f)
		}
		modes = append(modes, scrapeMode{every.String(), every})
	}
	return modes
}

// startBusyLoops starts n competing jobs for the benchmark's duration:
// this test binary re-executed as a busy loop, each in a session of its
// own, so that the kernel schedules it as another user's job (Linux's
// autogroups) rather than as a thread of this one.
func startBusyLoops(b *testing.B, n int) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	for range n {
		cmd := exec.Command(self, "-test.run", "^$")
		cmd.Env = append(os.Environ(), runner.BusyLoopEnv+"=1")
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			b.Fatalf("starting a busy loop: %v", err)
		}
		b.Cleanup(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	if n > 0 {
		b.Logf("%d busy loops compete for the CPUs", n)
	}
}

// reportScrapeMode reports one mode's runs with interval scrapes against
// the runs without (none), pair by pair.
func reportScrapeMode(b *testing.B, name string, with, none levelRuns) {
	ratios := make([]float64, min(len(with), len(none)))
	for i := range ratios {
		ratios[i] = with[i].p99() / none[i].p99()
		b.Logf("%s pair %d: p99 %.1f ms with, %.1f ms without (%d and %d events): ratio %.2f",
			name, i+1, with[i].p99(), none[i].p99(), with[i].events, none[i].events, ratios[i])
	}
	b.ReportMetric(with.pooledP99(-1), name+"-p99-delay-ms")
	b.ReportMetric(median(slices.Clone(ratios)), name+"-p99-ratio-paired-median")
	b.ReportMetric(slices.Min(ratios), name+"-p99-ratio-paired-min")
	b.ReportMetric(slices.Max(ratios), name+"-p99-ratio-paired-max")
	ratio, lo, hi := pooledP99Ratio(with, none)
	b.ReportMetric(ratio, name+"-p99-ratio-pooled")
	b.ReportMetric(lo, name+"-p99-ratio-pooled-min-leave-one-out")
	b.ReportMetric(hi, name+"-p99-ratio-pooled-max-leave-one-out")
}

// startStaticExposition fetches the text exposition at url once and serves
// a copy of it from a child process (this test binary, re-executed), and
// returns where.
func startStaticExposition(b *testing.B, url string) string {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	snap, err := scrape.Options{Accept: scrape.AcceptText}.Fetch(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "exposition")
	content := append([]byte(snap.ContentType+"\n"), snap.Body...)
	if err := os.WriteFile(file, content, 0o600); err != nil {
		b.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run", "^$")
	cmd.Env = append(os.Environ(), runner.StaticExpositionEnv+"="+file)
	return startChild(b, cmd).url + "/metrics"
}

// markerCounter is a results file that keeps nothing but counts the
// lines of interval scrapes and, among them, the gaps, and notes when each
// scrape that did not fail was under way.
type markerCounter struct {
	partial         []byte // a line not ended yet
	intervals, gaps int
	windows         []scrapeWindow
}

// scrapeWindow is when one interval scrape was under way: from the start
// of its fetch (the time on its line) to the write of its line, its last
// step.
type scrapeWindow struct{ from, to time.Time }

var (
	intervalMarker = []byte(`"phase":"interval"`)
	gapMarker      = []byte(`"gap":"`)
	atMarker       = []byte(`"at":"`)
)

func (c *markerCounter) Write(p []byte) (int, error) {
	written := time.Now()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		if line := c.partial[:i]; bytes.Contains(line, intervalMarker) {
			c.intervals++
			if bytes.Contains(line, gapMarker) {
				c.gaps++
			} else if from, ok := lineTime(line); ok {
				c.windows = append(c.windows, scrapeWindow{from, written})
			}
		}
		c.partial = c.partial[i+1:]
	}
}

// lineTime is the time ("at") of a scrape line.
func lineTime(line []byte) (time.Time, bool) {
	_, rest, found := bytes.Cut(line, atMarker)
	stamp, _, closed := bytes.Cut(rest, []byte(`"`))
	if !found || !closed {
		return time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339Nano, string(stamp))
	return at, err == nil
}

// schedSamplePeriod is how often sampleSchedLatencies reads the runtime's
// histogram: short beside a scrape (tens of milliseconds), long beside
// the read itself (microseconds).
const schedSamplePeriod = 5 * time.Millisecond

// schedSamples are successive reads of the runtime's histogram of the time
// goroutines waited, runnable, for a processor (/sched/latencies:seconds),
// the wait that a scrape holding a processor adds to the load's readers.
type schedSamples struct {
	buckets []float64 // bucket boundaries, in seconds
	at      []time.Time
	counts  [][]uint64
	gcs     []uint64 // completed GC cycles (/gc/cycles/total:gc-cycles)
}

// sampleSchedLatencies reads the histogram every schedSamplePeriod until
// stop is called, which returns the reads.
func sampleSchedLatencies() (stop func() *schedSamples) {
	samples := &schedSamples{}
	read := func() {
		m := []metrics.Sample{{Name: "/sched/latencies:seconds"}, {Name: "/gc/cycles/total:gc-cycles"}}
		metrics.Read(m)
		h := m[0].Value.Float64Histogram()
		samples.buckets = h.Buckets
		samples.at = append(samples.at, time.Now())
		samples.counts = append(samples.counts, h.Counts)
		samples.gcs = append(samples.gcs, m[1].Value.Uint64())
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(schedSamplePeriod)
		defer tick.Stop()
		for {
			read()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() *schedSamples {
		close(done)
		<-finished
		read()
		return samples
	}
}

// schedWaits are the scheduling waits of a mode's runs, split between the
// sampling periods that overlapped an interval scrape and the others. It
// also counts the garbage collection cycles that ended in each part, and
// each part's time: whether a scrape's garbage brings cycles into its
// periods.
type schedWaits struct {
	buckets                 []float64
	during, outside         []uint64
	gcsDuring, gcsOutside   uint64
	timeDuring, timeOutside time.Duration
}

// add splits the counts of s between during and outside by windows.
func (w *schedWaits) add(s *schedSamples, windows []scrapeWindow) {
	w.buckets = s.buckets
	if w.during == nil {
		n := len(s.buckets) - 1
		w.during, w.outside = make([]uint64, n), make([]uint64, n)
	}
	for i := 1; i < len(s.at); i++ {
		into, gcs, spent := w.outside, &w.gcsOutside, &w.timeOutside
		for _, win := range windows {
			if s.at[i].After(win.from) && s.at[i-1].Before(win.to) {
				into, gcs, spent = w.during, &w.gcsDuring, &w.timeDuring
				break
			}
		}
		*gcs += s.gcs[i] - s.gcs[i-1]
		*spent += s.at[i].Sub(s.at[i-1])
		for k := range into {
			into[k] += s.counts[i][k] - s.counts[i-1][k]
		}
	}
}

// p99MS is the upper bound of the bucket that holds the 99th percentile
// of counts, in ms, and the count of waits.
func (w *schedWaits) p99MS(counts []uint64) (p99 float64, n uint64) {
	for _, c := range counts {
		n += c
	}
	seen := uint64(0)
	for k, c := range counts {
		if seen += c; float64(seen) >= 0.99*float64(n) && n > 0 {
			return w.buckets[k+1] * 1000, n
		}
	}
	return 0, n
}

// report reports the p99 of the waits during scrapes and outside them.
func (w *schedWaits) report(b *testing.B, name string) {
	if w.during == nil {
		return
	}
	during, nd := w.p99MS(w.during)
	outside, no := w.p99MS(w.outside)
	if nd > 0 {
		b.ReportMetric(during, name+"-sched-wait-p99-ms-during-scrapes")
	}
	b.ReportMetric(outside, name+"-sched-wait-p99-ms-outside")
	b.Logf("%s: scheduling wait p99 %.3f ms during scrapes (%d waits), %.3f ms outside (%d waits)",
		name, during, nd, outside, no)
	if w.timeDuring > 0 {
		b.ReportMetric(float64(w.gcsDuring)/w.timeDuring.Seconds(), name+"-gc-cycles/s-during-scrapes")
	}
	b.ReportMetric(float64(w.gcsOutside)/w.timeOutside.Seconds(), name+"-gc-cycles/s-outside")
	b.Logf("%s: GC cycles %d in %v during scrapes, %d in %v outside", name,
		w.gcsDuring, w.timeDuring.Round(time.Millisecond), w.gcsOutside, w.timeOutside.Round(time.Millisecond))
}

// measuredStampDelaysMS are a record's send-stamp delays in ms, none for
// a warm-up record.
func measuredStampDelaysMS(r *results.Record) []float64 {
	if r.Warmup {
		return nil
	}
	d := make([]float64, len(r.StampDelaysS))
	for i, s := range r.StampDelaysS {
		d[i] = s * 1000
	}
	return d
}
