package e2e

import (
	"testing"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// TestBucketSpan checks the span helper with hand-worked cases: samples
// 0.03, 0.06, 0.07, 0.2, 0.3 in the SECONDS buckets (0.05, 0.1, 0.25, 0.5,
// ...). p50: rank 2 (0-based) for both estimators, 0.07 in (0.05, 0.1].
// p95: the report interpolates ranks 3 and 4 (0.2 and 0.3),
// histogram_quantile uses the bucket of rank ceil(4.75) = 5 (0.3): (0.1,
// 0.5]. p10: ranks 0 and 1 (0.03 and 0.06): [0, 0.1].
func TestBucketSpan(t *testing.T) {
	sorted := []float64{0.03, 0.06, 0.07, 0.2, 0.3}
	b := omnimetrics.SecondsBuckets()
	for _, c := range []struct{ q, lo, hi float64 }{{0.5, 0.05, 0.1}, {0.95, 0.1, 0.5}, {0.1, 0, 0.1}} {
		if lo, hi := bucketSpan(sorted, c.q, b); lo != c.lo || hi != c.hi {
			t.Errorf("bucketSpan(q=%v) = [%v, %v], want [%v, %v]", c.q, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := bucketOf(500, b); lo != 300 || hi != 300 {
		t.Errorf("bucketOf(500) = (%v, %v], want the last bound twice, as histogram_quantile reports +Inf", lo, hi)
	}
}
