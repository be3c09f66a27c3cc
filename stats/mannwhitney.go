package stats

import (
	"errors"
	"fmt"
	"math"

	mstats "github.com/aclements/go-moremath/stats"
)

// MannWhitneyP returns the two-sided p-value of the Mann–Whitney U test of a
// against b (go-moremath, the test benchstat uses: exact distribution for
// small samples, normal approximation with tie and continuity corrections
// beyond 50 values, or 25 with ties). Each arm needs one or more finite
// values. When every value in both arms is the same the test has nothing to
// rank; the p-value is then 1 (no evidence of a difference), not an error.
func MannWhitneyP(a, b []float64) (float64, error) {
	if err := checkArms(a, b, 1); err != nil {
		return math.NaN(), fmt.Errorf("mann-whitney u test: %w", err)
	}
	res, err := mstats.MannWhitneyUTest(a, b, mstats.LocationDiffers)
	if errors.Is(err, mstats.ErrSamplesEqual) {
		return 1, nil
	}
	if err != nil {
		return math.NaN(), fmt.Errorf("stats: mann-whitney u test: %w", err)
	}
	return math.Min(res.P, 1), nil
}

// MinMannWhitneyP is the smallest two-sided p-value the exact Mann–Whitney
// test can produce for arms of na and nb values without ties:
// 2 / C(na+nb, na). With 3 and 3 values it is 0.1, so no difference can ever
// be significant at 0.05; Compare warns about such arms.
func MinMannWhitneyP(na, nb int) float64 {
	if na < 1 || nb < 1 {
		return 1
	}
	lc := lchoose(na+nb, na)
	return math.Min(1, 2*math.Exp(-lc))
}

// lchoose is log C(n, k).
func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
