package stats

import (
	"math"
	"testing"
)

func TestFisherExactReference(t *testing.T) {
	// Reference values: scipy.stats.fisher_exact's two-sided definition
	// (the total probability of every table with the observed margins that
	// is at most as probable as the observed one), computed in exact
	// rational arithmetic with Python's fractions and math.comb (scipy is
	// not installed here; the first three are also scipy's documented
	// results; testdata/fisher_ref.py prints them). Exact fractions are
	// given where they are short.
	for _, c := range []struct {
		a, b, c, d int
		want       float64
	}{
		{3, 1, 1, 3, 17.0 / 35},                      // Fisher's tea tasting
		{8, 2, 1, 5, 5.0 / 143},                      // 0.034965034965034968
		{1, 9, 11, 3, 41.0 / 14858},                  // 0.0027594561852200836
		{21, 9, 0, 30, 13.0 / 3627488858},            // 70% of A failed, none of B
		{0, 30, 21, 9, 13.0 / 3627488858},            // the same, rows swapped
		{7, 23, 2, 28, 95090.0 / 653543},             // 0.14549922499361173
		{100, 900, 130, 870, 0.041904548383735113},   // 10% against 13% of 1000
		{500, 9500, 560, 9440, 0.062530575654127812}, // 5% against 5.6% of 10000
		{50, 0, 0, 50, 1.9823306042836678e-29},       // complete separation: 2/C(100,50)
		{2, 3, 3, 2, 1},                              // mirror tables tie
		{1, 29, 0, 30, 1},                            // one failure is chance
		{0, 5, 0, 5, 1},                              // no failure at all
		{0, 0, 0, 0, 1},                              // empty table
	} {
		p, err := FisherExact(c.a, c.b, c.c, c.d)
		if err != nil {
			t.Fatal(err)
		}
		if !closeTo(p, c.want, 1e-12) {
			t.Errorf("FisherExact(%d %d %d %d) = %.17g, want %.17g (rel err %.2g)", c.a, c.b, c.c, c.d, p, c.want, math.Abs(p-c.want)/c.want)
		}
	}
	if _, err := FisherExact(-1, 2, 3, 4); err == nil {
		t.Error("negative count accepted")
	}
}

func TestCompareFailures(t *testing.T) {
	f, err := CompareFailures(21, 30, 0, 30)
	if err != nil {
		t.Fatal(err)
	}
	check(t, "rate A", f.RateA, 0.7, 1e-15)
	check(t, "rate B", f.RateB, 0, 0)
	check(t, "p", f.P, 13.0/3627488858, 1e-12)
	if !f.Differ(0.05) || f.BWorse(0.05) {
		t.Errorf("differ %v, B worse %v; want true, false", f.Differ(0.05), f.BWorse(0.05))
	}
	f, _ = CompareFailures(0, 30, 21, 30)
	if !f.BWorse(0.05) {
		t.Error("B failing 70% against 0% is not worse")
	}
	f, _ = CompareFailures(1, 30, 0, 30)
	if f.Differ(0.05) || f.BWorse(0.05) {
		t.Errorf("1 of 30 against 0 of 30 differs (p %v)", f.P)
	}
	f, _ = CompareFailures(0, 0, 0, 4)
	if !math.IsNaN(f.RateA) || f.P != 1 {
		t.Errorf("empty arm: rate %v p %v", f.RateA, f.P)
	}
	if _, err := CompareFailures(5, 4, 0, 4); err == nil {
		t.Error("more failures than requests accepted")
	}
}

// The test does not depend on how the table is laid out: swapping the rows
// or the columns, or transposing, gives the same p.
func TestFisherExactSymmetry(t *testing.T) {
	for _, c := range [][4]int{{3, 1, 1, 3}, {8, 2, 1, 5}, {0, 7, 4, 9}, {100, 900, 130, 870}, {13, 0, 2, 40}} {
		a, b, cc, d := c[0], c[1], c[2], c[3]
		p, _ := FisherExact(a, b, cc, d)
		for _, v := range [][4]int{{cc, d, a, b}, {b, a, d, cc}, {a, cc, b, d}, {d, cc, b, a}} {
			q, _ := FisherExact(v[0], v[1], v[2], v[3])
			if !closeTo(q, p, 1e-13) || !(p > 0 && p <= 1) {
				t.Errorf("FisherExact%v = %v, FisherExact%v = %v", c, p, v, q)
			}
		}
	}
}
