package scrape

import (
	"math"
	"reflect"
	"testing"
)

var inf = math.Inf(1)

// The expected values are worked by hand from the definition of Prometheus'
// histogram_quantile (rank = q*count, linear inside the bucket holding it).
func TestHistogramQuantile(t *testing.T) {
	// e2e of testdata: observations 0.3, 0.8, 1.5, 4.0.
	e2e := []Bucket{{0.05, 0}, {0.1, 0}, {0.25, 0}, {0.5, 1}, {1, 2}, {2, 3}, {5, 4}, {10, 4}, {inf, 4}}
	// ttfp of testdata: 0.12, 0.2, 0.6.
	ttfp := []Bucket{{0.05, 0}, {0.1, 0}, {0.25, 2}, {0.5, 2}, {1, 3}, {2, 3}, {inf, 3}}
	cases := []struct {
		name    string
		q       float64
		buckets []Bucket
		want    float64
	}{
		// rank 2 -> bucket (0.5,1] holding 1 of 2: 0.5 + 0.5*(1/1).
		{"median", 0.5, e2e, 1},
		// rank 3.6 -> bucket (2,5]: 2 + 3*(0.6/1).
		{"p90", 0.9, e2e, 3.8},
		// rank 1 -> lowest non-empty bucket; start at the bound below it.
		{"p25", 0.25, e2e, 0.5},
		// rank 0.4 -> bucket (0.25,0.5]: 0.25 + 0.25*0.4.
		{"p10", 0.1, e2e, 0.35},
		// rank 4 -> bucket (2,5] full: its upper bound.
		{"max", 1, e2e, 5},
		// rank 0 -> the lowest bucket, holding 2: 0 + 1*(0/2).
		{"q=0", 0, []Bucket{{1, 2}, {2, 2}, {inf, 2}}, 0},
		// rank 1.5 -> bucket (0.1,0.25] holding 2: 0.1 + 0.15*(1.5/2).
		{"ttfp median", 0.5, ttfp, 0.2125},
		// rank 2.97 -> bucket (0.5,1]: 0.5 + 0.5*(0.97/1).
		{"ttfp p99", 0.99, ttfp, 0.985},
		// The lowest bucket interpolates from 0: rank 0.5 of 2 in (0,1].
		{"lowest from zero", 0.25, []Bucket{{1, 2}, {2, 2}, {inf, 2}}, 0.25},
		// rank 5 lands in +Inf: the last finite bound.
		{"+Inf bucket", 0.5, []Bucket{{1, 1}, {2, 2}, {inf, 10}}, 2},
		// A non-positive lowest bound is returned as is.
		{"negative lowest", 0.25, []Bucket{{-1, 2}, {0, 4}, {inf, 4}}, -1},
		// Decreasing counts are raised to the running maximum: [2,2,3];
		// rank 1.5 in (0,1] holding 2.
		{"non-monotonic", 0.5, []Bucket{{1, 2}, {2, 1}, {inf, 3}}, 0.75},
		// Equal bounds merge: [{1,2},{2,3},{+Inf,3}].
		{"coalesced", 0.5, []Bucket{{1, 1}, {1, 1}, {2, 3}, {inf, 3}}, 0.75},
		// Order of the input does not matter.
		{"unsorted", 0.5, []Bucket{{inf, 4}, {5, 4}, {1, 2}, {0.5, 1}, {2, 3}}, 1},
		{"q<0", -0.1, e2e, math.Inf(-1)},
		{"q>1", 1.1, e2e, math.Inf(1)},
	}
	for _, c := range cases {
		before := append([]Bucket(nil), c.buckets...)
		got := HistogramQuantile(c.q, c.buckets)
		if math.Abs(got-c.want) > 1e-12 && got != c.want {
			t.Errorf("%s: HistogramQuantile(%v) = %v, want %v", c.name, c.q, got, c.want)
		}
		if !reflect.DeepEqual(before, c.buckets) {
			t.Errorf("%s: input modified", c.name)
		}
	}
	nan := []struct {
		name    string
		q       float64
		buckets []Bucket
	}{
		{"no observations", 0.5, []Bucket{{1, 0}, {inf, 0}}},
		{"no +Inf", 0.5, []Bucket{{1, 1}, {2, 2}}},
		{"one bucket", 0.5, []Bucket{{inf, 3}}},
		{"no buckets", 0.5, nil},
		{"NaN q", math.NaN(), e2e},
		// rank 0 lands in an empty lowest bucket: 0.05*(0/0), as in Prometheus.
		{"q=0 empty lowest bucket", 0, e2e},
	}
	for _, c := range nan {
		if got := HistogramQuantile(c.q, c.buckets); !math.IsNaN(got) {
			t.Errorf("%s: got %v, want NaN", c.name, got)
		}
	}
}

// TestHistogramQuantileBounds checks the bucket that comes with each
// estimate: the interpolated value lies in it, the +Inf bucket has no upper
// bound, and a value in the bucket is "contained" while one outside is not.
func TestHistogramQuantileBounds(t *testing.T) {
	bs := []Bucket{{UpperBound: 0.1, Count: 10}, {UpperBound: 0.25, Count: 90}, {UpperBound: math.Inf(1), Count: 100}}
	for _, tc := range []struct {
		q                   float64
		value, lower, upper float64
	}{
		{0.05, 0.05, 0, 0.1},
		{0.5, 0.1 + 0.15*0.5, 0.1, 0.25},
		{0.95, 0.25, 0.25, math.Inf(1)},
	} {
		e := HistogramQuantileBounds(tc.q, bs)
		if math.Abs(e.Value-tc.value) > 1e-12 || e.Lower != tc.lower || e.Upper != tc.upper {
			t.Errorf("q=%v: got %+v, want value %v in [%v, %v]", tc.q, e, tc.value, tc.lower, tc.upper)
		}
		if got := HistogramQuantile(tc.q, bs); got != e.Value {
			t.Errorf("q=%v: HistogramQuantile %v, bounds' value %v", tc.q, got, e.Value)
		}
	}
	e := HistogramQuantileBounds(0.5, bs)
	if !e.Contains(0.11) || !e.Contains(0.25) || e.Contains(0.26) || e.Contains(0.09) {
		t.Errorf("%+v: Contains disagrees with the bucket [0.1, 0.25]", e)
	}
	if e := HistogramQuantileBounds(0.5, nil); !math.IsNaN(e.Value) || !math.IsNaN(e.Lower) || !math.IsNaN(e.Upper) {
		t.Errorf("no buckets: %+v, want NaN throughout", e)
	}
}
