package load

import (
	"math"
	"slices"
	"sort"
	"testing"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

func TestScheduleConstantExact(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want []time.Duration
		end  time.Duration
	}{
		{"4/s, 5 requests", Config{Rate: 4, Arrival: Constant, Requests: 5},
			[]time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond, 750 * time.Millisecond, time.Second}, 1250 * time.Millisecond},
		// 1/3 s is not representable: each offset is i/3 rounded on its own,
		// so the fourth lands exactly on 1 s (no accumulated error).
		{"3/s, 4 requests", Config{Rate: 3, Arrival: Constant, Requests: 4},
			[]time.Duration{0, 333333333, 666666667, time.Second}, 1333333333},
		// The arrival at exactly Duration is outside the window.
		{"10/s for 500ms", Config{Rate: 10, Arrival: Constant, Duration: 500 * time.Millisecond},
			[]time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}, 500 * time.Millisecond},
		// Requests reached before Duration: End is the next arrival.
		{"both bounds, requests first", Config{Rate: 10, Arrival: Constant, Requests: 2, Duration: time.Second},
			[]time.Duration{0, 100 * time.Millisecond}, 200 * time.Millisecond},
		// Duration reached first: End is capped at Duration.
		{"both bounds, duration first", Config{Rate: 4, Arrival: Constant, Requests: 100, Duration: 600 * time.Millisecond},
			[]time.Duration{0, 250 * time.Millisecond, 500 * time.Millisecond}, 600 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSchedule(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(s.Offsets, tt.want) {
				t.Errorf("offsets = %v, want %v", s.Offsets, tt.want)
			}
			if s.End != tt.end {
				t.Errorf("end = %v, want %v", s.End, tt.end)
			}
		})
	}
}

func TestScheduleReproducible(t *testing.T) {
	for _, arrival := range []string{Poisson, Gamma} {
		cfg := Config{Rate: 20, Arrival: arrival, Burstiness: 0.5, Requests: 1000, Seed: 42}
		if arrival == Poisson {
			cfg.Burstiness = 0
		}
		a, err := NewSchedule(cfg)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := NewSchedule(cfg)
		if !slices.Equal(a.Offsets, b.Offsets) || a.End != b.End {
			t.Errorf("%s: the same seed gave different schedules", arrival)
		}
		cfg.Seed = 43
		c, _ := NewSchedule(cfg)
		if slices.Equal(a.Offsets, c.Offsets) {
			t.Errorf("%s: seeds 42 and 43 gave the same schedule", arrival)
		}
		if a.Offsets[0] != 0 {
			t.Errorf("%s: first offset %v, want 0", arrival, a.Offsets[0])
		}
		if !slices.IsSorted(a.Offsets) {
			t.Errorf("%s: offsets not sorted", arrival)
		}
	}
}

// moments returns the mean and coefficient of variation (sample standard
// deviation over mean) of xs.
func moments(xs []float64) (mean, cv float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss/float64(len(xs)-1)) / mean
}

// ksDistance is the Kolmogorov-Smirnov statistic of xs against cdf.
func ksDistance(xs []float64, cdf func(float64) float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := float64(len(s))
	var d float64
	for i, x := range s {
		f := cdf(x)
		d = max(d, f-float64(i)/n, float64(i+1)/n-f)
	}
	return d
}

// The gap generators against theory. n = 20000 with a fixed seed: the
// outcome is deterministic, and the tolerances are about 3 standard errors so
// the chosen seed is not special.
func TestGapStatistics(t *testing.T) {
	const (
		n    = 20000
		rate = 50.0
	)
	// Kolmogorov's critical value at alpha = 0.01 for n samples.
	ksCritical := 1.628 / math.Sqrt(n)
	tests := []struct {
		arrival string
		shape   float64
		cdf     func(float64) float64 // independent reference
	}{
		// Exponential CDF written out by hand.
		{Poisson, 1, func(x float64) float64 { return 1 - math.Exp(-rate*x) }},
		{Gamma, 1, func(x float64) float64 { return 1 - math.Exp(-rate*x) }},
		{Gamma, 0.25, distuv.Gamma{Alpha: 0.25, Beta: 0.25 * rate}.CDF},
		{Gamma, 0.5, distuv.Gamma{Alpha: 0.5, Beta: 0.5 * rate}.CDF},
		{Gamma, 4, distuv.Gamma{Alpha: 4, Beta: 4 * rate}.CDF},
	}
	for _, tt := range tests {
		gap := newGaps(tt.arrival, rate, tt.shape, 1)
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = gap()
		}
		mean, cv := moments(xs)
		wantCV := 1 / math.Sqrt(tt.shape)
		// Standard error of the mean is cv/sqrt(n) relative: 1.4% at cv 2.
		if tol := 3 * wantCV / math.Sqrt(n); math.Abs(mean*rate-1) > tol {
			t.Errorf("%s shape %v: mean gap %v, want %v within %.1f%%", tt.arrival, tt.shape, mean, 1/rate, 100*tol)
		}
		if math.Abs(cv/wantCV-1) > 0.06 {
			t.Errorf("%s shape %v: CV %v, want %v within 6%%", tt.arrival, tt.shape, cv, wantCV)
		}
		if d := ksDistance(xs, tt.cdf); d > ksCritical {
			t.Errorf("%s shape %v: KS distance %v > %v", tt.arrival, tt.shape, d, ksCritical)
		}
	}
}

// Poisson arrivals: counts per window have variance equal to their mean
// (index of dispersion 1); a constant schedule has variance 0.
func TestPoissonDispersion(t *testing.T) {
	s, err := NewSchedule(Config{Rate: 50, Arrival: Poisson, Requests: 20000, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	windows := int(s.End / time.Second)
	counts := make([]float64, windows)
	for _, off := range s.Offsets {
		if w := int(off / time.Second); w < windows {
			counts[w]++
		}
	}
	mean, cv := moments(counts)
	dispersion := cv * cv * mean
	// About 400 windows: the dispersion estimate has sd sqrt(2/399) ≈ 0.07.
	if math.Abs(dispersion-1) > 0.21 {
		t.Errorf("index of dispersion %v (mean count %v), want 1 ± 0.21", dispersion, mean)
	}
	if math.Abs(float64(len(s.Offsets))/s.End.Seconds()/50-1) > 0.03 {
		t.Errorf("offered rate %v/s, want 50 ± 3%%", float64(len(s.Offsets))/s.End.Seconds())
	}
}

func TestScheduleDurationPoisson(t *testing.T) {
	s, err := NewSchedule(Config{Rate: 100, Duration: 10 * time.Second, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if s.End != 10*time.Second {
		t.Errorf("end %v, want 10s", s.End)
	}
	if last := s.Offsets[len(s.Offsets)-1]; last >= 10*time.Second {
		t.Errorf("last offset %v not before the duration", last)
	}
	// 1000 expected, Poisson sd 32.
	if n := len(s.Offsets); n < 900 || n > 1100 {
		t.Errorf("%d arrivals in 10s at 100/s, want 1000 ± 100", n)
	}
}

func TestScheduleErrors(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"closed loop", Config{Concurrency: 1, Requests: 1}},
		{"too many for duration", Config{Rate: 1e6, Duration: time.Hour}},
		{"too many requests", Config{Rate: 1, Requests: MaxArrivals + 1}},
		{"offset overflow", Config{Rate: 1e-12, Arrival: Constant, Requests: 3}},
	}
	for _, tt := range tests {
		if _, err := NewSchedule(tt.cfg); err == nil {
			t.Errorf("%s: no error", tt.name)
		} else {
			t.Logf("%s: %v", tt.name, err)
		}
	}
}
