package stats

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// closeTo reports whether got agrees with want to rel relative error (absolute
// error for want == 0).
func closeTo(got, want, rel float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	if math.IsInf(want, 0) {
		return got == want
	}
	if want == 0 {
		return math.Abs(got) <= rel
	}
	return math.Abs(got-want) <= rel*math.Abs(want)
}

// sig9 is the tolerance for "nine significant digits" (the brief asks for
// at least eight; go-notes values are given to ten).
const sig9 = 5e-10

func check(t *testing.T, name string, got, want, rel float64) {
	t.Helper()
	if !closeTo(got, want, rel) {
		t.Errorf("%s = %.12g, want %.12g (rel tol %g)", name, got, want, rel)
	}
}

func TestPercentileNumpyType7(t *testing.T) {
	// Hand computation, numpy's default: h = (n-1)p/100, value =
	// x[floor h] + frac(h)*(x[floor h + 1] - x[floor h]).
	// xs = [15 20 35 40 50], n-1 = 4:
	//   p=40: h=1.6 -> 20 + 0.6*15 = 29
	//   p=95: h=3.8 -> 40 + 0.8*10 = 48
	//   p=25: h=1.0 -> 20; p=50: h=2 -> 35; p=0 -> 15 (min); p=100 -> 50 (max)
	xs := []float64{15, 20, 35, 40, 50}
	for _, c := range []struct{ p, want float64 }{
		{0, 15}, {25, 20}, {40, 29}, {50, 35}, {95, 48}, {100, 50},
	} {
		check(t, "Percentile", Percentile(xs, c.p), c.want, 1e-15)
	}
	// [1 2 3 4] (n-1 = 3): p=10: h=0.3 -> 1.3; p=50: h=1.5 -> 2.5; p=99: h=2.97 -> 3.97.
	ys := []float64{1, 2, 3, 4}
	check(t, "p10", Percentile(ys, 10), 1.3, 1e-15)
	check(t, "p50", Percentile(ys, 50), 2.5, 1e-15)
	check(t, "p99", Percentile(ys, 99), 3.97, 1e-15)
	for _, p := range []float64{-1, 100.5, math.NaN()} {
		if v := Percentile(ys, p); !math.IsNaN(v) {
			t.Errorf("Percentile(p=%v) = %v, want NaN", p, v)
		}
	}
	if v := Percentile(nil, 50); !math.IsNaN(v) {
		t.Errorf("Percentile(empty) = %v, want NaN", v)
	}
	check(t, "single", Percentile([]float64{7}, 99), 7, 0)
}

func TestSummarize(t *testing.T) {
	// [2 4 4 4 5 5 7 9] unsorted: mean 40/8 = 5; squared deviations
	// 9+1+1+1+0+0+4+16 = 32; sample variance 32/7; std sqrt(32/7) = 2.138089935299395.
	// Median (h = 3.5): 4 + 0.5*(5-4) = 4.5. p90: h = 6.3 -> 7 + 0.3*2 = 7.6.
	xs := []float64{9, 4, 2, 5, 4, 7, 4, 5}
	s := Summarize(xs, []float64{90, 0, 100})
	if s.N != 8 || s.Dropped != 0 || len(s.Warnings) != 0 {
		t.Fatalf("N=%d Dropped=%d Warnings=%v", s.N, s.Dropped, s.Warnings)
	}
	check(t, "Mean", s.Mean, 5, 1e-15)
	check(t, "Std", s.Std, 2.138089935299395, 1e-14)
	check(t, "Median", s.Median, 4.5, 1e-15)
	check(t, "Min", s.Min, 2, 0)
	check(t, "Max", s.Max, 9, 0)
	if v, ok := s.Percentile(90); !ok || !closeTo(v, 7.6, 1e-15) {
		t.Errorf("p90 = %v %v, want 7.6", v, ok)
	}
	if v, _ := s.Percentile(0); v != 2 {
		t.Errorf("p0 = %v, want min 2", v)
	}
	if v, _ := s.Percentile(100); v != 9 {
		t.Errorf("p100 = %v, want max 9", v)
	}
	if _, ok := s.Percentile(50); ok {
		t.Error("p50 was not requested but is reported")
	}
	if xs[0] != 9 {
		t.Error("Summarize modified its input")
	}
}

func TestSummarizePrecision(t *testing.T) {
	// Large offset, unit spread: mean 1e9+2, sample std exactly 1.
	s := Summarize([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3}, nil)
	check(t, "Mean", s.Mean, 1e9+2, 1e-15)
	check(t, "Std", s.Std, 1, 1e-12)
}

func TestSummarizeEdgeCases(t *testing.T) {
	empty := Summarize(nil, []float64{50})
	if empty.N != 0 || !math.IsNaN(empty.Mean) || !math.IsNaN(empty.Median) || !math.IsNaN(empty.Std) ||
		!math.IsNaN(empty.Min) || !math.IsNaN(empty.Max) || !math.IsNaN(empty.Percentiles[0].Value) {
		t.Errorf("empty summary = %+v, want N 0 and NaNs", empty)
	}
	if !hasWarning(empty.Warnings, "no samples") {
		t.Errorf("empty warnings = %v", empty.Warnings)
	}

	one := Summarize([]float64{3}, nil)
	if one.N != 1 || one.Mean != 3 || one.Median != 3 || !math.IsNaN(one.Std) || !hasWarning(one.Warnings, "one sample") {
		t.Errorf("one-value summary = %+v", one)
	}

	// NaN and ±Inf are dropped and counted.
	d := Summarize([]float64{1, math.NaN(), 3, math.Inf(1), math.Inf(-1)}, nil)
	if d.N != 2 || d.Dropped != 3 || d.Mean != 2 || d.Max != 3 || !hasWarning(d.Warnings, "3 non-finite") {
		t.Errorf("summary with non-finite = %+v", d)
	}

	bad := Summarize([]float64{1, 2}, []float64{101})
	if !math.IsNaN(bad.Percentiles[0].Value) || !hasWarning(bad.Warnings, "outside [0, 100]") {
		t.Errorf("bad percentile summary = %+v", bad)
	}
}

func TestSummaryJSON(t *testing.T) {
	b, err := json.Marshal(Summarize(nil, []float64{50}))
	if err != nil {
		t.Fatalf("marshal empty summary: %v", err)
	}
	want := `{"n":0,"mean":null,"median":null,"std":null,"min":null,"max":null,"percentiles":[{"p":50,"value":null}],"warnings":["no samples"]}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
	b, err = json.Marshal(Summarize([]float64{1, 2, 3}, []float64{50}))
	if err != nil {
		t.Fatalf("marshal summary: %v", err)
	}
	want = `{"n":3,"mean":2,"median":2,"std":1,"min":1,"max":3,"percentiles":[{"p":50,"value":2}]}`
	if string(b) != want {
		t.Errorf("JSON = %s\nwant   %s", b, want)
	}
}

// The go-notes reference samples (scipy ttest_ind(equal_var=False) and
// scipy mannwhitneyu exact p-values).
var (
	refX1 = []float64{12.1, 11.8, 13.0, 12.6, 12.2, 11.9, 12.4}
	refY1 = []float64{14.2, 10.1, 16.3, 13.8, 9.7, 15.1, 12.9, 17.4, 11.2, 14.9, 13.3}
	refX2 = []float64{1.02, 0.98, 1.05, 1.01, 0.99}
	refY2 = []float64{1.21, 1.18, 1.25, 1.19, 1.22, 1.20}
)

// largeArms are 5000 values each (Welch df about 9998, where gonum's t
// distribution lost digits), built the same way in the reference script.
func largeArms() (a, b []float64) {
	for i := 0; i < 5000; i++ {
		a = append(a, 1+float64((i*7919)%1000)/1000)
		b = append(b, 1.01+float64((i*104729)%997)/997)
	}
	return a, b
}

// TestWelchReference checks t, df, p, the CI and the MDE against values in
// 50-digit arithmetic from mpmath 1.3.0 (scipy's ttest_ind(equal_var=False)
// definitions; scipy itself is not installed where they were computed):
// moments of the float64 inputs, Welch–Satterthwaite df, p = 2 sf(|t|), the
// CI Diff ± t_{(1+conf)/2} SE and the MDE (t_{1-alpha/2} + t_power) SE, with
// the t distribution from mpmath.betainc and quantiles by mpmath.findroot
// (testdata/welch_ref.py prints them). They agree with the go-notes values
// (scipy, ten digits) where both exist.
func TestWelchReference(t *testing.T) {
	la, lb := largeArms()
	cases := []struct {
		name                           string
		x, y                           []float64
		conf, alpha, power             float64
		tt, df, p, ciLo, ciHi, se, mde float64
	}{
		{"case1", refX1, refY1, 0.95, 0.05, 0.8, -1.6582227991958726, 10.900878224534966, 0.12573829218160618,
			-2.9124993479193155, 0.41120064662061445, 0.7542106834231395, 2.3224252181901898},
		{"case1 99%", refX1, refY1, 0.99, 0.01, 0.9, -1.6582227991958726, 10.900878224534966, 0.12573829218160618,
			-3.5973674196456107, 1.0960687183469097, 0.7542106834231395, 3.3756287515307287},
		{"case2", refX2, refY2, 0.95, 0.05, 0.8, -12.474589556990814, 8.2578779417630634, 1.2064760866936133e-6,
			-0.23479812643412841, -0.16186854023253817, 0.015898986690282442, 0.050572628255382216},
		{"case3", []float64{1, 2, 3}, []float64{5, 5, 5.5, 4.5, 6, 4}, 0.95, 0.05, 0.8, -4.6475800154489003, 3.048780487804878,
			0.018123793259164494, -5.0357906408871765, -0.96420935911282352, 0.64549722436790281, 2.6657976609241663},
		{"large", la, lb, 0.95, 0.05, 0.8, -1.6327620284125557, 9997.9996242294957, 0.10255054598503508,
			-0.020744037013235845, 0.0018904763311896876, 0.0057735176204386724, 0.016176579267880092},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := Welch(c.x, c.y, c.conf)
			if err != nil {
				t.Fatal(err)
			}
			const tol = 1e-12
			check(t, "t", r.T, c.tt, tol)
			check(t, "df", r.DF, c.df, tol)
			check(t, "p", r.P, c.p, tol)
			check(t, "ci low", r.CILow, c.ciLo, tol)
			check(t, "ci high", r.CIHigh, c.ciHi, tol)
			check(t, "se", r.SE, c.se, tol)
			check(t, "mde", MDE(r.SE, r.DF, c.alpha, c.power), c.mde, tol)
		})
	}
}

func TestWelchOneArmConstant(t *testing.T) {
	// A = [1 2 3]: mean 2, var 1; B = [5 5 5]: mean 5, var 0.
	// SE = sqrt(1/3); t = -3/sqrt(1/3) = -5.196152422706632;
	// df = (1/3)² / ((1/3)²/2) = 2 exactly.
	// For 2 df the t distribution has closed forms: survival(t) =
	// 1/2 - t/(2 sqrt(2+t²)), so p = 1 - |t|/sqrt(2+t²) = 1 - sqrt(27/29)
	// = 0.03509871864598468; quantile(q) = (2q-1)/sqrt(2q(1-q)), so
	// t_{0.975,2} = 0.95/sqrt(0.04875) = 4.302652729749464 and the CI is
	// -3 ± 4.302652729749464*sqrt(1/3) = [-5.48413771175033, -0.5158622882496693].
	r, err := Welch([]float64{1, 2, 3}, []float64{5, 5, 5}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "t", r.T, -5.196152422706632, 1e-13)
	check(t, "df", r.DF, 2, 1e-13)
	check(t, "p", r.P, 0.03509871864598468, 1e-13)
	check(t, "ci low", r.CILow, -5.48413771175033, 1e-13)
	check(t, "ci high", r.CIHigh, -0.5158622882496693, 1e-13)
}

func TestWelchErrors(t *testing.T) {
	if _, err := Welch([]float64{1}, []float64{1, 2}, 0.95); !errors.Is(err, ErrTooFewSamples) || !strings.Contains(err.Error(), "arm A") {
		t.Errorf("n=1 in A: err = %v", err)
	}
	if _, err := Welch([]float64{1, 2}, []float64{1, math.NaN()}, 0.95); !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "arm B, sample 1") {
		t.Errorf("NaN in B: err = %v", err)
	}
	if _, err := Welch([]float64{1, 2}, []float64{1, 2}, 1); err == nil {
		t.Error("confidence 1 accepted")
	}
}

func TestMannWhitneyReference(t *testing.T) {
	p, err := MannWhitneyP(refX1, refY1)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "case1 p", p, 0.1508924082, sig9)
	t.Logf("case1: p=%.13g", p)
	p, err = MannWhitneyP(refX2, refY2)
	if err != nil {
		t.Fatal(err)
	}
	// 0.004329004329 = 2/462 = 2/C(11,5): complete separation.
	check(t, "case2 p", p, 0.004329004329, sig9)
	t.Logf("case2: p=%.13g", p)

	p, err = MannWhitneyP([]float64{4, 4, 4}, []float64{4, 4})
	if err != nil || p != 1 {
		t.Errorf("all equal: p=%v err=%v, want 1, nil", p, err)
	}
	if _, err := MannWhitneyP(nil, []float64{1}); !errors.Is(err, ErrTooFewSamples) || !strings.Contains(err.Error(), "arm A") {
		t.Errorf("empty A: err = %v", err)
	}
	// Smallest exact p: 2/C(6,3) = 2/20 = 0.1; 2/C(10,5) = 2/252.
	check(t, "min p 3,3", MinMannWhitneyP(3, 3), 0.1, 1e-12)
	check(t, "min p 5,5", MinMannWhitneyP(5, 5), 2.0/252, 1e-12)
}

func TestEffectSizes(t *testing.T) {
	// A = [1 2 3] (mean 2, var 1), B = [4 5 6] (mean 5, var 1): s_p = 1, d = 3.
	// df = 4: J = Γ(2)/(sqrt(2) Γ(3/2)) = 1/(sqrt(2)*sqrt(π)/2) = sqrt(2/π)
	// = 0.7978845608028654, g = 3*sqrt(2/π) = 2.3936536824085963.
	d, err := CohensD([]float64{1, 2, 3}, []float64{4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "d", d, 3, 1e-14)
	g, err := HedgesG([]float64{1, 2, 3}, []float64{4, 5, 6})
	if err != nil {
		t.Fatal(err)
	}
	check(t, "g", g, 2.3936536824085963, 1e-13)

	// A = [1 3] (mean 2, var 2), B = [2 4 6 8] (mean 5, var 20/3):
	// s_p = sqrt((1*2 + 3*20/3)/4) = sqrt(5.5); d = 3/sqrt(5.5) = 1.2792042981336627;
	// df = 4 again: g = d*sqrt(2/π) = 1.0206573595935151.
	d, _ = CohensD([]float64{1, 3}, []float64{2, 4, 6, 8})
	check(t, "d unequal n", d, 1.2792042981336627, 1e-13)
	g, _ = HedgesG([]float64{1, 3}, []float64{2, 4, 6, 8})
	check(t, "g unequal n", g, 1.0206573595935151, 1e-13)
	// Direction: B smaller gives a negative effect.
	d, _ = CohensD([]float64{4, 5, 6}, []float64{1, 2, 3})
	check(t, "d reversed", d, -3, 1e-14)

	// J(3) = Γ(3/2)/(sqrt(3/2) Γ(1)) = (sqrt(π)/2)/sqrt(1.5) = 0.7236012545582676.
	check(t, "J(3)", HedgesJ(3), 0.7236012545582676, 1e-13)
	// Large df: J -> 1 - 3/(4df-1) to O(df^-2); no overflow.
	check(t, "J(10000)", HedgesJ(10000), 1-3.0/39999, 1e-8)

	if _, err := HedgesG([]float64{1}, []float64{1, 2}); !errors.Is(err, ErrTooFewSamples) {
		t.Errorf("n=1: err = %v", err)
	}
	d, _ = CohensD([]float64{2, 2}, []float64{3, 3})
	if !math.IsInf(d, 1) {
		t.Errorf("zero pooled variance, B larger: d = %v, want +Inf", d)
	}
	d, _ = CohensD([]float64{2, 2}, []float64{2, 2})
	if d != 0 {
		t.Errorf("all equal: d = %v, want 0", d)
	}
}

func TestMDE(t *testing.T) {
	// df = 2 closed form (see TestWelchOneArmConstant): t_{0.975,2} =
	// 4.302652729749464, t_{0.8,2} = 0.6/sqrt(0.32) = 1.0606601717798212;
	// sum 5.363312901529285; with SE 0.5 the MDE is 2.6816564507646425.
	check(t, "df=2", MDE(0.5, 2, 0.05, 0.8), 2.6816564507646425, 1e-13)
	// df = 1 is the Cauchy distribution: quantile(q) = tan(π(q-1/2)):
	// tan(0.475π) + tan(0.3π) = 12.706204736174696 + 1.3763819204711734 = 14.08258665664587.
	check(t, "df=1", MDE(1, 1, 0.05, 0.8), 14.08258665664587, 1e-13)
	if MDE(0, 10, 0.05, 0.8) != 0 {
		t.Error("MDE with SE 0 is not 0")
	}
	if !math.IsNaN(MDE(1, math.NaN(), 0.05, 0.8)) || !math.IsNaN(MDE(1, 5, 0, 0.8)) || !math.IsNaN(MDE(1, 5, 0.05, 1)) {
		t.Error("MDE with bad df/alpha/power is not NaN")
	}
}

func TestLag1AndEffectiveN(t *testing.T) {
	// [1 2 3 4 5]: mean 3, deviations -2 -1 0 1 2, Σd² = 10,
	// Σ d_i d_{i+1} = 2 + 0 + 0 + 2 = 4, r1 = 0.4;
	// n_eff = 5*0.6/1.4 = 2.142857142857143.
	r := Lag1([]float64{1, 2, 3, 4, 5})
	check(t, "r1 trend", r, 0.4, 1e-15)
	check(t, "n_eff trend", EffectiveN(5, r), 2.142857142857143, 1e-14)
	// [1 -1 1 -1]: mean 0, Σd² = 4, Σ d_i d_{i+1} = -3, r1 = -0.75;
	// n(1-r1)/(1+r1) = 4*1.75/0.25 = 28, clamped to n = 4.
	r = Lag1([]float64{1, -1, 1, -1})
	check(t, "r1 alternating", r, -0.75, 1e-15)
	check(t, "n_eff alternating", EffectiveN(4, r), 4, 0)
	// Two values: deviations ±d: r1 = -d²/(2d²) = -0.5.
	check(t, "r1 two", Lag1([]float64{3, 7}), -0.5, 1e-15)
	// r1 close to 1 clamps to 1.
	check(t, "n_eff r1=0.99", EffectiveN(10, 0.99), 1, 0)
	if !math.IsNaN(Lag1([]float64{2, 2, 2})) || !math.IsNaN(Lag1([]float64{1})) {
		t.Error("Lag1 of constant or single value is not NaN")
	}
	check(t, "n_eff NaN r1", EffectiveN(7, math.NaN()), 7, 0)
}

func TestHolm(t *testing.T) {
	// p = [0.01 0.04 0.03 0.005], m = 4. Sorted: 0.005 (#3), 0.01 (#0),
	// 0.03 (#2), 0.04 (#1). Multipliers 4,3,2,1: 0.02, 0.03, 0.06, 0.04;
	// running maximum: 0.02, 0.03, 0.06, 0.06. Back in input order:
	// [0.03 0.06 0.06 0.02].
	got := Holm([]float64{0.01, 0.04, 0.03, 0.005})
	want := []float64{0.03, 0.06, 0.06, 0.02}
	for i := range want {
		check(t, "holm", got[i], want[i], 1e-14)
	}
	// Capped at 1: [0.5 0.6] -> 2*0.5 = 1, max(1, 0.6) = 1.
	got = Holm([]float64{0.6, 0.5})
	if got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm([0.6 0.5]) = %v, want [1 1]", got)
	}
	// NaN is not a test: m = 2 here. [0.01 NaN 0.04] -> 0.02, NaN, 0.04.
	got = Holm([]float64{0.01, math.NaN(), 0.04})
	if !closeTo(got[0], 0.02, 1e-14) || !math.IsNaN(got[1]) || !closeTo(got[2], 0.04, 1e-14) {
		t.Errorf("Holm with NaN = %v", got)
	}
	if len(Holm(nil)) != 0 {
		t.Error("Holm(nil) not empty")
	}
}

func TestCompareReference(t *testing.T) {
	c, err := Compare(refX1, refY1, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "t", c.Welch.T, -1.658222799, sig9)
	check(t, "p", c.Welch.P, 0.1257382922, sig9)
	check(t, "ci low", c.Welch.CILow, -2.912499348, sig9)
	check(t, "ci high", c.Welch.CIHigh, 0.4112006466, sig9)
	check(t, "mw p", c.MannWhitneyP, 0.1508924082, sig9)
	// mean(A) = 86/7, mean(B) = 148.9/11; difference 96.3/77;
	// delta = 100 * (96.3/77)/(86/7) = 100*674.1/6622 = 10.17970401691332 %.
	check(t, "delta", c.DeltaPct, 10.17970401691332, 1e-12)
	if c.Significant || c.P != c.Welch.P || c.Test != TestWelch {
		t.Errorf("Significant=%v P=%v Test=%v", c.Significant, c.P, c.Test)
	}
	// MDE from the same SE and df as the test; SE = diff/t.
	se := (86.0/7 - 148.9/11) / -1.658222799
	check(t, "se", c.Welch.SE, se, 1e-9)
	check(t, "mde", c.MDE, 2.3224252181901898, 1e-12) // mpmath, see TestWelchReference
	check(t, "mde pct", c.MDEPct, 100*c.MDE/(86.0/7), 1e-12)

	c, err = Compare(refX2, refY2, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Significant || !closeTo(c.P, 1.206476087e-06, sig9) {
		t.Errorf("case2: Significant=%v P=%v", c.Significant, c.P)
	}
	if c.HedgesG <= 0 || c.CohensD <= c.HedgesG {
		t.Errorf("case2: d=%v g=%v, want d > g > 0 (B larger)", c.CohensD, c.HedgesG)
	}

	u, err := CompareWith(refX2, refY2, Options{Alpha: 0.01, Test: TestMannWhitney})
	if err != nil {
		t.Fatal(err)
	}
	if !u.Significant || u.P != u.MannWhitneyP || u.Alpha != 0.01 {
		t.Errorf("utest: Significant=%v P=%v", u.Significant, u.P)
	}
}

func TestCompareEdgeCases(t *testing.T) {
	t.Run("too few samples", func(t *testing.T) {
		_, err := Compare([]float64{1, 2, 3}, []float64{4}, 0.05)
		if !errors.Is(err, ErrTooFewSamples) || !strings.Contains(err.Error(), "arm B") {
			t.Errorf("err = %v, want too few samples naming arm B", err)
		}
		_, err = Compare(nil, []float64{4, 5}, 0.05)
		if !errors.Is(err, ErrTooFewSamples) || !strings.Contains(err.Error(), "arm A") {
			t.Errorf("err = %v, want too few samples naming arm A", err)
		}
	})
	t.Run("NaN", func(t *testing.T) {
		_, err := Compare([]float64{1, math.NaN(), 3}, []float64{4, 5}, 0.05)
		if !errors.Is(err, ErrNonFinite) || !strings.Contains(err.Error(), "arm A, sample 1") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("all samples equal", func(t *testing.T) {
		c, err := Compare([]float64{2, 2, 2}, []float64{2, 2, 2, 2}, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if c.P != 1 || c.Welch.P != 1 || c.MannWhitneyP != 1 || c.Significant || !math.IsNaN(c.Welch.T) ||
			c.DeltaPct != 0 || c.MDE != 0 || c.HedgesG != 0 || !hasWarning(c.Warnings, "all samples equal") {
			t.Errorf("comparison = %+v", c)
		}
		if c.NEffA != 3 || c.NEffB != 4 {
			t.Errorf("n_eff = %v %v, want n", c.NEffA, c.NEffB)
		}
	})
	t.Run("zero variance, different means", func(t *testing.T) {
		c, err := Compare([]float64{2, 2, 2}, []float64{3, 3, 3}, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		// t = (mean A - mean B)/0 = -Inf; delta = 100*(3-2)/2 = 50 %.
		if !math.IsInf(c.Welch.T, -1) || c.Welch.P != 0 || !c.Significant || c.DeltaPct != 50 ||
			!math.IsInf(c.HedgesG, 1) || !hasWarning(c.Warnings, "zero variance in both arms") {
			t.Errorf("comparison = %+v", c)
		}
		if c.Welch.CILow != -1 || c.Welch.CIHigh != -1 {
			t.Errorf("CI = [%v, %v], want [-1, -1]", c.Welch.CILow, c.Welch.CIHigh)
		}
	})
	t.Run("mean of A zero", func(t *testing.T) {
		c, err := Compare([]float64{-1, 1}, []float64{1, 2}, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsNaN(c.DeltaPct) || !math.IsNaN(c.MDEPct) || !hasWarning(c.Warnings, "mean of A is 0") {
			t.Errorf("comparison = %+v", c)
		}
	})
	t.Run("serial correlation", func(t *testing.T) {
		// A trends (r1 = 0.4 over 5 values: n_eff 2.14 < 2.5) -> warning.
		c, err := Compare([]float64{1, 2, 3, 4, 5}, []float64{3, 1, 4, 1, 5}, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		check(t, "lag1 A", c.Lag1A, 0.4, 1e-15)
		check(t, "neff A", c.NEffA, 2.142857142857143, 1e-14)
		if !hasWarning(c.Warnings, "A: effective sample size 2.1 of 5") {
			t.Errorf("warnings = %v", c.Warnings)
		}
	})
	t.Run("utest cannot reach alpha", func(t *testing.T) {
		c, err := CompareWith([]float64{1, 2, 3}, []float64{7, 8, 9}, Options{Test: TestMannWhitney})
		if err != nil {
			t.Fatal(err)
		}
		if c.Significant || !hasWarning(c.Warnings, "too few samples") {
			t.Errorf("Significant=%v warnings=%v", c.Significant, c.Warnings)
		}
	})
	t.Run("bad options", func(t *testing.T) {
		if _, err := Compare([]float64{1, 2}, []float64{1, 2}, 1.5); err == nil {
			t.Error("alpha 1.5 accepted")
		}
		if _, err := CompareWith([]float64{1, 2}, []float64{1, 2}, Options{Power: -1}); err == nil {
			t.Error("power -1 accepted")
		}
	})
}

func TestParseTest(t *testing.T) {
	for s, want := range map[string]Test{"welch": TestWelch, "utest": TestMannWhitney, "mann-whitney": TestMannWhitney} {
		got, err := ParseTest(s)
		if err != nil || got != want {
			t.Errorf("ParseTest(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseTest("z"); err == nil {
		t.Error(`ParseTest("z") accepted`)
	}
	if TestWelch.String() != "welch" || TestMannWhitney.String() != "utest" {
		t.Error("Test.String")
	}
}

func hasWarning(ws []string, sub string) bool {
	for _, w := range ws {
		if strings.Contains(w, sub) {
			return true
		}
	}
	return false
}

func TestMannWhitneyMethod(t *testing.T) {
	seq := func(n int, from, step float64) []float64 {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = from + float64(i)*step
		}
		return xs
	}
	for _, c := range []struct {
		name string
		a, b []float64
		want MannWhitneyMethod
	}{
		// The go-notes case: 7 and 11 distinct values, exact p 0.1508924082.
		{"exact", refX1, refY1, MWExact},
		{"exact with ties", []float64{1, 2, 2, 3}, []float64{2, 4, 5}, MWExactTies},
		// 51 values: beyond the exact limit of 50.
		{"normal, no ties", seq(51, 0, 1), seq(51, 0.5, 1), MWNormal},
		// 26 values with a tie: beyond the ties limit of 25.
		{"normal, ties", append(seq(25, 0, 1), 3), seq(26, 0.5, 1), MWNormal},
		{"exact at the limit", seq(50, 0, 1), seq(50, 0.5, 1), MWExact},
		{"all equal", []float64{4, 4}, []float64{4}, MWAllEqual},
	} {
		_, m, err := MannWhitney(c.a, c.b)
		if err != nil || m != c.want {
			t.Errorf("%s: method %q (%v), want %q", c.name, m, err, c.want)
		}
		cmp, err := Compare(c.a, c.b, 0.05)
		if err == nil && cmp.MannWhitneyMethod != c.want {
			t.Errorf("%s: Comparison.MannWhitneyMethod %q, want %q", c.name, cmp.MannWhitneyMethod, c.want)
		}
	}
}

func TestPopulationStd(t *testing.T) {
	// [2 4 4 4 5 5 7 9]: mean 5, squared deviations 32, /8 = 4: std 2
	// (numpy.std's textbook example).
	check(t, "std", PopulationStd([]float64{2, 4, 4, 4, 5, 5, 7, 9}), 2, 1e-15)
	check(t, "one value", PopulationStd([]float64{3}), 0, 0)
	check(t, "offset", PopulationStd([]float64{1e9 + 1, 1e9 + 2, 1e9 + 3}), math.Sqrt(2.0/3), 1e-12)
	if !math.IsNaN(PopulationStd(nil)) {
		t.Error("PopulationStd(nil) is not NaN")
	}
}

// TestPercentileSelectMatchesSortedPercentile compares the selection with
// Percentile on a sorted copy, value for value, over random samples with
// and without ties, sorted and reversed ones, and every kind of rank.
func TestPercentileSelectMatchesSortedPercentile(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	ps := []float64{0, 0.1, 1, 10, 25, 50, 75, 90, 95, 99, 99.9, 100, 33.3333}
	for trial := range 3000 {
		n := 1 + rng.IntN(300)
		if trial%100 == 0 {
			n = 5000 + rng.IntN(5000)
		}
		xs := make([]float64, n)
		for i := range xs {
			switch trial % 4 {
			case 0:
				xs[i] = rng.NormFloat64()
			case 1:
				xs[i] = float64(rng.IntN(5)) // many ties
			case 2:
				xs[i] = float64(i) // sorted
			default:
				xs[i] = float64(n - i) // reversed
			}
		}
		sorted := slices.Sorted(slices.Values(xs))
		for _, p := range append(ps, 100*rng.Float64()) {
			want := Percentile(sorted, p)
			work := slices.Clone(xs)
			if got := PercentileSelect(work, p); got != want {
				t.Fatalf("trial %d, n %d: PercentileSelect(p%v) = %v, Percentile = %v", trial, n, p, got, want)
			}
			slices.Sort(work)
			if !slices.Equal(work, sorted) {
				t.Fatalf("trial %d: PercentileSelect lost or changed values", trial)
			}
		}
	}
	if v := PercentileSelect(nil, 50); !math.IsNaN(v) {
		t.Errorf("PercentileSelect(empty) = %v, want NaN", v)
	}
	if v := PercentileSelect([]float64{1, 2}, 101); !math.IsNaN(v) {
		t.Errorf("PercentileSelect(p101) = %v, want NaN", v)
	}
	huge := []float64{math.MaxFloat64, -math.MaxFloat64, 0}
	if got, want := PercentileSelect(slices.Clone(huge), 75), Percentile(slices.Sorted(slices.Values(huge)), 75); got != want {
		t.Errorf("PercentileSelect near MaxFloat64 = %v, Percentile = %v", got, want)
	}
}

// BenchmarkPercentileSelect compares one p99 of 100,000 values by
// selection with a sort and Percentile (the baseline), each on a fresh copy.
func BenchmarkPercentileSelect(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	xs := make([]float64, 100_000)
	for i := range xs {
		xs[i] = rng.ExpFloat64()
	}
	work := make([]float64, len(xs))
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			copy(work, xs)
			PercentileSelect(work, 99)
		}
	})
	b.Run("sort", func(b *testing.B) {
		for b.Loop() {
			copy(work, xs)
			slices.Sort(work)
			Percentile(work, 99)
		}
	})
}
