package stats

import (
	"encoding/json"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sort"
)

// DefaultPercentiles returns the percentiles reported when a caller does not
// choose: 50, 95 and 99.
func DefaultPercentiles() []float64 { return []float64{50, 95, 99} }

// Summary describes one sample.
//
// Non-finite inputs (NaN, ±Inf) are not measurements: Summarize drops them,
// counts them in Dropped and adds a warning, and every other field describes
// the finite values only. With no finite values N is 0 and every statistic is
// NaN. With N == 1 Std is NaN (a sample standard deviation needs two values).
type Summary struct {
	N           int
	Mean        float64
	Median      float64
	Std         float64 // sample standard deviation (divisor n-1)
	Min         float64
	Max         float64
	Percentiles []PercentileValue // in the order requested
	Dropped     int               // non-finite inputs left out
	Warnings    []string
}

// PercentileValue is one requested percentile (P in [0, 100]) and its value.
type PercentileValue struct {
	P     float64
	Value float64
}

// Summarize describes xs (which it does not modify). Percentiles outside
// [0, 100] (or NaN) get a NaN value and a warning.
func Summarize(xs []float64, percentiles []float64) Summary {
	sorted := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			sorted = append(sorted, x)
		}
	}
	sort.Float64s(sorted)
	return summarizeSorted(sorted, len(xs)-len(sorted), percentiles)
}

// SummarizeInPlace is Summarize without its sorted copy, for a series too
// large to copy: it reorders xs, moving the finite values to the front in
// ascending order and the non-finite ones behind them (the values are kept,
// only their order changes).
func SummarizeInPlace(xs []float64, percentiles []float64) Summary {
	n := 0
	for i, x := range xs {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			xs[n], xs[i] = xs[i], xs[n]
			n++
		}
	}
	sorted := xs[:n]
	sort.Float64s(sorted)
	return summarizeSorted(sorted, len(xs)-n, percentiles)
}

// summarizeSorted describes sorted, the finite values in ascending order,
// of which dropped non-finite ones were left out.
func summarizeSorted(sorted []float64, dropped int, percentiles []float64) Summary {
	mean, ss := meanSS(sorted)
	return summarizeOrdered(len(sorted), dropped, func(i int) float64 { return sorted[i] }, mean, ss, percentiles)
}

// summarizeOrdered describes n finite values, of which dropped non-finite
// ones were left out, from their order statistics (at(i) is the i-th
// smallest; at is called only for those the percentiles, the minimum and
// the maximum need: see percentileRanks), their mean and their sum of
// squared deviations ss (meanSS). Summarize and SummarizeStream share it,
// so that their figures come from one arithmetic.
func summarizeOrdered(n, dropped int, at func(i int) float64, mean, ss float64, percentiles []float64) Summary {
	s := Summary{N: n, Dropped: dropped}
	if s.Dropped > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("%d non-finite value(s) dropped", s.Dropped))
	}
	s.Percentiles = make([]PercentileValue, len(percentiles))
	for i, p := range percentiles {
		s.Percentiles[i] = PercentileValue{P: p, Value: percentileAt(n, at, p, p > 0)}
		if !(p >= 0 && p <= 100) {
			s.Warnings = append(s.Warnings, fmt.Sprintf("percentile %g is outside [0, 100]", p))
		}
	}
	if s.N == 0 {
		nan := math.NaN()
		s.Mean, s.Median, s.Std, s.Min, s.Max = nan, nan, nan, nan, nan
		s.Warnings = append(s.Warnings, "no samples")
		return s
	}
	s.Min, s.Max = at(0), at(n-1)
	s.Median = percentileAt(n, at, 50, true)
	s.Mean, s.Std = mean, math.NaN()
	if s.N == 1 {
		s.Warnings = append(s.Warnings, "one sample: no standard deviation")
	} else {
		s.Std = math.Sqrt(ss / float64(n-1))
	}
	return s
}

// Percentile returns the p-th percentile (p in [0, 100]) of sorted, which
// must be in ascending order, interpolating linearly between the two nearest
// order statistics: with h = (n-1)*p/100, the value is
// x[floor(h)] + (h-floor(h))*(x[floor(h)+1]-x[floor(h)]). This is numpy's
// default (Hyndman–Fan type 7): p = 0 is the minimum, p = 100 the maximum.
// It returns NaN for an empty slice or p outside [0, 100].
func Percentile(sorted []float64, p float64) float64 {
	n := len(sorted)
	if n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	type7 := p > 0 && !slices.ContainsFunc(sorted, math.IsNaN)
	return percentileAt(n, func(i int) float64 { return sorted[i] }, p, type7)
}

// percentileAt is Percentile of n values in ascending order, the i-th
// smallest being at(i); type7 says that none is NaN and p > 0, where
// montanaflynn/stats' arithmetic applies.
func percentileAt(n int, at func(i int) float64, p float64, type7 bool) float64 {
	if n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	if type7 {
		// montanaflynn/stats' Percentile, whose arithmetic the figures have
		// always followed to the last bit, on the values as given: the
		// library sorts a copy of them on every call, which at the end of a
		// long run allocated the whole series once per percentile.
		if v := sortedPercentileType7(n, at, p); !math.IsInf(v, 0) && !math.IsNaN(v) {
			return v
		}
	}
	h := float64(n-1) * p / 100
	lo := int(math.Floor(h))
	if lo >= n-1 {
		return at(n - 1)
	}
	frac := h - float64(lo)
	a, b := at(lo), at(lo+1)
	if d := b - a; !math.IsInf(d, 0) {
		return a + frac*d
	}
	// b-a overflowed (values near ±MaxFloat64): the weighted form cannot.
	return (1-frac)*a + frac*b
}

// percentileRanks appends to ranks those of the order statistics that
// percentileAt reads for percentile p of n values (each at most twice).
func percentileRanks(ranks []int, n int, p float64) []int {
	if n == 0 || !(p >= 0 && p <= 100) {
		return ranks
	}
	k := int((p / 100) * float64(n-1))
	lo := int(math.Floor(float64(n-1) * p / 100))
	for _, r := range []int{k, k + 1, lo, lo + 1, n - 1} {
		if r >= 0 && r < n {
			ranks = append(ranks, r)
		}
	}
	return ranks
}

// sortedPercentileType7 is montanaflynn/stats' Percentile (v0.14.0) for
// sorted input without NaN and p in (0, 100], without its sorted copy: the
// i-th value is at(i).
func sortedPercentileType7(n int, at func(i int) float64, p float64) float64 {
	rank := (p / 100) * float64(n-1)
	k := int(rank)
	f := rank - float64(k)
	if k+1 >= n || f == 0 {
		return at(k)
	}
	a, b := at(k), at(k+1)
	if b == a {
		return a
	}
	delta := b - a
	if math.IsInf(delta, 1) {
		return (1-f)*a + f*b
	}
	return a + f*delta
}

// Percentile returns the value of percentile p if it was requested.
func (s Summary) Percentile(p float64) (float64, bool) {
	i := slices.IndexFunc(s.Percentiles, func(v PercentileValue) bool { return v.P == p })
	if i < 0 {
		return math.NaN(), false
	}
	return s.Percentiles[i].Value, true
}

// meanStd returns the mean and the sample standard deviation (NaN for one
// value).
func meanStd(xs []float64) (mean, std float64) {
	mean, ss := meanSS(xs)
	if len(xs) < 2 {
		return mean, math.NaN()
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// PopulationStd is the population standard deviation sqrt(Σ(x-mean)²/n),
// numpy.std with its default ddof=0 (the vLLM-Omni benchmark's std_*); NaN
// for no values. Summary.Std is the sample one (n-1).
func PopulationStd(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	_, ss := meanSS(xs)
	return math.Sqrt(ss / float64(len(xs)))
}

// meanSS returns the mean and the sum of squared deviations from it, in two
// passes with the compensated second pass (Chan, Golub and LeVeque), which
// keeps full precision when the spread is tiny compared with the mean, as
// with latencies of 1.000123 s.
func meanSS(xs []float64) (mean, ss float64) {
	n := float64(len(xs))
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean = sum / n
	var comp float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
		comp += d
	}
	ss -= comp * comp / n
	if ss < 0 { // rounding on constant input
		ss = 0
	}
	return mean, ss
}

// Float is a float64 that marshals to JSON as a number, or as null when it is
// NaN or infinite (which encoding/json refuses). Reports use it so an
// undefined statistic reads as "no value" instead of failing the output.
type Float float64

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

// MarshalJSON writes the summary with snake_case field names; undefined
// statistics (NaN) become null. Fields: n, mean, median, std, min, max,
// percentiles ([{p, value}]), dropped, warnings.
func (s Summary) MarshalJSON() ([]byte, error) {
	type pv struct {
		P     Float `json:"p"`
		Value Float `json:"value"`
	}
	out := struct {
		N           int      `json:"n"`
		Mean        Float    `json:"mean"`
		Median      Float    `json:"median"`
		Std         Float    `json:"std"`
		Min         Float    `json:"min"`
		Max         Float    `json:"max"`
		Percentiles []pv     `json:"percentiles"`
		Dropped     int      `json:"dropped,omitempty"`
		Warnings    []string `json:"warnings,omitempty"`
	}{
		N: s.N, Mean: Float(s.Mean), Median: Float(s.Median), Std: Float(s.Std),
		Min: Float(s.Min), Max: Float(s.Max), Percentiles: make([]pv, len(s.Percentiles)),
		Dropped: s.Dropped, Warnings: s.Warnings,
	}
	for i, p := range s.Percentiles {
		out.Percentiles[i] = pv{P: Float(p.P), Value: Float(p.Value)}
	}
	return json.Marshal(out)
}

// PercentileSelect is Percentile for xs in any order: it finds the one or
// two order statistics the percentile lies between by selection, in linear
// expected time, rather than by sorting, and returns the value Percentile
// returns on a sorted copy. It reorders xs, whose values must be finite.
// One percentile of a whole run's events (the stamp-delay p99 of the
// client's health check) then costs no O(n log n) sort.
func PercentileSelect(xs []float64, p float64) float64 {
	n := len(xs)
	if n == 0 || !(p >= 0 && p <= 100) {
		return math.NaN()
	}
	// The rank as montanaflynn/stats computes it: Percentile returns its
	// value whenever that is finite.
	rank := (p / 100) * float64(n-1)
	k := min(int(rank), n-1)
	selectKth(xs, k)
	a := xs[k]
	f := rank - float64(k)
	if p == 0 || k+1 == n || f == 0 {
		return a
	}
	b := slices.Min(xs[k+1:]) // the next order statistic
	if b == a {
		return a
	}
	if v := a + f*(b-a); !math.IsInf(v, 0) && !math.IsNaN(v) {
		return v
	}
	// Values near ±MaxFloat64, where the difference overflows: rare enough
	// to take Percentile's own way.
	slices.Sort(xs)
	return Percentile(xs, p)
}

// selectKth reorders xs so that xs[k] is the value a sort would put there,
// with no greater value before it and no smaller one after it (Hoare's
// selection with a median-of-three pivot). Past 2*log2(n) rounds, which
// only adversarial orders reach, it sorts what is left, so the worst case
// stays O(n log n).
func selectKth(xs []float64, k int) {
	lo, hi := 0, len(xs)-1
	for budget := 2 * bits.Len(uint(len(xs))); hi > lo; budget-- {
		if budget == 0 {
			slices.Sort(xs[lo : hi+1])
			return
		}
		mid := lo + (hi-lo)/2
		if xs[mid] < xs[lo] {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if xs[hi] < xs[lo] {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if xs[hi] < xs[mid] {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for xs[i] < pivot {
				i++
			}
			for xs[j] > pivot {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		// Now xs[lo..j] <= pivot <= xs[i..hi], and any between are pivot.
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}
