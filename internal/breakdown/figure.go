package breakdown

import (
	"math"
	"sort"

	"github.com/omnibench/omnibench/scrape"
)

// Figure summarises one histogram's observations between two scrapes.
// Count, Sum and Mean are exact. The quantiles are estimates, interpolated
// inside a bucket as Prometheus' histogram_quantile does; the true 95th
// percentile lies between P95Low and P95High, the bounds of its bucket.
// Every value is NaN without observations (and a quantile whose rank falls
// in the +Inf bucket is the last finite bound, as in Prometheus).
type Figure struct {
	Count float64 `json:"count"`
	Sum   float64 `json:"sum"`
	Mean  float64 `json:"mean"`

	P50Estimate float64 `json:"p50_estimate"`
	P95Estimate float64 `json:"p95_estimate"`
	P99Estimate float64 `json:"p99_estimate"`
	P95Low      float64 `json:"p95_bucket_low"`
	P95High     float64 `json:"p95_bucket_high"`
}

// figureOf summarises a histogram delta.
func figureOf(h scrape.HistogramDelta) Figure {
	nan := math.NaN()
	f := Figure{Count: h.Count, Sum: h.Sum, Mean: h.Mean(),
		P50Estimate: nan, P95Estimate: nan, P99Estimate: nan, P95Low: nan, P95High: nan}
	if h.Count <= 0 {
		f.Mean = nan
		return f
	}
	f.P50Estimate = h.Quantile(0.5)
	f.P95Estimate = h.Quantile(0.95)
	f.P99Estimate = h.Quantile(0.99)
	f.P95Low, f.P95High = rankBucket(h.Buckets, 0.95)
	return f
}

// rankBucket returns the bounds of the bucket holding the q-quantile's rank
// (cumulative buckets ending with +Inf): the interval the true quantile lies
// in, whatever the interpolation says.
func rankBucket(buckets []scrape.Bucket, q float64) (low, high float64) {
	bs := append([]scrape.Bucket(nil), buckets...)
	sort.Slice(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
	if len(bs) == 0 || bs[len(bs)-1].Count <= 0 {
		return math.NaN(), math.NaN()
	}
	rank := q * bs[len(bs)-1].Count
	low = 0
	for _, b := range bs {
		if b.Count >= rank {
			return low, b.UpperBound
		}
		low = b.UpperBound
	}
	return low, math.Inf(1)
}
