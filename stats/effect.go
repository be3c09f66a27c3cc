package stats

import (
	"fmt"
	"math"
)

// CohensD returns Cohen's d of B relative to A:
// (mean(B)-mean(A)) / s_p with the pooled standard deviation
// s_p = sqrt(((nA-1)var(A) + (nB-1)var(B)) / (nA+nB-2)).
// Positive means B is larger. With s_p = 0 it is 0 for equal means and ±Inf
// otherwise. Each arm needs two or more finite values.
func CohensD(a, b []float64) (float64, error) {
	if err := checkArms(a, b, 2); err != nil {
		return math.NaN(), fmt.Errorf("cohen's d: %w", err)
	}
	ma, sa := meanStd(a)
	mb, sb := meanStd(b)
	return cohensD(ma, sa*sa, len(a), mb, sb*sb, len(b)), nil
}

// HedgesG returns Hedges' g of B relative to A: Cohen's d times the exact
// small-sample bias correction
// J(df) = Γ(df/2) / (sqrt(df/2) Γ((df-1)/2)), df = nA+nB-2
// (Hedges 1981; the familiar 1 - 3/(4(nA+nB)-9) approximates it to within
// 0.1% once df >= 8).
func HedgesG(a, b []float64) (float64, error) {
	d, err := CohensD(a, b)
	if err != nil {
		return math.NaN(), fmt.Errorf("hedges' g: %w", err)
	}
	return d * HedgesJ(len(a)+len(b)-2), nil
}

// HedgesJ is Hedges' exact bias correction for df degrees of freedom
// (df >= 2); computed through log-gamma so large df do not overflow.
func HedgesJ(df int) float64 {
	if df < 2 {
		return math.NaN()
	}
	h := float64(df) / 2
	a, _ := math.Lgamma(h)
	b, _ := math.Lgamma(h - 0.5)
	return math.Exp(a - b - 0.5*math.Log(h))
}

func cohensD(ma, va float64, na int, mb, vb float64, nb int) float64 {
	pooled := math.Sqrt((float64(na-1)*va + float64(nb-1)*vb) / float64(na+nb-2))
	diff := mb - ma
	if pooled == 0 {
		if diff == 0 {
			return 0
		}
		return math.Inf(sign(diff))
	}
	return diff / pooled
}
