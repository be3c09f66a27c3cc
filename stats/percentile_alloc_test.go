package stats

import (
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
