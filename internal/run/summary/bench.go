package summary

import (
	"math"
	"runtime"
	"sort"
	"strconv"

	"github.com/omnibench/omnibench/stats"
)

// The bench block: the figures of the vLLM-Omni benchmark client
// (vllm bench serve --omni), computed the way it computes them, so that a
// Bench map can be compared key by key with the benchmark's JSON. Its
// definitions differ from omnibench's own in the main summary on purpose:
//
//   - std_* is the population standard deviation (numpy.std, ddof=0); the
//     main summary's std is the sample one (n-1).
//   - Every successful request is a sample of every distribution: a response
//     without audio contributes 0 to audio_ttfp, audio_rtf, audio_duration and
//     audio_underrun, one without text 0 to ttft, and counts as continuous. The
//     main summary leaves such responses out of the audio and text figures.
//   - Chat responses are continuous and have no underrun, as the benchmark
//     does not measure chat continuity (docs/reference/benchmark.md,
//     section 1); speech
//     responses use omnibench's measured underrun and the 100 ms verdict.
//   - Latencies are measured from the actual send (the benchmark starts its
//     clock when it sends), not from the intended start.
//   - audio_rtf is the last-chunk RTF for chat and the whole-response RTF for
//     speech.
//   - audio_ttfp is, for chat, the first modality "audio" event even when its
//     content is empty (an audio output without samples, upstream #5237), as
//     the benchmark takes it; omnibench's TTFP (first non-empty audio) is
//     audio_ttfp_nonempty. ttfa_audible and leading_silence are omnibench's
//     own (package onset), with samples only from the responses that have
//     them (audible ones; ones with s16 audio), not zero-filled.
//
// The keys: completed, failed, duration, request_throughput,
// total_audio_duration_s, total_audio_frames, audio_throughput,
// audio_continuity_ok_rate, request_goodput (with goodput SLOs), and mean_,
// median_, std_ and p<P>_ of ttft_ms, e2el_ms, itl_ms, audio_ttfp_ms,
// audio_rtf, audio_duration_s and audio_underrun_s; omnibench's own
// audio_ttfp_nonempty_ms, ttfa_audible_ms and leading_silence_ms.

// benchFigures are the bench block's figures of one run: the distributions'
// (under their keys: mean_, median_, std_ and p<P>_ of each stem) and the
// counts of the continuity rate.
type benchFigures struct {
	dists     map[string]float64
	okCount   int // continuous responses (benchmark semantics)
	completed int
}

// benchContinuityMS is the threshold of the benchmark's continuity verdict
// that omnibench reports under audio_continuity_ok_rate.
const benchContinuityMS = "100"

// benchStem is one distribution of the bench block: its key stem and a
// successful measured request's value, when it has one (itl_ms is the text
// gaps' pool).
type benchStem struct {
	stem  string
	value func(set *Set, x *Sample) (float64, bool)
}

// benchStems are the distributions of the bench block, in key order.
var benchStems = []benchStem{
	{"ttft_ms", func(_ *Set, x *Sample) (float64, bool) { return 1000 * x.TTFTS, true }},
	{"e2el_ms", func(_ *Set, x *Sample) (float64, bool) { return 1000 * x.E2ES, true }},
	{"itl_ms", nil},
	{"audio_ttfp_ms", func(set *Set, x *Sample) (float64, bool) {
		if !x.HasAudio() {
			return 0, true
		}
		return 1000 * firstAudioEvent(set, x), true
	}},
	{"audio_rtf", func(set *Set, x *Sample) (float64, bool) {
		if !x.HasAudio() || x.AudioDurationS <= 0 {
			return 0, true
		}
		return audioRTF(set, x), true
	}},
	{"audio_duration_s", func(_ *Set, x *Sample) (float64, bool) { return x.AudioDurationS, true }},
	{"audio_underrun_s", func(set *Set, x *Sample) (float64, bool) {
		if x.HasAudio() && x.flags&flagContinuity != 0 && !set.ChatPath(x) {
			return x.MaxUnderrunS, true
		}
		return 0, true
	}},
	{"audio_ttfp_nonempty_ms", func(_ *Set, x *Sample) (float64, bool) {
		if !x.HasAudio() {
			return 0, true // zero-filled like audio_ttfp_ms
		}
		return 1000 * x.TTFPS, true
	}},
	{"ttfa_audible_ms", func(_ *Set, x *Sample) (float64, bool) {
		return 1000 * x.TTFAAudibleS, x.HasAudio() && x.TTFAAudibleS > 0
	}},
	{"leading_silence_ms", func(_ *Set, x *Sample) (float64, bool) {
		return 1000 * x.LeadingSilenceS, x.HasAudio() && x.flags&flagSilence != 0
	}},
}

// benchOf computes the bench block's figures from the successful measured
// requests (ramp-phase ones only with includeRamp, as the figures), one
// distribution at a time in sc.
func benchOf(set *Set, percentiles []float64, includeRamp bool, sc *scratch) *benchFigures {
	b := &benchFigures{dists: map[string]float64{}}
	measured := measuredFilter(includeRamp)
	keep := func(x *Sample) bool { return measured(x) && set.OK(x) }
	set.All(func(x *Sample) {
		if !keep(x) {
			return
		}
		b.completed++
		ok := true
		if x.HasAudio() && x.flags&flagContinuity != 0 && !set.ChatPath(x) {
			ok, _ = set.Continuous(x, benchContinuityMS, 0.1)
		}
		if ok {
			b.okCount++
		}
	})
	for _, d := range benchStems {
		var sum stats.Summary
		var std float64
		if d.value == nil {
			var err error
			if sum, std, err = set.gaps.summary(includeRamp, percentiles, sc); err != nil {
				continue // the main summary warns of it
			}
		} else {
			f := figure{value: func(set *Set, x *Sample, _ *quality) (float64, bool) { return d.value(set, x) }}
			xs := f.column(set, keep, sc)
			// The standard deviation sums the values in the order kept,
			// before the summary sorts them.
			std = stats.PopulationStd(xs)
			sum = stats.SummarizeInPlace(xs, percentiles)
		}
		if sum.N+sum.Dropped > 0 {
			b.put(d.stem, sum, std)
		}
	}
	runtime.KeepAlive(set) // the text gaps are set's memory
	return b
}

// put sets the figures of one distribution: its summary and its population
// standard deviation.
func (b *benchFigures) put(stem string, sum stats.Summary, std float64) {
	put := func(k string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			b.dists[k] = v
		}
	}
	put("mean_"+stem, sum.Mean)
	put("median_"+stem, sum.Median)
	put("std_"+stem, std)
	for _, p := range sum.Percentiles {
		put("p"+strconv.FormatFloat(p.P, 'f', -1, 64)+"_"+stem, p.Value)
	}
}

// Bench returns the figures under the vLLM-Omni benchmark's key names with
// the benchmark's definitions (see the comment at the top of this file).
// Undefined figures (a distribution without samples) are left out. A
// Summary that Compute did not build (decoded from JSON) has only the
// counts, rates and totals.
func (s *Summary) Bench() map[string]float64 {
	out := map[string]float64{
		"completed":              float64(s.Requests.Completed),
		"failed":                 float64(s.Requests.Failed),
		"duration":               s.DurationS,
		"request_throughput":     s.RequestRate,
		"total_audio_duration_s": s.Audio.TotalDurationS,
		"total_audio_frames":     float64(s.Audio.TotalFrames),
		"audio_throughput":       s.Audio.Throughput,
	}
	if s.Goodput != nil {
		out["request_goodput"] = s.Goodput.Rate
	}
	b := s.bench
	if b == nil {
		return out
	}
	if b.completed > 0 {
		out["audio_continuity_ok_rate"] = float64(b.okCount) / float64(b.completed)
	}
	for k, v := range b.dists {
		out[k] = v
	}
	return out
}

// BenchKeys returns Bench's keys sorted, for stable output.
func BenchKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
