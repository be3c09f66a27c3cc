package runner

import (
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/scrape"
)

// A scrape line a little longer than the last one (a counter gained a
// digit) is encoded into the buffer made for it, not into one grown and
// copied on the way: at a large topology that buffer is megabytes.
func TestScrapeLineBufferFitsAGrowingLine(t *testing.T) {
	series := func(value string) breakdown.Series {
		text := "# TYPE vllm:num_requests_running gauge\n" +
			`vllm:num_requests_running{stage="0",replica="0"} ` + value + "\n"
		s, err := breakdown.FromSnapshot(&scrape.Snapshot{ContentType: "text/plain; version=0.0.4",
			Body: []byte(text), FetchedAt: time.Unix(1_700_000_000, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	short, long := series("9"), series("10")
	r := &run{}
	r.writeSeries(results.ScrapeInterval, short, time.Time{})
	lastLine := r.bd.lineSize
	allocs := func(s breakdown.Series) float64 {
		return testing.AllocsPerRun(20, func() {
			r.bd.lineSize = lastLine
			r.writeSeries(results.ScrapeInterval, s, time.Time{})
		})
	}
	if got, want := allocs(long), allocs(short); got > want {
		t.Errorf("a line one byte longer than the last makes %.0f allocations, one as long %.0f", got, want)
	}
}
