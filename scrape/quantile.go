package scrape

import (
	"math"
	"slices"
	"sort"
)

// HistogramQuantile estimates the q-quantile from cumulative buckets the way
// Prometheus' histogram_quantile does for classic histograms, so that the
// numbers omnibench prints match a Grafana panel over the same data:
//
//   - the buckets are sorted by upper bound and buckets with equal bounds
//     merged; counts that decrease are raised to the running maximum (tiny
//     floating-point decreases are first smoothed away);
//   - the rank q*count is located by binary search and the value is
//     interpolated linearly inside its bucket; the lowest bucket starts at 0
//     when its upper bound is positive, and returns its upper bound otherwise;
//   - a rank in the +Inf bucket returns the upper bound of the last finite
//     bucket;
//   - q < 0 gives -Inf, q > 1 gives +Inf; NaN is returned for a NaN q, fewer
//     than two buckets, a highest bucket that is not +Inf, or no observations.
//
// buckets is not modified.
func HistogramQuantile(q float64, buckets []Bucket) float64 {
	return HistogramQuantileBounds(q, buckets).Value
}

// QuantileEstimate is a quantile estimated from histogram buckets: the
// interpolated Value and the bounds [Lower, Upper] of the bucket that holds
// the rank. The buckets say only that the true quantile lies somewhere in
// that bucket; Value places it by assuming the bucket's observations are
// spread evenly. Upper is +Inf when the rank falls in the +Inf bucket, and
// Lower is -Inf when it falls in a lowest bucket whose bound is not
// positive.
type QuantileEstimate struct {
	Value, Lower, Upper float64
}

// Contains reports whether v lies in the estimate's bucket, bounds
// included: a value the buckets cannot tell apart from the estimate.
func (e QuantileEstimate) Contains(v float64) bool { return v >= e.Lower && v <= e.Upper }

// HistogramQuantileBounds is HistogramQuantile with the bounds of the bucket
// the estimate comes from. Where HistogramQuantile returns ±Inf or NaN, both
// bounds equal the value.
func HistogramQuantileBounds(q float64, buckets []Bucket) QuantileEstimate {
	switch {
	case math.IsNaN(q):
		return point(math.NaN())
	case q < 0:
		return point(math.Inf(-1))
	case q > 1:
		return point(math.Inf(1))
	case len(buckets) == 0:
		return point(math.NaN())
	}
	bs := slices.Clone(buckets)
	sort.SliceStable(bs, func(i, j int) bool { return bs[i].UpperBound < bs[j].UpperBound })
	if !math.IsInf(bs[len(bs)-1].UpperBound, 1) {
		return point(math.NaN())
	}
	bs = coalesce(bs)
	smoothPrecision(bs, 1e-12)
	forceMonotonic(bs)
	if len(bs) < 2 {
		return point(math.NaN())
	}
	total := bs[len(bs)-1].Count
	if total == 0 {
		return point(math.NaN())
	}
	rank := q * total
	b := sort.Search(len(bs)-1, func(i int) bool { return bs[i].Count >= rank })
	switch {
	case b == len(bs)-1:
		last := bs[len(bs)-2].UpperBound
		return QuantileEstimate{Value: last, Lower: last, Upper: math.Inf(1)}
	case b == 0 && bs[0].UpperBound <= 0:
		return QuantileEstimate{Value: bs[0].UpperBound, Lower: math.Inf(-1), Upper: bs[0].UpperBound}
	}
	lower, upper, inBucket := 0.0, bs[b].UpperBound, bs[b].Count
	if b > 0 {
		lower = bs[b-1].UpperBound
		inBucket -= bs[b-1].Count
		rank -= bs[b-1].Count
	}
	return QuantileEstimate{Value: lower + (upper-lower)*(rank/inBucket), Lower: lower, Upper: upper}
}

// point is an estimate without a bucket: NaN or an infinite quantile.
func point(v float64) QuantileEstimate { return QuantileEstimate{Value: v, Lower: v, Upper: v} }

// coalesce merges adjacent buckets with the same bound (input sorted).
func coalesce(bs []Bucket) []Bucket {
	out := bs[:1]
	for _, b := range bs[1:] {
		if last := &out[len(out)-1]; b.UpperBound == last.UpperBound {
			last.Count += b.Count
			continue
		}
		out = append(out, b)
	}
	return out
}

// smoothPrecision removes relative decreases smaller than tolerance, which
// are floating-point noise from summing rates rather than real data.
func smoothPrecision(bs []Bucket, tolerance float64) {
	prev := bs[0].Count
	for i := 1; i < len(bs); i++ {
		cur := bs[i].Count
		d := math.Abs(cur - prev)
		if d == 0 {
			continue
		}
		if d/cur <= tolerance {
			bs[i].Count = prev
			continue
		}
		prev = cur
	}
}

// forceMonotonic raises each count to the running maximum: a cumulative
// bucket can never hold fewer observations than a lower one.
func forceMonotonic(bs []Bucket) {
	high := bs[0].Count
	for i := 1; i < len(bs); i++ {
		if bs[i].Count < high {
			bs[i].Count = high
		} else {
			high = bs[i].Count
		}
	}
}
