package stats

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// streamOf is an each function over xs.
func streamOf(xs []float64) func(yield func(float64)) {
	return func(yield func(float64)) {
		for _, x := range xs {
			yield(x)
		}
	}
}

// checkStreamIsSummarize compares SummarizeStream, collecting buckets of at
// most collectLimit values, with Summarize on xs: the percentiles, the
// median, N, Dropped, the minimum and the maximum to the bit, the mean and
// the standard deviation to within 1e-12 of the largest value's size (they
// are summed in another order; both undefined where the squares overflow), and the population standard deviation with
// PopulationStd's on the finite values in order, to the bit.
func checkStreamIsSummarize(t *testing.T, name string, xs []float64, collectLimit int) {
	t.Helper()
	ps := []float64{0, 0.1, 1, 10, 100 / 3.0, 50, 66.7, 90, 95, 99, 99.9, 99.99, 100, -1, math.NaN()}
	want := Summarize(xs, ps)
	got, popStd := summarizeStream(streamOf(xs), ps, make([]uint64, StreamWorkWords), collectLimit)
	same := func(a, b float64) bool {
		return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
	}
	for i := range ps {
		if !same(got.Percentiles[i].Value, want.Percentiles[i].Value) {
			t.Errorf("%s: p%g = %v, Summarize's %v", name, ps[i], got.Percentiles[i].Value, want.Percentiles[i].Value)
		}
	}
	if got.N != want.N || got.Dropped != want.Dropped || !same(got.Min, want.Min) || !same(got.Max, want.Max) || !same(got.Median, want.Median) {
		t.Errorf("%s: N %d dropped %d min %v max %v median %v, Summarize's %d %d %v %v %v",
			name, got.N, got.Dropped, got.Min, got.Max, got.Median, want.N, want.Dropped, want.Min, want.Max, want.Median)
	}
	// The rounding of a sum is relative to the size of its terms, which a
	// mean near 0 of values of both signs is far below.
	scale := math.Max(math.Abs(want.Min), math.Abs(want.Max))
	close := func(a, b float64) bool {
		overflowed := func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }
		return same(a, b) || math.Abs(a-b) <= 1e-12*max(math.Abs(a), math.Abs(b), scale) ||
			overflowed(a) && overflowed(b) // squares past MaxFloat64: Inf or NaN as the order has it
	}
	if !close(got.Mean, want.Mean) || !close(got.Std, want.Std) {
		t.Errorf("%s: mean %v std %v, Summarize's %v %v", name, got.Mean, got.Std, want.Mean, want.Std)
	}
	if !slices.Equal(got.Warnings, want.Warnings) {
		t.Errorf("%s: warnings %q, Summarize's %q", name, got.Warnings, want.Warnings)
	}
	finite := slices.DeleteFunc(slices.Clone(xs), func(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) })
	if wantPop := PopulationStd(finite); !same(popStd, wantPop) {
		t.Errorf("%s: population std %v, PopulationStd's %v", name, popStd, wantPop)
	}
}

// TestSummarizeStreamIsSummarize: on random, tied, heavy-tailed, negative,
// huge and tiny inputs, with the whole series collected at once and with
// buckets of at most 1 to 64 values collected, so that the radix selection
// narrows several digits (down to the last one, where a bucket is a single
// key), the streamed summary is Summarize's.
func TestSummarizeStreamIsSummarize(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	gens := []struct {
		name string
		g    func() float64
	}{
		{"uniform", rng.Float64},
		{"tied", func() float64 { return float64(rng.IntN(7)) }},
		{"heavy-tailed", func() float64 { return math.Exp(10 * rng.NormFloat64()) }},
		{"negative", func() float64 { return -rng.ExpFloat64() * 1e3 }},
		{"mixed sign", rng.NormFloat64},
		{"huge", func() float64 { return math.MaxFloat64 * (2*rng.Float64() - 1) }},
		{"tiny", func() float64 { return 5e-324 * float64(rng.IntN(1000)-500) }},
		{"latencies", func() float64 { return math.Round(rng.ExpFloat64()*1e6) / 1e3 }},
	}
	for _, gen := range gens {
		name, g := gen.name, gen.g
		for _, n := range []int{0, 1, 2, 3, 10, 999, 20_000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = g()
				if name == "tiny" && xs[i] == 0 {
					xs[i] = 5e-324 // no mix of -0 and +0, which a sort leaves in any order
				}
			}
			for _, limit := range []int{StreamWorkWords, 64, 1} {
				checkStreamIsSummarize(t, name, xs, limit)
			}
		}
	}
	withNonFinite := []float64{3, math.NaN(), 1, math.Inf(1), 2, math.Inf(-1), 2}
	checkStreamIsSummarize(t, "non-finite", withNonFinite, 1)
	checkStreamIsSummarize(t, "all non-finite", []float64{math.NaN(), math.Inf(1)}, 1)
}

// TestSummarizeStreamBoundedWork: the selection holds no more than the work
// it is given, and calls each a bounded number of times even when the
// percentiles' order statistics lie in many buckets.
func TestSummarizeStreamBoundedWork(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	xs := make([]float64, 200_000)
	for i := range xs {
		xs[i] = math.Exp(20 * rng.NormFloat64())
	}
	calls := 0
	each := func(yield func(float64)) {
		calls++
		streamOf(xs)(yield)
	}
	ps := []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.9}
	got, _ := SummarizeStream(each, ps, make([]uint64, StreamWorkWords))
	want := Summarize(xs, ps)
	for i := range ps {
		if got.Percentiles[i].Value != want.Percentiles[i].Value {
			t.Errorf("p%g = %v, Summarize's %v", ps[i], got.Percentiles[i].Value, want.Percentiles[i].Value)
		}
	}
	// Two passes for the sums, then at most one per wanted order statistic
	// (two per percentile and the median's) and level.
	if most := 2 + 4*2*(len(ps)+1); calls > most {
		t.Errorf("%d passes over the series, want at most %d", calls, most)
	}
}

// FuzzSummarizeStream: on any series the streamed summary's percentiles,
// count and extremes are Summarize's, with a tiny collect limit.
func FuzzSummarizeStream(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40"))
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xef\xff\xff\xff\xff\xff\xff\xff\xef\x7f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var xs []float64
		for len(data) >= 8 {
			x := math.Float64frombits(binary.LittleEndian.Uint64(data))
			if x == 0 {
				x = 0 // one zero: a sort leaves -0 and +0 in any order
			}
			xs = append(xs, x)
			data = data[8:]
		}
		ps := []float64{0, 1, 25, 50, 75, 99, 100}
		want := Summarize(xs, ps)
		got, _ := summarizeStream(streamOf(xs), ps, make([]uint64, StreamWorkWords), 2)
		for i := range ps {
			a, b := got.Percentiles[i].Value, want.Percentiles[i].Value
			if math.Float64bits(a) != math.Float64bits(b) && !(math.IsNaN(a) && math.IsNaN(b)) {
				t.Fatalf("p%g = %v, Summarize's %v", ps[i], a, b)
			}
		}
		if got.N != want.N || got.Dropped != want.Dropped {
			t.Fatalf("N %d dropped %d, Summarize's %d %d", got.N, got.Dropped, want.N, want.Dropped)
		}
	})
}
