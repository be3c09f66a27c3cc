package stats

import (
	"math"
	"sort"
)

// Holm returns Holm–Bonferroni adjusted p-values for a family of tests, in
// the order given. With the m p-values sorted ascending p_(1) <= ... <= p_(m),
// the adjusted value of the j-th is max_{i<=j} min(1, (m-i+1) p_(i)), so
// adjusted values never decrease with the raw ones. Rejecting every test with
// adjusted p < alpha controls the family-wise error rate at alpha under any
// dependence between the tests. NaN entries (tests not run) stay NaN and do
// not count towards m.
func Holm(ps []float64) []float64 {
	out := make([]float64, len(ps))
	idx := make([]int, 0, len(ps))
	for i, p := range ps {
		if math.IsNaN(p) {
			out[i] = math.NaN()
			continue
		}
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(x, y int) bool { return ps[idx[x]] < ps[idx[y]] })
	m := len(idx)
	running := 0.0
	for j, i := range idx {
		adj := math.Min(1, float64(m-j)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}
