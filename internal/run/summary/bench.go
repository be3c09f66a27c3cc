package summary

import (
	"math"
	"sort"
	"strconv"

	"github.com/omnibench/omnibench/internal/run/results"
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

// benchSamples are the benchmark's per-request samples of one run.
type benchSamples struct {
	percentiles []float64
	dists       map[string][]float64 // key stem -> samples in the key's unit
	okCount     int                  // continuous responses (benchmark semantics)
	completed   int
}

// benchContinuityMS is the threshold of the benchmark's continuity verdict
// that omnibench reports under audio_continuity_ok_rate.
const benchContinuityMS = "100"

// benchSamplesOf collects the benchmark's samples from the successful
// measured records (ramp-phase ones only with includeRamp, as the figures).
func benchSamplesOf(set *Set, percentiles []float64, includeRamp bool) *benchSamples {
	b := &benchSamples{percentiles: percentiles, dists: map[string][]float64{}}
	add := func(stem string, v float64) { b.dists[stem] = append(b.dists[stem], v) }
	set.gaps.each(includeRamp, func(g float64) { add("itl_ms", 1000*g) })
	set.All(func(r *Sample) {
		if r.Warmup() || !set.OK(r) || (r.Ramp() && !includeRamp) {
			return
		}
		b.completed++
		add("ttft_ms", 1000*r.TTFTS)
		add("e2el_ms", 1000*r.E2ES)
		var ttfp, rtf, underrun float64
		ok := true
		if r.HasAudio() {
			ttfp = r.TTFPS
			add("audio_ttfp_nonempty_ms", 1000*r.TTFPS)
			if set.Kind(r) == results.KindChat && r.FirstAudioEventS > 0 {
				ttfp = min(ttfp, r.FirstAudioEventS)
			}
			if r.TTFAAudibleS > 0 {
				add("ttfa_audible_ms", 1000*r.TTFAAudibleS)
			}
			if r.flags&flagSilence != 0 {
				add("leading_silence_ms", 1000*r.LeadingSilenceS)
			}
			if r.AudioDurationS > 0 {
				rtf = r.RTFE2E
				if set.ChatPath(r) {
					rtf = r.RTFLastChunk
				}
			}
			if r.flags&flagContinuity != 0 && !set.ChatPath(r) {
				underrun = r.MaxUnderrunS
				ok, _ = set.Continuous(r, benchContinuityMS, 0.1)
			}
		}
		if !r.HasAudio() {
			add("audio_ttfp_nonempty_ms", 0) // zero-filled like audio_ttfp_ms
		}
		add("audio_ttfp_ms", 1000*ttfp)
		add("audio_rtf", rtf)
		add("audio_duration_s", r.AudioDurationS)
		add("audio_underrun_s", underrun)
		if ok {
			b.okCount++
		}
	})
	return b
}

// benchStems are the distribution keys of the bench block, in key order.
var benchStems = []string{"ttft_ms", "e2el_ms", "itl_ms", "audio_ttfp_ms", "audio_rtf", "audio_duration_s", "audio_underrun_s",
	"audio_ttfp_nonempty_ms", "ttfa_audible_ms", "leading_silence_ms"}

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
	for _, stem := range benchStems {
		xs := b.dists[stem]
		if len(xs) == 0 {
			continue
		}
		sum := stats.Summarize(xs, b.percentiles)
		put := func(k string, v float64) {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				out[k] = v
			}
		}
		put("mean_"+stem, sum.Mean)
		put("median_"+stem, sum.Median)
		put("std_"+stem, stats.PopulationStd(xs))
		for _, p := range sum.Percentiles {
			put("p"+strconv.FormatFloat(p.P, 'f', -1, 64)+"_"+stem, p.Value)
		}
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
