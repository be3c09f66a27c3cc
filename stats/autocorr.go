package stats

import "math"

// NEffWarnFraction is the threshold below which Compare warns about serial
// correlation: an effective sample size under half the actual one
// (equivalently a lag-1 autocorrelation above 1/3) means the p-values and
// intervals, which assume independent samples, are markedly too optimistic.
const NEffWarnFraction = 0.5

// Lag1 returns the lag-1 autocorrelation of the sequence xs (in the order
// measured), with the standard ACF estimator
//
//	r1 = Σ_{i<n} (x_i - m)(x_{i+1} - m) / Σ_i (x_i - m)²
//
// (statsmodels' acf). It returns NaN for fewer than two values or a constant
// sequence, where it is undefined.
func Lag1(xs []float64) float64 {
	n := len(xs)
	if n < 2 {
		return math.NaN()
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(n)
	var num, den float64
	for i, x := range xs {
		d := x - m
		den += d * d
		if i+1 < n {
			num += d * (xs[i+1] - m)
		}
	}
	if den == 0 {
		return math.NaN()
	}
	return num / den
}

// EffectiveN returns the effective sample size of n serially correlated
// values with lag-1 autocorrelation r1, assuming an AR(1) process:
// n_eff = n(1-r1)/(1+r1), clamped to [1, n]. Negative correlation would give
// more than n; that is clamped to n. A NaN r1 (undefined) gives n.
func EffectiveN(n int, r1 float64) float64 {
	fn := float64(n)
	if n < 1 {
		return 0
	}
	if math.IsNaN(r1) || r1 <= -1 {
		return fn
	}
	neff := fn * (1 - r1) / (1 + r1)
	return math.Max(1, math.Min(fn, neff))
}
