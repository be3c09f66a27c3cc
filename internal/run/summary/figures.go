package summary

import (
	"fmt"
	"runtime"

	"github.com/omnibench/omnibench/internal/run/offheap"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/stats"
)

// The distributions of a summary are computed one at a time, each in one
// reused scratch buffer outside the Go heap, sorted in place: the end of a
// long run then needs one column's worth of memory, not a copy of every
// figure's values at once, and gives it back when the summary is done.

// figure is one per-request distribution of the summary.
type figure struct {
	name, unit string
	// value is a measured request's value, when it has one; q is its
	// quality (nil when it has none).
	value func(set *Set, x *Sample, q *quality) (float64, bool)
	// pool, instead of value, names a per-event pool: gaps or stamps.
	pool func(set *Set) *pool
}

// completedAudio reports whether x completed with audio: the requests the
// audio figures are over.
func completedAudio(set *Set, x *Sample) bool { return set.OK(x) && x.HasAudio() }

// withAudio is a figure over the completed requests with audio.
func withAudio(f func(set *Set, x *Sample) (float64, bool)) func(*Set, *Sample, *quality) (float64, bool) {
	return func(set *Set, x *Sample, _ *quality) (float64, bool) {
		if !completedAudio(set, x) {
			return 0, false
		}
		return f(set, x)
	}
}

// audioRTF is the benchmark's audio RTF: the last chunk's for the chat
// path, the whole response's otherwise.
func audioRTF(set *Set, x *Sample) float64 {
	if set.ChatPath(x) {
		return x.RTFLastChunk
	}
	return x.RTFE2E
}

// firstAudioEvent is the benchmark's TTFP offset: for chat the first audio
// event even when it had no samples.
func firstAudioEvent(set *Set, x *Sample) float64 {
	first := x.TTFPS
	if set.Kind(x) == results.KindChat && x.FirstAudioEventS > 0 {
		first = min(first, x.FirstAudioEventS)
	}
	return first
}

// summaryFigures are the distributions of a Summary, in report order.
var summaryFigures = []figure{
	{name: MetricTTFP, unit: "ms", value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.Latency(x.TTFPS) * 1000, true })},
	{name: MetricTTFPFirstEvent, unit: "ms", value: withAudio(func(set *Set, x *Sample) (float64, bool) {
		return x.Latency(firstAudioEvent(set, x)) * 1000, true
	})},
	{name: MetricTTFAAudible, unit: "ms", value: withAudio(func(_ *Set, x *Sample) (float64, bool) {
		return x.Latency(x.TTFAAudibleS) * 1000, x.TTFAAudibleS > 0
	})},
	{name: MetricLeadingSilence, unit: "ms", value: withAudio(func(_ *Set, x *Sample) (float64, bool) {
		return x.LeadingSilenceS * 1000, x.flags&flagSilence != 0
	})},
	{name: MetricTTFT, unit: "ms", value: func(set *Set, x *Sample, _ *quality) (float64, bool) {
		return x.Latency(x.TTFTS) * 1000, set.OK(x) && x.TTFTS > 0
	}},
	{name: MetricE2E, unit: "ms", value: func(set *Set, x *Sample, _ *quality) (float64, bool) {
		return x.Latency(x.E2ES) * 1000, set.OK(x)
	}},
	{name: MetricTextGap, unit: "ms", pool: func(set *Set) *pool { return &set.gaps }},
	{name: MetricRTFLastChunk, value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.RTFLastChunk, x.AudioDurationS > 0 })},
	{name: MetricRTFE2E, value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.RTFE2E, x.AudioDurationS > 0 })},
	{name: MetricRTFServer, value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.RTFServer, x.flags&flagRTFServer != 0 })},
	{name: MetricAudioRTF, value: withAudio(func(set *Set, x *Sample) (float64, bool) { return audioRTF(set, x), x.AudioDurationS > 0 })},
	{name: MetricDuration, unit: "s", value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.AudioDurationS, true })},
	{name: MetricUnderrun, unit: "s", value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.Underrun() })},
	{name: MetricStalls, value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return float64(x.Stalls), x.stallResume() })},
	{name: MetricStallTime, unit: "s", value: withAudio(func(_ *Set, x *Sample) (float64, bool) { return x.StallTotalS, x.stallResume() })},
	{name: MetricLag, unit: "ms", value: func(_ *Set, x *Sample, _ *quality) (float64, bool) { return x.LagS * 1000, true }},
	{name: MetricStampDelay, unit: "ms", pool: func(set *Set) *pool { return &set.stamps }},
	{name: MetricQueue, unit: "ms", value: func(_ *Set, x *Sample, _ *quality) (float64, bool) { return x.QueueS * 1000, true }},
	{name: MetricInternalGap, unit: "ms", value: func(set *Set, x *Sample, q *quality) (float64, bool) {
		if q == nil || !q.checked || !completedAudio(set, x) {
			return 0, false
		}
		return q.longestGapS * 1000, true
	}},
	{name: MetricWER, value: func(set *Set, x *Sample, q *quality) (float64, bool) {
		if q == nil || !q.scored || !completedAudio(set, x) {
			return 0, false
		}
		return q.wer, true
	}},
	{name: MetricCER, value: func(set *Set, x *Sample, q *quality) (float64, bool) {
		if q == nil || !q.scored || !completedAudio(set, x) {
			return 0, false
		}
		return q.cer, true
	}},
}

// stallResume reports whether x has a stall-and-resume player's result.
func (x *Sample) stallResume() bool {
	return x.flags&flagContinuity != 0 && x.flags&flagStallResume != 0
}

// measuredFilter reports whether a sample is in the figures: not warm-up,
// and not ramp unless includeRamp.
func measuredFilter(includeRamp bool) func(*Sample) bool {
	return func(x *Sample) bool { return !x.Warmup() && (includeRamp || !x.Ramp()) }
}

// column is the values of one figure (not a pool's) over the samples that
// keep takes, in the order added, in sc.
func (f *figure) column(set *Set, keep func(*Sample) bool, sc *scratch) []float64 {
	xs := sc.take(set.Len())[:0]
	set.each(func(i int, x *Sample) {
		if !keep(x) {
			return
		}
		var q *quality
		if i < len(set.qualities) {
			q = &set.qualities[i]
		}
		if v, ok := f.value(set, x, q); ok {
			xs = append(xs, v)
		}
	})
	return xs
}

// addMetrics appends the distribution of every figure of set with values
// to s, in the order the report shows them.
func addMetrics(s *Summary, set *Set, opts Options, sc *scratch) {
	keep := measuredFilter(opts.IncludeRamp)
	for i := range summaryFigures {
		f := &summaryFigures[i]
		var sum stats.Summary
		if f.pool != nil {
			var err error
			if sum, _, err = f.pool(set).summary(opts.IncludeRamp, opts.Percentiles, sc); err != nil {
				s.Warnings = append(s.Warnings, fmt.Sprintf("%s left out: %v", f.name, err))
				continue
			}
		} else {
			sum = stats.SummarizeInPlace(f.column(set, keep, sc), opts.Percentiles)
		}
		if sum.N+sum.Dropped == 0 {
			continue
		}
		s.Metrics = append(s.Metrics, Metric{Name: f.name, Unit: f.unit, Summary: sum})
	}
	runtime.KeepAlive(set) // the pools' values are set's memory
}

// scratch is the buffers of the end-of-run figures, outside the Go heap
// and given back by free: one column of values and the pools' working
// memory.
type scratch struct {
	arena   offheap.Arena
	buf     []float64
	work    offheap.Arena
	wordBuf []uint64
}

// take returns n values of scratch space (their contents are undefined).
func (sc *scratch) take(n int) []float64 {
	if cap(sc.buf) < n {
		sc.arena.Free()
		sc.buf = offheap.Make[float64](&sc.arena, n)
	}
	return sc.buf[:n]
}

// words returns n words of working memory (their contents are undefined).
func (sc *scratch) words(n int) []uint64 {
	if len(sc.wordBuf) < n {
		sc.work.Free()
		sc.wordBuf = offheap.Make[uint64](&sc.work, n)
	}
	return sc.wordBuf[:n]
}

func (sc *scratch) free() {
	sc.arena.Free()
	sc.work.Free()
	sc.buf, sc.wordBuf = nil, nil
}
