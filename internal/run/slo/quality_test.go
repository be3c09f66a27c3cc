package slo

import (
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// TestQualityFigures: the audio-quality gates of the grammar. WER is a
// fraction (a limit in % or plain), the internal gap a time, the defect
// rate a share of the checked responses; a run that checked nothing has no
// data for them.
func TestQualityFigures(t *testing.T) {
	rec := func(gap float64, defects []string, wer float64) results.Record {
		return results.Record{Kind: results.KindSpeech, E2ES: 1, TTFPS: 0.1, AudioBytes: 4800, AudioFrames: 2400,
			AudioDurationS: 0.1, Audio: &results.AudioCheck{LongestGapS: gap, Defects: defects}, ASR: &results.ASRScore{WER: wer}}
	}
	recs := []results.Record{rec(0.1, nil, 0.02), rec(0.4, []string{"internal_gap"}, 0.3),
		rec(0.05, nil, 0.04), rec(0, nil, 0.06)}
	s := summary.Compute(recs, summary.Options{})
	for text, pass := range map[string]bool{
		"audio_defect_rate<30%":  true,
		"audio_defect_rate<0.25": false,
		"internal_gap_max<300ms": false,
		"internal_gap_max<0.5s":  true,
		"wer_mean<15%":           true,
		"wer_mean<0.1":           false,
		"wer_p50<6%":             true,
		"cer_max<=0":             true,
	} {
		slos, err := Parse(text)
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		r := Evaluate([]SLO{slos}, s, nil)[0]
		if r.Pass != pass || r.NoData {
			t.Errorf("%s: pass %v (no data %v), want %v: %s", text, r.Pass, r.NoData, pass, r.Message)
		}
	}
	if _, err := Parse("wer_mean<5ms"); err == nil || !strings.Contains(err.Error(), "fraction") {
		t.Errorf("wer with a time unit: %v", err)
	}
	bare := summary.Compute([]results.Record{{Kind: results.KindSpeech, E2ES: 1}}, summary.Options{})
	for _, text := range []string{"audio_defect_rate<1%", "internal_gap_max<300ms", "wer_p95<15%"} {
		slos, _ := Parse(text)
		if r := Evaluate([]SLO{slos}, bare, nil)[0]; !r.NoData {
			t.Errorf("%s without checks: %+v, want no data", text, r)
		}
	}
}
