package stats

import (
	"cmp"
	"math"
	"slices"
)

// digitBits is the width of the radix selection's digit: one pass narrows a
// wanted order statistic to one of 2^digitBits buckets of the values' keys.
const digitBits = 16

// StreamWorkWords is the least working memory SummarizeStream uses, in
// 64-bit words: one histogram of a digit.
const StreamWorkWords = 1 << digitBits

// SummarizeStream is Summarize for a series too large to hold in memory.
// each calls yield with every value of the series, the same values in the
// same order on every call; SummarizeStream calls it several times (two,
// plus one or more per level of the selection below).
//
// N, Dropped, Min, Max, Median and the percentiles equal Summarize's bit for
// bit: the order statistics the percentiles read are found by exact
// selection, a radix selection on the order-preserving integer form of the
// values (one 16-bit digit per pass, narrowing each wanted rank's bucket
// until it holds few enough values to collect and sort), and then go
// through Percentile's own arithmetic. Mean and Std sum the values in the
// series' order where Summarize sums them sorted: they may differ from its
// in the last bits. populationStd is PopulationStd of the finite values in
// the series' order, to the bit.
//
// work is the selection's working memory, which bounds what it holds: a
// bucket is collected when it has at most len(work) values, and each pass
// narrows as many buckets as fit in it. With fewer than StreamWorkWords
// words, that many are allocated.
func SummarizeStream(each func(yield func(float64)), percentiles []float64, work []uint64) (s Summary, populationStd float64) {
	if len(work) < StreamWorkWords {
		work = make([]uint64, StreamWorkWords)
	}
	return summarizeStream(each, percentiles, work, len(work))
}

// summarizeStream is SummarizeStream collecting buckets of at most
// collectLimit values (at most len(work)), which tests set small to make the
// selection go several levels deep.
func summarizeStream(each func(yield func(float64)), percentiles []float64, work []uint64, collectLimit int) (Summary, float64) {
	var n, dropped int
	var sum float64
	lo, hi := math.Inf(1), math.Inf(-1)
	each(func(x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			dropped++
			return
		}
		n++
		sum += x
		if x < lo {
			lo = x
		}
		if x > hi {
			hi = x
		}
	})
	// meanSS's arithmetic, in the series' order.
	mean := sum / float64(n)
	var ss, comp float64
	each(func(x float64) {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			d := x - mean
			ss += d * d
			comp += d
		}
	})
	ss -= comp * comp / float64(n)
	if ss < 0 {
		ss = 0
	}
	var ranks []int
	for _, p := range append(slices.Clone(percentiles), 50) {
		ranks = percentileRanks(ranks, n, p)
	}
	stat := selectRanks(each, n, ranks, work[:min(len(work), max(collectLimit, StreamWorkWords))], collectLimit)
	if n > 0 {
		stat[0], stat[n-1] = lo, hi
	}
	at := func(i int) float64 { return stat[i] }
	populationStd := math.NaN()
	if n > 0 {
		populationStd = math.Sqrt(ss / float64(n))
	}
	return summarizeOrdered(n, dropped, at, mean, ss, percentiles), populationStd
}

// orderKey maps a float64 to a uint64 in the same order (negative values
// below positive ones, -0 just below +0).
func orderKey(x float64) uint64 {
	b := math.Float64bits(x)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// keyValue is orderKey's inverse.
func keyValue(k uint64) float64 {
	if k>>63 != 0 {
		return math.Float64frombits(k &^ (1 << 63))
	}
	return math.Float64frombits(^k)
}

// rankTarget is one wanted order statistic (of rank want) during the
// selection: the bucket it lies in, the keys whose top depth digits are
// prefix (count of them), and its rank among them.
type rankTarget struct {
	want        int
	rank, count int
	prefix      uint64
	depth       int
}

// bucketPass is one bucket a pass narrows: its keys are collected (count of
// them) or counted by their next digit, in work[off:].
type bucketPass struct {
	prefix    uint64
	depth     int
	count     int
	collect   bool
	off, fill int
	// targetsFirst and targetsEnd delimit the bucket's targets in the
	// pending ones.
	targetsFirst, targetsEnd int
}

// selectRanks finds the order statistics of the given ranks among the n
// finite values each yields, by radix selection, and returns them by rank.
// The ranks 0 and n-1 are left to the caller (the minimum and maximum).
func selectRanks(each func(yield func(float64)), n int, ranks []int, work []uint64, collectLimit int) map[int]float64 {
	stat := make(map[int]float64, len(ranks))
	var pending []rankTarget
	for _, r := range ranks {
		if _, dup := stat[r]; dup || r == 0 || r == n-1 {
			continue
		}
		stat[r] = math.NaN()
		pending = append(pending, rankTarget{want: r, rank: r, count: n})
	}
	// Every pass settles a bucket or takes it a digit deeper; there are at
	// most 64/digitBits digits, so this ends.
	for len(pending) > 0 {
		// The targets of one bucket side by side.
		slices.SortFunc(pending, func(a, b rankTarget) int {
			return cmp.Or(cmp.Compare(a.depth, b.depth), cmp.Compare(a.prefix, b.prefix))
		})
		buckets, covered := planPass(pending, len(work), collectLimit)
		runPass(each, buckets, work)
		var next []rankTarget
		for i := range buckets {
			b := &buckets[i]
			for _, t := range pending[b.targetsFirst:b.targetsEnd] {
				if v, settled := narrow(b, &t, work); settled {
					stat[t.want] = v
				} else {
					next = append(next, t)
				}
			}
		}
		pending = append(next, pending[covered:]...)
	}
	return stat
}

// planPass lays out the buckets of the next pass in work (words): the
// distinct buckets of the sorted pending targets, from the first, as many
// as fit (at least one), and how many of the targets they cover.
func planPass(pending []rankTarget, words, collectLimit int) (buckets []bucketPass, covered int) {
	off := 0
	for i := 0; i < len(pending); i = buckets[len(buckets)-1].targetsEnd {
		t := pending[i]
		b := bucketPass{prefix: t.prefix, depth: t.depth, count: t.count, off: off, targetsFirst: i}
		b.collect = t.count <= collectLimit
		size := StreamWorkWords
		if b.collect {
			size = t.count
		}
		if len(buckets) > 0 && off+size > words {
			break
		}
		b.targetsEnd = i + 1
		for b.targetsEnd < len(pending) && pending[b.targetsEnd].depth == b.depth && pending[b.targetsEnd].prefix == b.prefix {
			b.targetsEnd++
		}
		buckets = append(buckets, b)
		off += size
	}
	return buckets, buckets[len(buckets)-1].targetsEnd
}

// runPass reads the series once, collecting or counting the keys of each
// bucket.
func runPass(each func(yield func(float64)), buckets []bucketPass, work []uint64) {
	for _, b := range buckets {
		if !b.collect {
			clear(work[b.off : b.off+StreamWorkWords])
		}
	}
	each(func(x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		k := orderKey(x)
		for i := range buckets {
			b := &buckets[i]
			// A shift by 64 is 0 in Go: at depth 0 every key matches.
			if k>>(64-digitBits*b.depth) != b.prefix {
				continue
			}
			if !b.collect {
				work[b.off+int(k>>(64-digitBits*(b.depth+1))&(StreamWorkWords-1))]++
			} else if b.fill < b.count {
				work[b.off+b.fill] = k
				b.fill++
			}
		}
	})
	for _, b := range buckets {
		if b.collect {
			slices.Sort(work[b.off : b.off+b.fill])
		}
	}
}

// narrow moves t into the part of b it lies in: the value itself when b was
// collected or the new digit completes the key (settled), else the digit's
// bucket, a level deeper.
func narrow(b *bucketPass, t *rankTarget, work []uint64) (v float64, settled bool) {
	if b.collect {
		keys := work[b.off : b.off+b.fill]
		if len(keys) == 0 {
			return math.NaN(), true // each yielded fewer values than before
		}
		return keyValue(keys[min(t.rank, len(keys)-1)]), true
	}
	hist := work[b.off : b.off+StreamWorkWords]
	below := 0
	digit := len(hist) - 1
	for d, c := range hist {
		if t.rank < below+int(c) {
			digit = d
			break
		}
		below += int(c)
	}
	t.rank -= below
	t.count = int(hist[digit])
	t.prefix = t.prefix<<digitBits | uint64(digit)
	t.depth++
	if t.depth*digitBits == 64 {
		return keyValue(t.prefix), true
	}
	return 0, false
}
