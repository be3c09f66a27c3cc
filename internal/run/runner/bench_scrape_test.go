//go:build linux

package runner_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
)

// scrapeLoadStreams is the load of BenchmarkStampDelayWithScrapes: enough
// concurrent streams to keep the client busy, each about 4 s long.
const scrapeLoadStreams = 500

// BenchmarkStampDelayWithScrapes measures whether the run's interval
// scrapes move the load's stamp delay p99: runs of omnibench's runner
// against `omnibench serve` at 16 stages of 32 replicas with stats on (a
// 17 MB exposition) and send stamps on, without interval scrapes, with
// the default interval (5 s), with 500 ms to amplify their cost, and with
// 500 ms of scrapes of a copy of the exposition served by this process
// ("500ms-client": omnibench's side of a scrape alone, without the
// server's rendering of 17 MB, which shares the machine's cores), in turn
// (the order rotates every iteration), after one run of each that is not
// measured (the first runs meet a cold server and client). Each run is 500
// streams, two rounds (about 9 s). It reports each mode's pooled delay
// p99 and its ratio to the runs without interval scrapes, and the
// interval scrapes taken per run.
func BenchmarkStampDelayWithScrapes(b *testing.B) {
	ensureFiles(b, 2*scrapeLoadStreams+256)
	replicas := strings.TrimSuffix(strings.Repeat("32,", 16), ",")
	srv := startServeWith(b, append(bareServeFlags(), "--log-stats", "--replicas", replicas))
	sc, err := scenarios.Get(benchScenario)
	if err != nil {
		b.Fatal(err)
	}
	wl, err := sc.Workload()
	if err != nil {
		b.Fatal(err)
	}
	copied := copyExposition(b, srv.url+"/metrics")
	modes := []struct {
		name    string
		every   time.Duration
		metrics string // "": the server's own
	}{{"none", 0, ""}, {"5s", 5 * time.Second, ""}, {"500ms", 500 * time.Millisecond, ""},
		{"500ms-client", 500 * time.Millisecond, copied}}
	runs := make([]levelRuns, len(modes))
	intervals := make([]int, len(modes))
	var clients []func(ctx context.Context)
	for k, m := range modes {
		clients = append(clients, func(ctx context.Context) {
			cfg := runner.Config{
				Target: srv.url, Workload: wl, Scenario: benchScenario, Seed: 1,
				Load:           load.Config{Concurrency: scrapeLoadStreams, Requests: 2 * scrapeLoadStreams},
				Client:         client.Options{Timeout: time.Minute, IdleTimeout: 30 * time.Second},
				Scrape:         runner.ScrapeOn,
				ScrapeInterval: m.every,
				MetricsURL:     m.metrics,
			}
			lines := &markerCounter{}
			cfg.Out = lines
			fig := runnerLevel(ctx, b, cfg, "scrapes-"+m.name, scrapeLoadStreams, stampDelaysMS)
			if fig.errors > 0 || lines.gaps > 0 {
				b.Fatalf("%s: %d failed requests (the first %s), %d failed scrapes", m.name, fig.errors, fig.firstErr, lines.gaps)
			}
			runs[k] = append(runs[k], fig)
			intervals[k] += lines.intervals
		})
	}
	ctx, cancel := context.WithTimeout(b.Context(), 3*benchDeadline)
	for _, warm := range clients {
		warm(ctx)
	}
	cancel()
	runs, intervals = make([]levelRuns, len(modes)), make([]int, len(modes))
	rotateClients(b, clients, func() {
		for k, m := range modes {
			b.ReportMetric(runs[k].pooledP99(-1), m.name+"-p99-delay-ms")
			b.ReportMetric(float64(intervals[k])/float64(len(runs[k])), m.name+"-interval-scrapes/run")
			if k > 0 {
				ratio, _, _ := pooledP99Ratio(runs[k], runs[0])
				b.ReportMetric(ratio, m.name+"-p99-ratio")
			}
		}
	})
}

// copyExposition serves, from this process, a copy of the text exposition
// at url, and returns where.
func copyExposition(b *testing.B, url string) string {
	ctx, cancel := context.WithTimeout(b.Context(), time.Minute)
	defer cancel()
	snap, err := scrape.Options{Accept: scrape.AcceptText}.Fetch(ctx, url)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", snap.ContentType)
		_, _ = w.Write(snap.Body)
	}))
	b.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// markerCounter is a results file that keeps nothing but counts the
// lines of interval scrapes and, among them, the gaps.
type markerCounter struct {
	partial         []byte // a line not ended yet
	intervals, gaps int
}

var (
	intervalMarker = []byte(`"phase":"interval"`)
	gapMarker      = []byte(`"gap":"`)
)

func (c *markerCounter) Write(p []byte) (int, error) {
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
			}
		}
		c.partial = c.partial[i+1:]
	}
}

// stampDelaysMS are a record's send-stamp delays in ms.
func stampDelaysMS(r *results.Record) []float64 {
	d := make([]float64, len(r.StampDelaysS))
	for i, s := range r.StampDelaysS {
		d[i] = s * 1000
	}
	return d
}
