package summary

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkPoolSummarySpilled is the end-of-run cost of one pooled figure
// whose values are mostly in the pool's temporary file: the few passes of
// reading it back and selecting the percentiles' order statistics.
//
//	go test ./internal/run/summary/ -run '^$' -bench PoolSummarySpilled -benchtime 3x
func BenchmarkPoolSummarySpilled(b *testing.B) {
	for _, n := range []int{1 << 20, 1 << 23} {
		b.Run(fmt.Sprintf("values=%d", n), func(b *testing.B) {
			set := NewSet()
			set.gaps.dir = b.TempDir()
			rng := rand.New(rand.NewPCG(1, 1))
			for range n {
				set.gaps.add(set, 1+rng.ExpFloat64()*20, false)
			}
			var sc scratch
			defer sc.free()
			for b.Loop() {
				if _, _, err := set.gaps.summary(false, []float64{50, 90, 95, 99}, &sc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/value")
		})
	}
}
