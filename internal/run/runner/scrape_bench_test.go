package runner

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/bench/expositions"
	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/scrape"
)

// defaultScrapeInterval is --scrape-interval's default: a scrape's share of
// one core is its time over this interval.
const defaultScrapeInterval = 5 * time.Second

// alternatingExposition serves the given text expositions in turn, as a
// server whose values move between scrapes does, gzipped when asked.
type alternatingExposition struct {
	texts  [][]byte
	served atomic.Int64
}

func (a *alternatingExposition) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	text := a.texts[int(a.served.Add(1)-1)%len(a.texts)]
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	if r.Header.Get("Accept-Encoding") != "gzip" {
		_, _ = w.Write(text)
		return
	}
	// As client_golang's handler does: the fastest level.
	w.Header().Set("Content-Encoding", "gzip")
	zw, _ := gzip.NewWriterLevel(w, gzip.BestSpeed)
	_, _ = zw.Write(text)
	_ = zw.Close()
}

// BenchmarkIntervalScrape is one interval scrape of a 16x32 exposition (17
// MB) as the run takes it: fetched over loopback from a server that
// alternates two expositions of one simulator (values differ), selected,
// added to the timeline, its scrape line encoded and written to a results
// file. "before" is the path the run took before the Selector (fetch
// parsing the whole body, gzipped as net/http asks by default, then
// parsing it again for the breakdown), for comparison.
func BenchmarkIntervalScrape(b *testing.B) {
	ctx, cancel := context.WithTimeout(b.Context(), 5*time.Minute)
	defer cancel()
	texts, err := expositions.Texts(ctx, expositions.Sizes[2], 2)
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(&alternatingExposition{texts: texts})
	defer srv.Close()
	newRun := func(b *testing.B) *run {
		r := &run{cfg: Config{Accept: scrape.AcceptAuto}, metricsURL: srv.URL, out: &Outcome{}}
		if r.results, err = newResultsSink(io.Discard, results.Header{}, false); err != nil {
			b.Fatal(err)
		}
		r.bd.timeline = breakdown.NewTimeline(0)
		return r
	}
	check := func(b *testing.B, r *run) {
		for _, p := range r.bd.timeline.Points() {
			if p.Gaps > 0 {
				b.Fatalf("a scrape failed: %s", p.Gap)
			}
		}
		if err := r.sinkErr.get(); err != nil {
			b.Fatal(err)
		}
		perOp := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		b.ReportMetric(100*perOp/float64(defaultScrapeInterval.Nanoseconds()), "core-%@5s")
	}
	b.Run("interval", func(b *testing.B) {
		r := newRun(b)
		sel := scrape.NewSelector(breakdown.Filter())
		r.primeSelector(ctx, sel) // as the run does before its load
		b.SetBytes(int64(len(texts[0])))
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			r.intervalScrape(ctx, sel)
		}
		b.StopTimer()
		if sel.Reused() != b.N {
			b.Fatalf("%d of %d scrapes decoded by their values", sel.Reused(), b.N)
		}
		check(b, r)
	})
	b.Run("before", func(b *testing.B) {
		r := newRun(b)
		b.SetBytes(int64(len(texts[0])))
		b.ReportAllocs()
		for b.Loop() {
			snap, err := r.cfg.ScrapeOptions().Fetch(ctx, r.metricsURL)
			if err != nil {
				b.Fatal(err)
			}
			s, err := breakdown.FromSnapshot(snap)
			if err != nil {
				b.Fatal(err)
			}
			r.bd.timeline.Add(s)
			r.writeSeries(results.ScrapeInterval, s, time.Time{})
		}
		check(b, r)
	})
}

// BenchmarkGzipExposition is what compression would add to every scrape of
// a 16x32 exposition: the server's gzip at the fastest level (as
// client_golang's handler does) and the client's gunzip.
func BenchmarkGzipExposition(b *testing.B) {
	texts, err := expositions.Texts(b.Context(), expositions.Sizes[2], 1)
	if err != nil {
		b.Fatal(err)
	}
	var zipped bytes.Buffer
	b.Run("gzip", func(b *testing.B) {
		b.SetBytes(int64(len(texts[0])))
		for b.Loop() {
			zipped.Reset()
			zw, _ := gzip.NewWriterLevel(&zipped, gzip.BestSpeed)
			_, _ = zw.Write(texts[0])
			_ = zw.Close()
		}
		b.ReportMetric(float64(zipped.Len()), "gzipped-bytes")
	})
	b.Run("gunzip", func(b *testing.B) {
		b.SetBytes(int64(len(texts[0])))
		for b.Loop() {
			zr, err := gzip.NewReader(bytes.NewReader(zipped.Bytes()))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(io.Discard, zr); err != nil {
				b.Fatal(err)
			}
		}
	})
}
