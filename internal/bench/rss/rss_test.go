package rss

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

var (
	rate     = flag.Int("rss.rate", 200, "requests per second of the measured runs")
	requests = flag.String("rss.requests", "10000,40000", "requests of each run, comma-separated, ascending")
)

// sampleEvery is how often /proc/PID/status is read; countEvery how often
// the server's request count is scraped.
const (
	sampleEvery = 50 * time.Millisecond
	countEvery  = 250 * time.Millisecond
)

// serveFlags make every response short (about 100 ms of audio, generated
// at once): the run's cost is then per request, not per byte.
var serveFlags = []string{
	"--ttft", "1ms", "--word-interval", "1ms", "--ttfa", "1ms", "--chunk-audio", "100ms",
	"--min-audio", "100ms", "--max-audio", "100ms", "--rtf", "0.01", "--jitter", "0",
}

// memory is what one run's samples show.
type memory struct {
	requests    int
	peakDuring  int64 // largest VmRSS sampled before the server had answered every request
	peakOverall int64 // VmHWM at the last sample before the process exited
	lastAnswer  time.Duration
	elapsed     time.Duration
}

// BenchmarkRunRSS reports, for each run size, the peak resident memory
// while requests ran and overall (MB), the end-of-run spike (overall over
// during, %), and between the smallest and the largest run the growth of
// resident memory per finished request (bytes): of the peak while requests
// ran (B-RSS/request) and of the whole run's peak (B-peak/request).
func BenchmarkRunRSS(b *testing.B) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		b.Skip("no /proc: VmRSS is read from /proc/PID/status")
	}
	sizes, err := parseSizes(*requests)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	bin := filepath.Join(b.TempDir(), "omnibench")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/omnibench/omnibench/cmd/omnibench").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for b.Loop() {
		var runs []memory
		for _, n := range sizes {
			m, err := measure(ctx, bin, n, *rate)
			if err != nil {
				b.Fatal(err)
			}
			runs = append(runs, m)
			spike := 100 * float64(m.peakOverall-m.peakDuring) / float64(m.peakDuring)
			b.ReportMetric(float64(m.peakDuring)/1e6, fmt.Sprintf("MB-during/%d", n))
			b.ReportMetric(float64(m.peakOverall)/1e6, fmt.Sprintf("MB-peak/%d", n))
			b.ReportMetric(spike, fmt.Sprintf("spike-%%/%d", n))
			b.Logf("%d requests at %d/s: last answer after %v, run ended after %v; VmRSS peak during %.1f MB, VmHWM %.1f MB (spike %+.1f %%)",
				n, *rate, m.lastAnswer.Round(time.Millisecond), m.elapsed.Round(time.Millisecond), float64(m.peakDuring)/1e6, float64(m.peakOverall)/1e6, spike)
		}
		if first, last := runs[0], runs[len(runs)-1]; last.requests > first.requests {
			more := float64(last.requests - first.requests)
			b.ReportMetric(float64(last.peakDuring-first.peakDuring)/more, "B-RSS/request")
			b.ReportMetric(float64(last.peakOverall-first.peakOverall)/more, "B-peak/request")
		}
	}
}

func parseSizes(s string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || (len(sizes) > 0 && n <= sizes[len(sizes)-1]) {
			return nil, fmt.Errorf("-rss.requests %q: want ascending positive counts", s)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// measure starts a server, runs n requests at rate against it and samples
// the run's memory until it exits.
func measure(ctx context.Context, bin string, n, rate int) (memory, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	url, stopServe, err := serve(ctx, bin)
	if err != nil {
		return memory{}, err
	}
	defer stopServe()

	run := exec.CommandContext(ctx, bin, "run", "--url", url, "--rate", strconv.Itoa(rate), "-n", strconv.Itoa(n), "--warmup", "0")
	var stderr bytes.Buffer
	run.Stdout, run.Stderr = io.Discard, &stderr
	start := time.Now()
	if err := run.Start(); err != nil {
		return memory{}, fmt.Errorf("omnibench run: %w", err)
	}
	m := memory{requests: n}
	answered := make(chan time.Duration, 1)
	var wg sync.WaitGroup
	wg.Go(func() { waitAnswered(ctx, url, n, start, answered) })
	status := fmt.Sprintf("/proc/%d/status", run.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- run.Wait() }()
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	var runErr error
	for done := false; !done; {
		select {
		case runErr = <-exited:
			done = true
		case d := <-answered:
			m.lastAnswer = d
		case <-tick.C:
			rss, hwm, err := readStatus(status)
			if err != nil {
				continue // exiting: the last sample stands
			}
			if m.lastAnswer == 0 {
				m.peakDuring = max(m.peakDuring, rss)
			}
			m.peakOverall = max(m.peakOverall, hwm)
		}
	}
	m.elapsed = time.Since(start)
	cancel()
	wg.Wait()
	if runErr != nil {
		return m, fmt.Errorf("omnibench run (%d requests): %w\n%s", n, runErr, stderr.Bytes())
	}
	if m.lastAnswer == 0 {
		return m, fmt.Errorf("omnibench run (%d requests): the server's count never reached %d", n, n)
	}
	return m, nil
}

// serve starts `omnibench serve` on a free port and returns its URL, read
// from the banner line it writes once it listens.
func serve(ctx context.Context, bin string) (string, func(), error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, serveFlags...)...)
	out, err := cmd.StderrPipe() // the banner goes to stderr
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("omnibench serve: %w", err)
	}
	stop := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if url, ok := strings.CutPrefix(lines.Text(), "omnibench serve: listening on "); ok {
			go func() { _, _ = io.Copy(io.Discard, out) }()
			return strings.TrimSpace(url), stop, nil
		}
	}
	stop()
	return "", nil, errors.New("omnibench serve exited before it listened")
}

// waitAnswered sends the time since start on answered once the server has
// answered n requests (other than its /metrics), polling its counter.
func waitAnswered(ctx context.Context, url string, n int, start time.Time, answered chan<- time.Duration) {
	keep := scrape.Filter{Names: []string{"http_requests_total"}}
	tick := time.NewTicker(countEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		total, err := answeredRequests(ctx, url, keep)
		if err == nil && total >= float64(n) {
			answered <- time.Since(start)
			return
		}
	}
}

func answeredRequests(ctx context.Context, url string, keep scrape.Filter) (float64, error) {
	snap, err := scrape.Options{Accept: scrape.AcceptText, Timeout: 5 * time.Second}.Fetch(ctx, url+"/metrics")
	if err != nil {
		return 0, err
	}
	fs, err := snap.Select(keep)
	if err != nil {
		return 0, err
	}
	total := 0.0
	if f, ok := fs["http_requests_total"]; ok {
		for _, s := range f.Series {
			if s.Labels["handler"] != "/metrics" {
				total += s.Value
			}
		}
	}
	return total, nil
}

// readStatus returns VmRSS and VmHWM of /proc/PID/status in bytes.
func readStatus(path string) (rss, hwm int64, err error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.Lines(string(data)) {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm, nil
}
