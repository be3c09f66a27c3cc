package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

// silentListener accepts connections and never answers on them, like a
// wedged /metrics endpoint behind a live socket. Its connections are closed
// when the test ends.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		done  = make(chan struct{})
	)
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String() + "/metrics"
}

// A /metrics endpoint that accepts and never answers before the first
// request: the run goes on without server metrics and says why.
func TestRunHungScrapeBeforeRun(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 3, 1)
	cfg.Scrape = ScrapeAuto
	cfg.MetricsURL = silentListener(t)
	cfg.ScrapeTimeout = 200 * time.Millisecond
	out := mustRun(t, cfg)
	if len(out.Records) != 3 {
		t.Fatalf("%d records, want 3", len(out.Records))
	}
	if out.Before != nil || !strings.Contains(out.ScrapeNote, "no answer within 200ms") || !strings.Contains(out.ScrapeNote, "--scrape-timeout") {
		t.Errorf("scrape note %q: want the hung scrape named with its deadline and flag", out.ScrapeNote)
	}
	if doc := out.Document(); doc.Server == nil || doc.Server.Note != out.ScrapeNote {
		t.Errorf("the summary does not carry the note: %+v", doc.Server)
	}
}

// With --scrape on the hung first scrape is an error, returned at the
// deadline rather than never.
func TestRunHungScrapeOnFails(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 3, 1)
	cfg.MetricsURL = silentListener(t)
	cfg.ScrapeTimeout = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), runGuard)
	defer cancel()
	_, err := Run(ctx, cfg)
	var te *scrape.TimeoutError
	if !errors.As(err, &te) || ctx.Err() != nil {
		t.Fatalf("Run: %v; want a scrape timeout before the guard", err)
	}
}

// The first scrape answers, the second (after the last request) hangs: the
// run ends with its records, the first snapshot and a note.
func TestRunHungScrapeAfterRun(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	var scrapes atomic.Int32
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if scrapes.Add(1) == 1 {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4")
			_, _ = w.Write([]byte("# TYPE up gauge\nup 1\n"))
			return
		}
		<-r.Context().Done() // never answer; the client's deadline ends it
	}))
	t.Cleanup(metrics.Close)
	cfg := baseConfig(sim.URL, wl, 3, 1)
	cfg.Scrape = ScrapeAuto
	cfg.MetricsURL = metrics.URL + "/metrics"
	cfg.ScrapeTimeout = 200 * time.Millisecond
	out := mustRun(t, cfg)
	if out.Before == nil || out.After != nil || out.Delta != nil {
		t.Errorf("snapshots before=%v after=%v: want the first only", out.Before != nil, out.After != nil)
	}
	if !strings.HasPrefix(out.ScrapeNote, "second scrape failed") || !strings.Contains(out.ScrapeNote, "no answer within 200ms") {
		t.Errorf("scrape note %q", out.ScrapeNote)
	}
}

// exposition serves a text exposition of n gauge series (and up 1).
func exposition(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("# TYPE up gauge\nup 1\n# TYPE big_gauge gauge\n")
	for i := range n {
		fmt.Fprintf(&b, "big_gauge{id=\"%d\"} %d\n", i, i)
	}
	body := b.String()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/metrics"
}

// The summary describes the snapshots (time, type, size, file) without
// embedding their bodies.
func TestRunSnapshotsNotEmbedded(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 2, 1)
	cfg.MetricsURL = exposition(t, 20_000)
	out := mustRun(t, cfg)
	out.BeforeFile = "run.before.prom"
	data, err := json.Marshal(out.Document())
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 64<<10 || bytes.Contains(data, []byte("big_gauge{")) {
		t.Errorf("the summary is %d bytes and embeds the exposition", len(data))
	}
	doc := out.Document()
	if doc.Server.Before.Bytes != len(out.Before.Body) || doc.Server.After.Bytes != len(out.After.Body) || doc.Server.Before.File != "run.before.prom" {
		t.Errorf("snapshot documents %+v %+v", doc.Server.Before, doc.Server.After)
	}
}

// An exposition over the sample cap is refused with a note naming the flag
// that raises it; the run goes on.
func TestRunSampleCapNote(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 2, 1)
	cfg.Scrape = ScrapeAuto
	cfg.MetricsURL = exposition(t, 2_000)
	cfg.ScrapeMaxSamples = 1_000
	out := mustRun(t, cfg)
	if out.Before != nil || !strings.Contains(out.ScrapeNote, "more than 1000 samples") || !strings.Contains(out.ScrapeNote, "--scrape-max-samples") {
		t.Errorf("note %q", out.ScrapeNote)
	}
}
