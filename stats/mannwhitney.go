package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"

	mstats "github.com/aclements/go-moremath/stats"
)

// MannWhitneyMethod names how a Mann–Whitney p-value was computed.
type MannWhitneyMethod string

// The methods go-moremath chooses between (benchstat's test).
const (
	// MWExact: the exact distribution of U, without ties (both arms of at
	// most mstats.MannWhitneyExactLimit values, 50).
	MWExact MannWhitneyMethod = "exact"
	// MWExactTies: the exact distribution of U given the ties (Klotz; both
	// arms of at most mstats.MannWhitneyTiesExactLimit values, 25).
	MWExactTies MannWhitneyMethod = "exact with ties"
	// MWNormal: the normal approximation of U with the tie correction of
	// its variance and a continuity correction of 1/2.
	MWNormal MannWhitneyMethod = "normal approximation with tie and continuity corrections"
	// MWAllEqual: every value in both arms is the same; nothing to rank,
	// p is 1.
	MWAllEqual MannWhitneyMethod = "none (all values equal)"
)

// MannWhitneyP returns the two-sided p-value of the Mann–Whitney U test of a
// against b; see MannWhitney.
func MannWhitneyP(a, b []float64) (float64, error) {
	p, _, err := MannWhitney(a, b)
	return p, err
}

// MannWhitney returns the two-sided p-value of the Mann–Whitney U test of a
// against b and the method that computed it (go-moremath, the test
// benchstat uses: the exact distribution for small samples, with ties
// accounted for when there are any, the normal approximation with tie and
// continuity corrections beyond mstats.MannWhitneyExactLimit values, or
// mstats.MannWhitneyTiesExactLimit with ties). Each arm needs one or more
// finite values. When every value in both arms is the same the test has
// nothing to rank; the p-value is then 1 (no evidence of a difference), not
// an error.
func MannWhitney(a, b []float64) (float64, MannWhitneyMethod, error) {
	if err := checkArms(a, b, 1); err != nil {
		return math.NaN(), "", fmt.Errorf("mann-whitney u test: %w", err)
	}
	res, err := mstats.MannWhitneyUTest(a, b, mstats.LocationDiffers)
	if errors.Is(err, mstats.ErrSamplesEqual) {
		return 1, MWAllEqual, nil
	}
	if err != nil {
		return math.NaN(), "", fmt.Errorf("stats: mann-whitney u test: %w", err)
	}
	return math.Min(res.P, 1), mannWhitneyMethod(a, b), nil
}

// mannWhitneyMethod repeats go-moremath's choice of method (which it does
// not return): ties are any repeated value in the merged sample.
func mannWhitneyMethod(a, b []float64) MannWhitneyMethod {
	merged := append(append(make([]float64, 0, len(a)+len(b)), a...), b...)
	sort.Float64s(merged)
	ties := false
	for i := 1; i < len(merged); i++ {
		if merged[i] == merged[i-1] {
			ties = true
			break
		}
	}
	small := func(limit int) bool { return len(a) <= limit && len(b) <= limit }
	switch {
	case !ties && small(mstats.MannWhitneyExactLimit):
		return MWExact
	case ties && small(mstats.MannWhitneyTiesExactLimit):
		return MWExactTies
	}
	return MWNormal
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
