package runner

import (
	"math"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

func TestRealtimeBench(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	turn := func(session int, ttfp float64, rtf, ttft *float64, class string) results.Record {
		return results.Record{Kind: results.KindRealtime, ErrorClass: class,
			WS: &results.WSTurn{Session: session, Bench: &results.WSBench{TTFPS: ttfp, RTF: rtf, TTFTS: ttft}}}
	}
	recs := []results.Record{
		turn(0, 0.1, f(0.5), nil, ""),
		turn(0, 0.3, nil, nil, ""),
		turn(1, 0.4, f(1.0), f(0.05), ""),
		turn(2, 0.2, f(9), f(9), ""),
		turn(2, 0, nil, nil, results.ErrStreamError), // fails session 2
		{Kind: results.KindRealtime, Warmup: true, WS: &results.WSTurn{Session: 3, Bench: &results.WSBench{TTFPS: 5}}},
	}
	bench := map[string]float64{"mean_audio_ttfp_ms": -1, "std_audio_ttfp_ms": -1, "p90_audio_rtf": -1, "total_audio_frames": 7}
	realtimeBench(bench, summary.SetOf(recs).Realtime(), []float64{50, 90}, 4)
	// Sessions 0 and 1: TTFP (100+300)/2 = 200 and 400 ms; RTF 0.5 and 1.0;
	// TTFT 0 (none) and 50 ms. numpy: percentile([200, 400], 90) = 380.
	want := map[string]float64{
		"completed": 2, "failed": 1, "request_throughput": 0.5, "total_audio_frames": 7,
		"mean_audio_ttfp_ms": 300, "median_audio_ttfp_ms": 300, "p50_audio_ttfp_ms": 300, "p90_audio_ttfp_ms": 380,
		"mean_audio_rtf": 0.75, "median_audio_rtf": 0.75, "p50_audio_rtf": 0.75, "p90_audio_rtf": 0.95,
		"mean_ttft_ms": 25, "median_ttft_ms": 25, "p50_ttft_ms": 25, "p90_ttft_ms": 45,
	}
	for k, v := range want {
		if got, ok := bench[k]; !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if len(bench) != len(want) {
		t.Errorf("keys %v, want exactly %v", bench, want)
	}

	other := map[string]float64{"mean_audio_ttfp_ms": 1}
	realtimeBench(other, summary.SetOf([]results.Record{{Kind: results.KindSpeechWS, WS: &results.WSTurn{}}}).Realtime(), nil, 1)
	if other["mean_audio_ttfp_ms"] != 1 || len(other) != 1 {
		t.Errorf("a speech-ws run's bench block changed: %v", other)
	}
}
