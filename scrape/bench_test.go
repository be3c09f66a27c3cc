package scrape

import (
	"errors"
	"fmt"
	"runtime"
	"testing"
)

// BenchmarkParseLargeExposition decodes generated expositions of many
// gauge series and reports the bytes allocated per series. Under the sample
// cap (DefaultMaxSamples) the whole exposition is decoded; above it the
// exposition is refused after one counting pass over its lines, before any
// decoder allocates. Run with -benchtime 1x: the largest case is 1 M series.
func BenchmarkParseLargeExposition(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		body := bigExposition(n)
		b.Run(fmt.Sprintf("series=%d", n), func(b *testing.B) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			var err error
			for b.Loop() {
				_, err = Parse("text/plain; version=0.0.4", body)
			}
			runtime.ReadMemStats(&after)
			var le *LimitError
			switch {
			case n <= DefaultMaxSamples && err != nil:
				b.Fatalf("%d series under the cap: %v", n, err)
			case n > DefaultMaxSamples && !errors.As(err, &le):
				b.Fatalf("%d series over the cap: err %v, want a LimitError", n, err)
			}
			perOp := float64(after.TotalAlloc-before.TotalAlloc) / float64(b.N)
			b.ReportMetric(float64(len(body)), "exposition-bytes")
			b.ReportMetric(perOp/float64(n), "alloc-B/series")
			b.ReportMetric(perOp/(1<<20), "alloc-MiB/op")
		})
	}
}
