package load

import (
	"context"
	"testing"
	"time"
)

// Cost of planning one arrival.
func BenchmarkNewSchedule(b *testing.B) {
	for _, arrival := range Arrivals() {
		b.Run(arrival, func(b *testing.B) {
			cfg := Config{Rate: 1000, Arrival: arrival, Burstiness: 1, Requests: 10_000}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewSchedule(cfg); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*cfg.Requests), "ns/arrival")
		})
	}
}

// Scheduling overhead per arrival of an open loop whose arrivals are all due
// at once (the scheduler never sleeps): the floor of achievable lag.
func BenchmarkOpenLoopDispatch(b *testing.B) {
	const n = 10_000
	cfg := Config{Rate: 1e12, Arrival: Constant, Requests: n, LateThreshold: time.Hour}
	job := func(context.Context, Arrival) {}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Run(context.Background(), cfg, job); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/arrival")
}

// Scheduling overhead per job of a closed loop with no-op jobs.
func BenchmarkClosedLoop(b *testing.B) {
	const n = 10_000
	cfg := Config{Concurrency: 8, Requests: n}
	job := func(context.Context, Arrival) {}
	for b.Loop() {
		if _, err := Run(context.Background(), cfg, job); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
}

// Timer precision of the real scheduler: mean lag of a 1 kHz constant
// schedule (reported, not asserted).
func BenchmarkOpenLoopLag(b *testing.B) {
	cfg := Config{Rate: 1000, Arrival: Constant, Requests: 200}
	job := func(context.Context, Arrival) {}
	var total time.Duration
	var count int
	for b.Loop() {
		st, err := Run(context.Background(), cfg, job)
		if err != nil {
			b.Fatal(err)
		}
		for _, l := range st.Lags {
			total += l
		}
		count += len(st.Lags)
	}
	b.ReportMetric(float64(total.Microseconds())/float64(count), "µs-mean-lag")
}
