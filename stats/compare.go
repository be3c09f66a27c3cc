package stats

import (
	"fmt"
	"math"
)

// Test names the two-sample test that decides significance.
type Test int

const (
	// TestWelch decides with Welch's t-test on the means. It is the default
	// because the reported delta, confidence interval and MDE are all about
	// means, so "significant" and "by how much" speak of the same quantity.
	TestWelch Test = iota
	// TestMannWhitney decides with the Mann–Whitney U test (benchstat's
	// choice), more robust to heavy tails and outliers, but testing whether
	// one arm tends to be larger rather than whether the means differ.
	TestMannWhitney
)

// String returns "welch" or "utest".
func (t Test) String() string {
	switch t {
	case TestWelch:
		return "welch"
	case TestMannWhitney:
		return "utest"
	}
	return fmt.Sprintf("Test(%d)", int(t))
}

// ParseTest parses "welch" or "utest" (also "mann-whitney").
func ParseTest(s string) (Test, error) {
	switch s {
	case "welch", "t", "ttest":
		return TestWelch, nil
	case "utest", "u", "mann-whitney", "mannwhitney":
		return TestMannWhitney, nil
	}
	return 0, fmt.Errorf("unknown test %q (want welch or utest)", s)
}

// Options holds every threshold of a comparison in one place. Zero values
// take the documented defaults, so adding a field later breaks no caller.
type Options struct {
	Alpha       float64   // significance level; default 0.05. The Welch CI is at 1-Alpha.
	Power       float64   // power for the MDE; default 0.8
	Test        Test      // which test decides Significant; default TestWelch
	Percentiles []float64 // percentiles in each Summary; nil means DefaultPercentiles()
}

func (o Options) withDefaults() Options {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Power == 0 {
		o.Power = 0.8
	}
	if o.Percentiles == nil {
		o.Percentiles = DefaultPercentiles()
	}
	return o
}

// Comparison is everything omnibench says about arm B against arm A.
type Comparison struct {
	A, B Summary

	Welch        WelchResult // about mean(A)-mean(B), CI at 1-Alpha
	MannWhitneyP float64
	// MannWhitneyMethod says how MannWhitneyP was computed (exact, exact
	// with ties, or the normal approximation).
	MannWhitneyMethod MannWhitneyMethod

	// DeltaPct is B relative to A: 100*(mean(B)-mean(A))/|mean(A)|
	// (NaN when mean(A) is 0). Positive means B is larger.
	DeltaPct float64
	// Effect sizes of B relative to A (positive when B is larger).
	CohensD, HedgesG float64
	// MDE is the smallest difference of means detectable with Power at
	// Alpha (see MDE), from the Welch SE and df; MDEPct is it as a
	// percentage of |mean(A)|.
	MDE, MDEPct float64

	// Lag-1 autocorrelation of each arm in the order given and the
	// effective sample sizes it implies (see Lag1, EffectiveN).
	Lag1A, Lag1B float64
	NEffA, NEffB float64

	Alpha       float64
	Power       float64
	Test        Test
	P           float64 // p-value of Test (Welch.P or MannWhitneyP)
	Significant bool    // P < Alpha
	Warnings    []string
}

// Compare compares b against a at significance level alpha (0 means 0.05)
// with the default Options. See CompareWith.
func Compare(a, b []float64, alpha float64) (Comparison, error) {
	return CompareWith(a, b, Options{Alpha: alpha})
}

// CompareWith compares b against a. Both arms need two or more values, all
// finite; the error names the arm (A or B) and wraps ErrTooFewSamples or
// ErrNonFinite. The values should be in measurement order: the lag-1
// autocorrelation is computed over that order.
//
// Degenerate cases are results with warnings, not errors:
//   - every value in both arms equal: P 1, Significant false, warning
//     "all samples equal";
//   - zero variance in both arms but different means: Welch T ±Inf, P 0,
//     Significant true (under Welch), warning "zero variance in both arms".
func CompareWith(a, b []float64, opts Options) (Comparison, error) {
	opts = opts.withDefaults()
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return Comparison{}, fmt.Errorf("stats: alpha %v is not in (0, 1)", opts.Alpha)
	}
	if !(opts.Power > 0 && opts.Power < 1) {
		return Comparison{}, fmt.Errorf("stats: power %v is not in (0, 1)", opts.Power)
	}
	if err := checkArms(a, b, 2); err != nil {
		return Comparison{}, fmt.Errorf("compare: %w", err)
	}
	c := Comparison{
		A:     Summarize(a, opts.Percentiles),
		B:     Summarize(b, opts.Percentiles),
		Alpha: opts.Alpha,
		Power: opts.Power,
		Test:  opts.Test,
	}
	for _, w := range c.A.Warnings {
		c.warn("A: %s", w)
	}
	for _, w := range c.B.Warnings {
		c.warn("B: %s", w)
	}
	na, nb := c.A.N, c.B.N
	ma, va := c.A.Mean, c.A.Std*c.A.Std
	mb, vb := c.B.Mean, c.B.Std*c.B.Std

	c.Welch = welch(ma, va, na, mb, vb, nb, 1-opts.Alpha)
	p, method, err := MannWhitney(a, b)
	if err != nil {
		return Comparison{}, fmt.Errorf("compare: %w", err)
	}
	c.MannWhitneyP, c.MannWhitneyMethod = p, method

	if ma == 0 {
		c.DeltaPct, c.MDEPct = math.NaN(), math.NaN()
		c.warn("mean of A is 0: relative change undefined")
	} else {
		c.DeltaPct = 100 * (mb - ma) / math.Abs(ma)
	}
	c.CohensD = cohensD(ma, va, na, mb, vb, nb)
	c.HedgesG = c.CohensD * HedgesJ(na+nb-2)
	c.MDE = MDE(c.Welch.SE, c.Welch.DF, opts.Alpha, opts.Power)
	if ma != 0 {
		c.MDEPct = 100 * c.MDE / math.Abs(ma)
	}

	c.Lag1A, c.Lag1B = Lag1(a), Lag1(b)
	c.NEffA, c.NEffB = EffectiveN(na, c.Lag1A), EffectiveN(nb, c.Lag1B)
	c.warnNEff("A", na, c.NEffA, c.Lag1A)
	c.warnNEff("B", nb, c.NEffB, c.Lag1B)

	if c.Welch.SE == 0 {
		if c.Welch.Diff == 0 {
			c.warn("all samples equal")
		} else {
			c.warn("zero variance in both arms: t is infinite, the difference is exact")
		}
	}
	switch opts.Test {
	case TestMannWhitney:
		c.P = c.MannWhitneyP
		if minP := MinMannWhitneyP(na, nb); minP >= opts.Alpha {
			c.warn("too few samples: with n=%d and %d the Mann-Whitney p cannot go below %.3g (alpha %g)", na, nb, minP, opts.Alpha)
		}
	default:
		c.P = c.Welch.P
	}
	c.Significant = c.P < opts.Alpha
	return c, nil
}

func (c *Comparison) warn(format string, args ...any) {
	c.Warnings = append(c.Warnings, fmt.Sprintf(format, args...))
}

// warnNEff warns when serial correlation shrinks an arm's effective sample
// size below NEffWarnFraction of its length.
func (c *Comparison) warnNEff(arm string, n int, neff, r1 float64) {
	if neff < NEffWarnFraction*float64(n) {
		c.warn("%s: effective sample size %.1f of %d (lag-1 autocorr. %.2f): p-values too small", arm, neff, n, r1)
	}
}
