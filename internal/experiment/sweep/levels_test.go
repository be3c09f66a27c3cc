package sweep

import (
	"slices"
	"strings"
	"testing"
)

func TestParseLevels(t *testing.T) {
	tests := []struct {
		axis Axis
		spec string
		want []float64
	}{
		{Concurrency, "1,2,4,8,16", []float64{1, 2, 4, 8, 16}},
		{Concurrency, " 8, 1 ,4 ", []float64{1, 4, 8}},
		{Concurrency, "4,4,2", []float64{2, 4}},
		{Concurrency, "1:5", []float64{1, 2, 3, 4, 5}},
		{Concurrency, "1:20:5", []float64{1, 6, 11, 16}},
		{Concurrency, "2:10:4", []float64{2, 6, 10}},
		{Concurrency, "1:64:x2", []float64{1, 2, 4, 8, 16, 32, 64}},
		{Concurrency, "1:60:*2", []float64{1, 2, 4, 8, 16, 32}},
		// 1, 1.5, 2.25, 3.375, 5.0625, 7.59 rounded: 1, 2, 2, 3, 5, 8 -> deduplicated.
		{Concurrency, "1:8:x1.5", []float64{1, 2, 3, 5, 8}},
		{Concurrency, "1,2,4:16:4", []float64{1, 2, 4, 8, 12, 16}},
		{Concurrency, "3:3", []float64{3}},
		{Rate, "0.5:2:0.5", []float64{0.5, 1, 1.5, 2}},
		{Rate, "0.1:0.5:0.1", []float64{0.1, 0.2, 0.3, 0.4, 0.5}}, // no 0.30000000000000004, and 0.5 included
		{Rate, "1:20:5", []float64{1, 6, 11, 16}},
		{Rate, "2.5", []float64{2.5}},
		{Rate, "1:10:x3", []float64{1, 3, 9}},
		{Rate, "0.25,1e1", []float64{0.25, 10}},
	}
	for _, tt := range tests {
		got, err := ParseLevels(tt.axis, tt.spec)
		if err != nil {
			t.Errorf("ParseLevels(%s, %q): %v", tt.axis, tt.spec, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("ParseLevels(%s, %q) = %v, want %v", tt.axis, tt.spec, got, tt.want)
		}
	}
}

func TestParseLevelsErrors(t *testing.T) {
	tests := []struct {
		axis Axis
		spec string
		want []string // substrings of the error
	}{
		{Concurrency, "", []string{"empty list"}},
		{Concurrency, "1,,4", []string{`item 2 ""`, "empty item"}},
		{Concurrency, "1,2,x", []string{`item 3 "x"`, `level "x" is not a number`}},
		{Concurrency, "1,2.5", []string{`item 2 "2.5"`, "whole number"}},
		{Concurrency, "0", []string{`item 1 "0"`, "at least 1"}},
		{Concurrency, "-2:4", []string{`range start "-2"`}},
		{Concurrency, "1:abc", []string{`range end "abc" is not a number`}},
		{Concurrency, "8:2", []string{"range end 2 is below its start 8"}},
		{Concurrency, "1:8:0", []string{`step "0" must be greater than 0`}},
		{Concurrency, "1:8:1.5", []string{`step "1.5": concurrency steps are whole numbers`}},
		{Concurrency, "1:8:two", []string{`step "two" is not a number`}},
		{Concurrency, "1:8:x1", []string{`factor "1" must be greater than 1`}},
		{Concurrency, "1:8:xx", []string{`factor "x" is not a number`}},
		{Concurrency, "1:2:3:4", []string{"at most three parts"}},
		{Concurrency, "1:100000", []string{"more than 100"}},
		{Concurrency, "1:60,61:120", []string{`item 2 "61:120"`, "more than 100 levels"}},
		{Concurrency, "1:8:x1.0000001", []string{"more than 100 levels"}},
		{Concurrency, "200000", []string{`level "200000": more than 100000 concurrent streams`}},
		// A step too small to move the sum looped forever, growing the list
		// until memory ran out.
		{Rate, "1e300:1e300", []string{`range start "1e300": more than 1000000 req/s`}},
		{Rate, "1:2:1e-300", []string{"more than 100 levels"}},
		{Rate, "1e6:1e6:1e-300,2e6", []string{`item 2 "2e6"`, "more than 1000000 req/s"}},
		{Rate, "0", []string{`level "0": a rate must be greater than 0`}},
		{Rate, "1,NaN", []string{`item 2 "NaN"`, "not a number"}},
		{Rate, "1:Inf", []string{"not a number"}},
		{Axis("bogus"), "1", []string{"unknown axis"}},
	}
	for _, tt := range tests {
		_, err := ParseLevels(tt.axis, tt.spec)
		if err == nil {
			t.Errorf("ParseLevels(%s, %q): no error", tt.axis, tt.spec)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseLevels(%s, %q) error %q does not contain %q", tt.axis, tt.spec, err, w)
			}
		}
		if tt.spec != "" && tt.axis != "bogus" && !strings.Contains(err.Error(), `"`+tt.spec+`"`) {
			t.Errorf("ParseLevels(%s, %q) error %q does not quote the list", tt.axis, tt.spec, err)
		}
	}
}

func TestAxisFormat(t *testing.T) {
	if got := Concurrency.Quantity(12); got != "12 concurrent streams" {
		t.Errorf("Quantity(12) = %q", got)
	}
	if got := Concurrency.Quantity(1); got != "1 concurrent stream" {
		t.Errorf("Quantity(1) = %q", got)
	}
	if got := Rate.Quantity(0.1 + 0.2); got != "0.3 req/s" {
		t.Errorf("Quantity(0.1+0.2) = %q", got)
	}
	for _, s := range []string{"concurrency", "c", "Rate"} {
		if _, err := ParseAxis(s); err != nil {
			t.Errorf("ParseAxis(%q): %v", s, err)
		}
	}
	if _, err := ParseAxis("qps"); err == nil || !strings.Contains(err.Error(), `"qps"`) {
		t.Errorf("ParseAxis(qps) = %v", err)
	}
}

// FuzzParseLevels checks that any input either fails or yields a sorted,
// duplicate-free list of valid levels within MaxLevels.
func FuzzParseLevels(f *testing.F) {
	for _, s := range []string{"1,2,4", "1:20:5", "1:64:x2", "0.5:2:0.5", "1e300:1e308:x1.0000001", "1:1e9", ",", "3:1"} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, spec string, rate bool) {
		a := Concurrency
		if rate {
			a = Rate
		}
		got, err := ParseLevels(a, spec)
		if err != nil {
			return
		}
		if len(got) == 0 || len(got) > MaxLevels {
			t.Fatalf("ParseLevels(%q) gave %d levels", spec, len(got))
		}
		for i, v := range got {
			if !(v > 0) || (a == Concurrency && v < 1) {
				t.Fatalf("ParseLevels(%q) level %v is invalid", spec, v)
			}
			if i > 0 && got[i-1] >= v {
				t.Fatalf("ParseLevels(%q) = %v is not strictly increasing", spec, got)
			}
		}
	})
}
