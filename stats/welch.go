package stats

import (
	"fmt"
	"math"
)

// WelchResult is Welch's unequal-variance two-sample t-test of mean(A) against
// mean(B), two-sided, as scipy.stats.ttest_ind(a, b, equal_var=False).
type WelchResult struct {
	T  float64 // (mean(A)-mean(B)) / SE
	DF float64 // Welch–Satterthwaite degrees of freedom
	P  float64 // two-sided p-value

	Diff float64 // mean(A) - mean(B)
	SE   float64 // sqrt(var(A)/nA + var(B)/nB), sample variances

	// CILow and CIHigh bound mean(A)-mean(B) at level Confidence:
	// Diff ± t_{(1+Confidence)/2, DF} * SE.
	Confidence    float64
	CILow, CIHigh float64
}

// Welch runs Welch's t-test on a and b with a two-sided confidence interval
// at level confidence (for example 0.95). Each arm needs two or more finite
// values; the error names the arm that falls short.
//
// When both arms have zero variance SE is 0 and t is undefined; the result is
// then defined as follows (DF is NaN in both cases, since Welch–Satterthwaite
// is 0/0):
//   - equal means: T NaN, P 1, CI [0, 0] (no evidence of any difference);
//   - different means: T ±Inf (sign of mean(A)-mean(B)), P 0, CI [Diff, Diff]
//     (every value in A differs from every value in B by exactly Diff).
func Welch(a, b []float64, confidence float64) (WelchResult, error) {
	if err := checkArms(a, b, 2); err != nil {
		return WelchResult{}, fmt.Errorf("welch t-test: %w", err)
	}
	if !(confidence > 0 && confidence < 1) {
		return WelchResult{}, fmt.Errorf("stats: welch t-test: confidence %v is not in (0, 1)", confidence)
	}
	ma, sa := meanStd(a)
	mb, sb := meanStd(b)
	return welch(ma, sa*sa, len(a), mb, sb*sb, len(b), confidence), nil
}

// welch computes the test from the moments of the two arms (n >= 2 each).
func welch(ma, va float64, na int, mb, vb float64, nb int, confidence float64) WelchResult {
	r := WelchResult{Diff: ma - mb, Confidence: confidence}
	qa, qb := va/float64(na), vb/float64(nb)
	r.SE = math.Sqrt(qa + qb)
	if r.SE == 0 {
		r.DF = math.NaN()
		r.CILow, r.CIHigh = r.Diff, r.Diff
		if r.Diff == 0 {
			r.T, r.P = math.NaN(), 1
		} else {
			r.T, r.P = math.Inf(sign(r.Diff)), 0
		}
		return r
	}
	r.T = r.Diff / r.SE
	r.DF = (qa + qb) * (qa + qb) / (qa*qa/float64(na-1) + qb*qb/float64(nb-1))
	// Survival of |t| directly, not 1-CDF, so tiny p-values keep their digits.
	r.P = math.Min(1, 2*tSurvival(math.Abs(r.T), r.DF))
	half := tQuantile(0.5+confidence/2, r.DF) * r.SE
	r.CILow, r.CIHigh = r.Diff-half, r.Diff+half
	return r
}

func sign(x float64) int {
	if x < 0 {
		return -1
	}
	return 1
}
