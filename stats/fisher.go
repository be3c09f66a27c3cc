package stats

import (
	"fmt"
	"math"
)

// fisherTieTolerance is the relative tolerance within which a table counts
// as exactly as probable as the observed one (R's fisher.test uses the
// same). Mirror-image tables have equal probabilities that rounding would
// otherwise split; real differences between tables are far larger.
const fisherTieTolerance = 1e-7

// FisherExact returns the two-sided p-value of Fisher's exact test of the
// 2x2 table
//
//	a b
//	c d
//
// (rows: the two arms; columns: failed, succeeded, say), as
// scipy.stats.fisher_exact(table, alternative="two-sided"): with the margins
// fixed, the number in the top-left cell is hypergeometric, and p is the
// total probability of every table at most as probable as the observed one.
// A table with an empty margin (all requests failed or none did, or an empty
// row) gives 1. Counts must not be negative.
//
// The probabilities are computed as log-ratios to the most probable table
// (the mode), one exact ratio per step, so p keeps about 12 significant
// digits even for tiny values and tens of thousands of requests, and does
// not underflow above 1e-300.
func FisherExact(a, b, c, d int) (float64, error) {
	if a < 0 || b < 0 || c < 0 || d < 0 {
		return math.NaN(), fmt.Errorf("stats: fisher's exact test: negative count in table [[%d %d] [%d %d]]", a, b, c, d)
	}
	r1, r2, c1 := a+b, c+d, a+c
	lo, hi := max(0, c1-r2), min(r1, c1)
	if lo == hi {
		return 1, nil // one table only: a margin is empty
	}
	// lw[k-lo] = log(pmf(k)/pmf(lo)) by the ratio
	// pmf(k+1)/pmf(k) = (r1-k)(c1-k) / ((k+1)(r2-c1+k+1)).
	lw := make([]float64, hi-lo+1)
	for k := lo; k < hi; k++ {
		num := float64(r1-k) * float64(c1-k)
		den := float64(k+1) * float64(r2-c1+k+1)
		lw[k-lo+1] = lw[k-lo] + math.Log(num/den)
	}
	limit := lw[a-lo] + math.Log1p(fisherTieTolerance)
	// p = Σ_{lw <= limit} e^lw / Σ e^lw, each sum scaled by its largest
	// term so that neither overflows nor, for a tiny p, underflows.
	top, topTail := math.Inf(-1), math.Inf(-1)
	for _, l := range lw {
		top = math.Max(top, l)
		if l <= limit {
			topTail = math.Max(topTail, l)
		}
	}
	var all, tail float64
	for _, l := range lw {
		all += math.Exp(l - top)
		if l <= limit {
			tail += math.Exp(l - topTail)
		}
	}
	return math.Min(1, math.Exp(topTail-top)*tail/all), nil
}

// FailureRates compares the failure rates of two arms with Fisher's exact
// test: failedA of totalA requests failed in A, failedB of totalB in B.
type FailureRates struct {
	FailedA, TotalA int
	FailedB, TotalB int
	RateA, RateB    float64 // failed/total; NaN for an arm with no requests
	P               float64 // two-sided Fisher exact p-value
}

// CompareFailures tests whether the arms' failure rates differ (Fisher's
// exact test, two-sided). Counts must satisfy 0 <= failed <= total.
func CompareFailures(failedA, totalA, failedB, totalB int) (FailureRates, error) {
	if failedA < 0 || failedA > totalA || failedB < 0 || failedB > totalB {
		return FailureRates{}, fmt.Errorf("stats: failure rates: want 0 <= failed <= total, got A %d of %d, B %d of %d", failedA, totalA, failedB, totalB)
	}
	p, err := FisherExact(failedA, totalA-failedA, failedB, totalB-failedB)
	if err != nil {
		return FailureRates{}, err
	}
	rate := func(f, t int) float64 {
		if t == 0 {
			return math.NaN()
		}
		return float64(f) / float64(t)
	}
	return FailureRates{FailedA: failedA, TotalA: totalA, FailedB: failedB, TotalB: totalB,
		RateA: rate(failedA, totalA), RateB: rate(failedB, totalB), P: p}, nil
}

// Differ reports whether the rates differ beyond chance at level alpha.
func (f FailureRates) Differ(alpha float64) bool { return f.P < alpha }

// BWorse reports whether B fails more often than A beyond chance at alpha.
func (f FailureRates) BWorse(alpha float64) bool { return f.Differ(alpha) && f.RateB > f.RateA }
