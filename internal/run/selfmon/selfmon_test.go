package selfmon

import (
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"testing"
	"time"
)

// TestQuantileAgainstSamples checks Quantile against the exact nearest-rank
// quantile of the raw observations the histogram was filled with: it must
// return the upper bound of the bucket that holds that observation.
func TestQuantileAgainstSamples(t *testing.T) {
	buckets := []float64{math.Inf(-1), 0, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, math.Inf(1)}
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 50 {
		n := 1 + rng.IntN(500)
		obs := make([]float64, n)
		h := &metrics.Float64Histogram{Counts: make([]uint64, len(buckets)-1), Buckets: buckets}
		for i := range obs {
			obs[i] = math.Pow(10, -7+8*rng.Float64()) // 1e-7 .. 10
			for b := range h.Counts {
				if obs[i] >= buckets[b] && obs[i] < buckets[b+1] {
					h.Counts[b]++
				}
			}
		}
		slices.Sort(obs)
		for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 1} {
			v := obs[int(math.Ceil(q*float64(n)))-1] // nearest rank
			want := 0.0
			for b := range h.Counts {
				if v >= buckets[b] && v < buckets[b+1] {
					want = buckets[b+1]
					if math.IsInf(want, 1) {
						want = buckets[b]
					}
				}
			}
			if got := Quantile(h, q); got != want {
				t.Fatalf("trial %d, q %v: %v, want %v (observation %v)", trial, q, got, want, v)
			}
		}
	}
	if Quantile(nil, 0.99) != 0 || Quantile(&metrics.Float64Histogram{Counts: []uint64{0}, Buckets: []float64{0, 1}}, 0.5) != 0 {
		t.Error("empty histogram: want 0")
	}
}

func TestDelta(t *testing.T) {
	a := &metrics.Float64Histogram{Counts: []uint64{1, 5, 2}, Buckets: []float64{0, 1, 2, 3}}
	b := &metrics.Float64Histogram{Counts: []uint64{1, 9, 7}, Buckets: []float64{0, 1, 2, 3}}
	d := delta(a, b)
	if !slices.Equal(d.Counts, []uint64{0, 4, 5}) || total(d) != 9 {
		t.Errorf("delta %v", d.Counts)
	}
	if delta(a, &metrics.Float64Histogram{Counts: []uint64{1}, Buckets: []float64{0, 1}}) != nil {
		t.Error("histograms of different shape gave a delta")
	}
}

// TestMonitorSamplesTheProcess runs a real monitor over some work (busy
// goroutines, allocation, a forced GC) and checks that the figures are
// sane: non-negative, bounded, and showing the GC that happened.
func TestMonitorSamplesTheProcess(t *testing.T) {
	got := make(chan Sample, 1)
	var streams atomic.Int64
	held := make([][]byte, 0, 10)
	m := Start(Options{Interval: time.Millisecond, Streams: func() int { return int(streams.Load()) }, OnSample: func(s Sample) {
		select {
		case got <- s:
		default:
		}
	}})
	for range 10 {
		held = append(held, make([]byte, 1<<20))
	}
	streams.Store(int64(len(held)))
	var sink uint64
	for i := range 1_000_000 {
		sink += uint64(i * i)
	}
	runtime.GC()
	s := <-got
	r := m.Stop()
	runtime.KeepAlive(held)
	_ = sink

	if s.Interval <= 0 || s.CPUShare < 0 || s.Goroutines < 1 || s.MemoryBytes == 0 || s.SchedLatencyP99 < 0 {
		t.Errorf("sample not sane: %+v", s)
	}
	if r.Cores < 1 || r.Cores > runtime.NumCPU() || r.GOMAXPROCS < 1 {
		t.Errorf("cores %d, GOMAXPROCS %d", r.Cores, r.GOMAXPROCS)
	}
	for name, v := range map[string]float64{"duration": r.DurationS, "cpu cores": r.CPUCores, "cpu share": r.CPUShare,
		"peak cpu": r.PeakCPUShare, "sched p50": r.SchedLatencyP50MS, "sched p99": r.SchedLatencyP99MS,
		"sched max": r.SchedLatencyMaxMS, "gc total": r.GCPauseTotalMS, "gc p99": r.GCPauseP99MS, "per stream": r.MemoryPerStreamBytes} {
		if !(v >= 0) || math.IsInf(v, 0) {
			t.Errorf("%s = %v, want a finite value >= 0", name, v)
		}
	}
	if r.CPUCores > float64(runtime.NumCPU())+0.5 {
		t.Errorf("%v cores busy on a %d-CPU machine", r.CPUCores, runtime.NumCPU())
	}
	if !(r.SchedLatencyP50MS <= r.SchedLatencyP99MS && r.SchedLatencyP99MS <= r.SchedLatencyMaxMS) {
		t.Errorf("scheduling latency quantiles out of order: %v %v %v", r.SchedLatencyP50MS, r.SchedLatencyP99MS, r.SchedLatencyMaxMS)
	}
	if r.GCPauses < 1 {
		t.Errorf("runtime.GC ran but %d GC pauses were recorded", r.GCPauses)
	}
	if r.PeakStreams != len(held) {
		t.Errorf("peak streams %d, want %d (the last sample is taken at Stop)", r.PeakStreams, len(held))
	}
	// Each of the 10 "streams" holds 1 MiB allocated after the start, live at
	// every sample that saw them: at least that much per stream.
	if r.MemoryPerStreamBytes < 0.9*(1<<20) {
		t.Errorf("memory per stream %.0f B, want at least the 1 MiB each holds", r.MemoryPerStreamBytes)
	}
	if r.PeakMemoryBytes < r.BaseMemoryBytes || r.PeakGoroutines < 1 {
		t.Errorf("memory %d..%d, goroutines %d", r.BaseMemoryBytes, r.PeakMemoryBytes, r.PeakGoroutines)
	}
}
