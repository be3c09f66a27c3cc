package sweep

import (
	"context"
	"sync"

	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/stats"
)

// fakeLevel describes what a fake run at a level measures.
type fakeLevel struct {
	failed     int     // failed requests of 20
	ttfpMS     float64 // every response's TTFP
	throughput float64 // request throughput
}

// fakeRunner is a RunFunc without a server: it measures what fn says and
// records the levels it was asked for.
type fakeRunner struct {
	mu     sync.Mutex
	levels []float64
	fn     func(level float64) fakeLevel
	errAt  float64 // return errFake at this level (0: never)
}

func (f *fakeRunner) run(_ context.Context, level float64) (Measurement, error) {
	f.mu.Lock()
	f.levels = append(f.levels, level)
	f.mu.Unlock()
	l := f.fn(level)
	const total = 20
	s := &summary.Summary{
		DurationS:   10,
		RequestRate: l.throughput,
		Requests:    summary.Requests{Total: total, Completed: total - l.failed, Failed: l.failed},
		Percentiles: []float64{50, 95},
		Continuity:  []summary.Continuity{{ThresholdMS: "100", OK: total - l.failed, Of: total - l.failed}},
	}
	if l.ttfpMS > 0 {
		s.Metrics = append(s.Metrics, summary.Metric{Name: summary.MetricTTFP, Unit: "ms",
			Summary: stats.Summarize([]float64{l.ttfpMS, l.ttfpMS}, []float64{50, 95})})
	}
	m := Measurement{Summary: s}
	if f.errAt != 0 && level == f.errAt {
		return m, errFake
	}
	return m, nil
}

type fakeError struct{}

func (fakeError) Error() string { return "fake run failed" }

var errFake error = fakeError{}

// passUpTo is a server whose capacity is exactly k: levels up to k run
// without errors, every level above k fails one request of 20.
func passUpTo(k float64) *fakeRunner {
	return &fakeRunner{fn: func(level float64) fakeLevel {
		if level <= k {
			return fakeLevel{ttfpMS: 100, throughput: level}
		}
		return fakeLevel{failed: 1, ttfpMS: 100, throughput: level}
	}}
}

// noErrors is the SLO the fake servers are judged by.
func noErrors() []slo.SLO {
	s, err := slo.Parse("errors<1")
	if err != nil {
		panic(err)
	}
	return []slo.SLO{s}
}
