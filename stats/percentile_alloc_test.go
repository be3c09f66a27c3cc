package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	mstats "github.com/montanaflynn/stats"
)

// TestPercentileIsTheLibrarysWithoutACopy: Percentile of a sorted series
// equals montanaflynn/stats' to the last bit (its figures always have),
// ties, a single value and huge values included, and allocates nothing: the
// library sorted a copy of the whole series for every percentile, the
// largest allocation at the end of a long run.
func TestPercentileIsTheLibrarysWithoutACopy(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	series := [][]float64{{0.25}, {1, 1, 1, 2}, {-math.MaxFloat64, math.MaxFloat64}}
	for _, n := range []int{2, 3, 10, 101, 1000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.ExpFloat64()*1000) / 1000 // ties are common
		}
		series = append(series, xs)
	}
	for _, xs := range series {
		slices.Sort(xs)
		for _, p := range []float64{0.1, 1, 10, 25, 50, 90, 95, 99, 99.9, 100, 100 / 3.0} {
			want, err := mstats.Percentile(xs, p)
			if err != nil || math.IsInf(want, 0) {
				continue // Percentile uses its own formula there
			}
			if got := Percentile(xs, p); got != want {
				t.Errorf("n=%d p%g: %v, the library's %v", len(xs), p, got, want)
			}
		}
	}
	sorted := series[len(series)-1]
	if allocs := testing.AllocsPerRun(10, func() { Percentile(sorted, 99) }); allocs != 0 {
		t.Errorf("Percentile of %d sorted values: %v allocations, want 0", len(sorted), allocs)
	}
}

// TestSummarizeInPlaceIsSummarize: SummarizeInPlace gives Summarize's
// figures to the bit, non-finite values included, keeps every value (only
// their order changes) and allocates no copy of the series.
func TestSummarizeInPlaceIsSummarize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 17, 1000} {
		xs := make([]float64, n)
		for i := range xs {
			xs[i] = math.Round(rng.NormFloat64()*1e4) / 1e3 // ties
			if xs[i] == 0 {
				xs[i] = 0 // not -0, whose place among zeros a sort does not fix
			}
			switch rng.IntN(50) {
			case 0:
				xs[i] = math.NaN()
			case 1:
				xs[i] = math.Inf(1 - 2*rng.IntN(2))
			}
		}
		ps := []float64{1, 50, 90, 99.9, 100}
		want := Summarize(xs, ps)
		in := slices.Clone(xs)
		got := SummarizeInPlace(in, ps)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("n=%d: %+v, Summarize's %+v", n, got, want)
		}
		if !slices.IsSorted(in[:got.N]) || !sameValues(in, xs) {
			t.Errorf("n=%d: the finite values are not sorted first, or values were lost: %v", n, in)
		}
	}
	big := make([]float64, 100_000)
	for i := range big {
		big[i] = rng.Float64()
	}
	if allocs := testing.AllocsPerRun(3, func() { SummarizeInPlace(big, []float64{99}) }); allocs > 3 {
		t.Errorf("SummarizeInPlace: %v allocations, want the summary's own only", allocs)
	}
}

// sameValues reports whether a and b hold the same values, NaNs counted
// by number.
func sameValues(a, b []float64) bool {
	key := func(x float64) uint64 {
		if math.IsNaN(x) {
			return math.Float64bits(math.NaN())
		}
		return math.Float64bits(x)
	}
	count := map[uint64]int{}
	for _, x := range a {
		count[key(x)]++
	}
	for _, x := range b {
		count[key(x)]--
	}
	for _, c := range count {
		if c != 0 {
			return false
		}
	}
	return len(a) == len(b)
}
