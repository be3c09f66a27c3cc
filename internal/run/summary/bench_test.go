package summary

import (
	"math"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestBenchBenchmarkSemantics checks the bench block against values computed
// by hand with the vLLM-Omni benchmark's definitions (numpy.std with
// ddof=0, every successful request a sample, chat continuous).
func TestBenchBenchmarkSemantics(t *testing.T) {
	speechCont := func(under float64, ok bool) *results.Continuity {
		return &results.Continuity{Mode: "default", MaxUnderrunS: under, OK: map[string]bool{"100": ok}}
	}
	recs := []results.Record{
		{Seq: 0, Warmup: true, Kind: results.KindSpeech, E2ES: 9, TTFPS: 9, AudioBytes: 1, AudioDurationS: 1},
		// Speech with audio: ttfp 0.1 s, rtf_e2e 0.5, 2 s, underrun 0.3 s (not continuous).
		{Seq: 1, Kind: results.KindSpeech, SentS: 0, E2ES: 1, TTFPS: 0.1, AudioBytes: 96000, AudioFrames: 48000,
			AudioDurationS: 2, RTFE2E: 0.5, RTFLastChunk: 0.45, LagS: 0.5, Continuity: speechCont(0.3, false)},
		// Speech with audio: ttfp 0.3 s, rtf_e2e 1.5, 2 s, underrun 0 (continuous).
		{Seq: 2, Kind: results.KindSpeech, SentS: 1, E2ES: 3, TTFPS: 0.3, AudioBytes: 96000, AudioFrames: 48000,
			AudioDurationS: 2, RTFE2E: 1.5, RTFLastChunk: 1.4, Continuity: speechCont(0, true)},
		// Speech that succeeded without audio: zeros in every audio figure, continuous.
		{Seq: 3, Kind: results.KindSpeech, SentS: 2, E2ES: 0.5},
		// Chat with audio: ttft 0.05 s, ttfp 0.2 s, rtf = last chunk 0.8; its
		// measured underrun (0.4) and verdict (not OK) do not count.
		{Seq: 4, Kind: results.KindChat, SentS: 3, E2ES: 1.5, TTFTS: 0.05, TTFPS: 0.2, AudioBytes: 48000,
			AudioFrames: 24000, AudioDurationS: 1, RTFLastChunk: 0.8, RTFE2E: 1.5, Continuity: speechCont(0.4, false),
			TextGapsS: []float64{0.01, 0.03}},
		// A failure is no sample.
		{Seq: 5, Kind: results.KindSpeech, SentS: 4, E2ES: 0.2, ErrorClass: results.ErrHTTPStatus, Status: 500},
	}
	s := Compute(recs, Options{Percentiles: []float64{50, 99}})
	b := s.Bench()
	// Four successful samples per distribution.
	// audio_ttfp_ms: [100 300 0 200]: mean 150; deviations -50 150 -150 50,
	// squares 2500+22500+22500+2500 = 50000, /4 = 12500: std sqrt(12500) =
	// 111.80339887498948 (n-1 would give 129.09944487358058). Sorted
	// [0 100 200 300]: median 150, p99 h = 2.97 -> 200 + 0.97*100 = 297.
	approx(t, "mean_audio_ttfp_ms", b["mean_audio_ttfp_ms"], 150)
	approx(t, "std_audio_ttfp_ms", b["std_audio_ttfp_ms"], math.Sqrt(12500))
	approx(t, "median_audio_ttfp_ms", b["median_audio_ttfp_ms"], 150)
	approx(t, "p99_audio_ttfp_ms", b["p99_audio_ttfp_ms"], 297)
	// audio_rtf: [0.5 1.5 0 0.8]: mean 0.7; deviations -0.2 0.8 -0.7 0.1,
	// squares 0.04+0.64+0.49+0.01 = 1.18, /4 = 0.295.
	approx(t, "mean_audio_rtf", b["mean_audio_rtf"], 0.7)
	approx(t, "std_audio_rtf", b["std_audio_rtf"], math.Sqrt(0.295))
	// audio_duration_s: [2 2 0 1]: mean 1.25; squares 0.5625*2+1.5625+0.0625 = 2.75, /4.
	approx(t, "mean_audio_duration_s", b["mean_audio_duration_s"], 1.25)
	approx(t, "std_audio_duration_s", b["std_audio_duration_s"], math.Sqrt(2.75/4))
	// audio_underrun_s: [0.3 0 0 0] (chat counts 0): mean 0.075;
	// squares 0.050625 + 3*0.005625 = 0.0675, /4 = 0.016875.
	approx(t, "mean_audio_underrun_s", b["mean_audio_underrun_s"], 0.075)
	approx(t, "std_audio_underrun_s", b["std_audio_underrun_s"], math.Sqrt(0.016875))
	// Continuity: request 1 is not continuous; 2 is; 3 (no audio) and 4
	// (chat) count as continuous: 3 of 4.
	approx(t, "audio_continuity_ok_rate", b["audio_continuity_ok_rate"], 0.75)
	// ttft_ms: [0 0 0 50] (speech has no text): mean 12.5, std sqrt(1875/4)... squares
	// 3*156.25 + 1406.25 = 1875, /4 = 468.75.
	approx(t, "mean_ttft_ms", b["mean_ttft_ms"], 12.5)
	approx(t, "std_ttft_ms", b["std_ttft_ms"], math.Sqrt(468.75))
	// e2el_ms from the send (request 1's lag is not added): [1000 3000 500 1500]:
	// mean 1500; squares 250000+2250000+1000000+0 = 3500000, /4 = 875000.
	approx(t, "mean_e2el_ms", b["mean_e2el_ms"], 1500)
	approx(t, "std_e2el_ms", b["std_e2el_ms"], math.Sqrt(875000))
	// itl_ms: [10 30]: mean 20, std 10 (n-1 would give 14.14).
	approx(t, "mean_itl_ms", b["mean_itl_ms"], 20)
	approx(t, "std_itl_ms", b["std_itl_ms"], 10)
	approx(t, "completed", b["completed"], 4)
	approx(t, "failed", b["failed"], 1)
	approx(t, "total_audio_duration_s", b["total_audio_duration_s"], 5)
	approx(t, "total_audio_frames", b["total_audio_frames"], 120000)
	for _, k := range []string{"mean_rtf_last_chunk", "mean_rtf_e2e", "audio_continuity_ok_rate_100ms"} {
		if _, ok := b[k]; ok {
			t.Errorf("%s is not a key of the benchmark", k)
		}
	}

	// The main summary keeps omnibench's definitions: sample std over the
	// responses with audio only ([100 300 200]: std 100).
	ttfp, _ := s.Metric(MetricTTFP)
	approx(t, "summary ttfp n", float64(ttfp.N), 3)
	approx(t, "summary ttfp std", ttfp.Std, 100)
}

func TestBenchWithoutCompute(t *testing.T) {
	var s Summary
	s.Requests.Completed = 2
	b := s.Bench()
	if b["completed"] != 2 {
		t.Errorf("completed = %v", b["completed"])
	}
	if _, ok := b["mean_audio_ttfp_ms"]; ok {
		t.Error("a summary without samples reports a distribution")
	}
}
