package slo

import (
	"math"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// TestAudibleFigures: ttfa_audible (alias ttfa), leading_silence and
// audio_ttfp_first_event are SLO figures with time units, evaluated from
// the summary and, for an unsummarised percentile, from the records.
func TestAudibleFigures(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	recs := []results.Record{
		{Kind: results.KindChat, E2ES: 1, TTFPS: 0.1, FirstAudioEventS: 0.05, TTFAAudibleS: 0.3, LeadingSilenceS: f(0.2), AudioBytes: 10, AudioDurationS: 1},
		{Kind: results.KindChat, E2ES: 1, TTFPS: 0.1, FirstAudioEventS: 0.1, TTFAAudibleS: 0.5, LeadingSilenceS: f(0.4), AudioBytes: 10, AudioDurationS: 1},
	}
	s := summary.Compute(recs, summary.Options{Percentiles: []float64{50}})
	for _, tc := range []struct {
		expr     string
		observed float64
		pass     bool
	}{
		{"ttfa_audible_mean<500ms", 400, true},
		{"ttfa_p50<=0.35s", 400, false},
		{"ttfa_audible_max<=500ms", 500, true},
		{"ttfa_audible_p90<0.5s", 480, true}, // not summarised: from the records (linear interpolation)
		{"leading_silence_max<300ms", 400, false},
		{"audio_ttfp_first_event_mean<=75ms", 75, true},
	} {
		slo, err := Parse(tc.expr)
		if err != nil {
			t.Errorf("%s: %v", tc.expr, err)
			continue
		}
		r := Evaluate([]SLO{slo}, s, recs)[0]
		if math.Abs(r.Observed-tc.observed) > 1e-9 || r.Pass != tc.pass {
			t.Errorf("%s: observed %v pass %v, want %v %v (%s)", tc.expr, r.Observed, r.Pass, tc.observed, tc.pass, r.Message)
		}
	}
	// Never audible: no data, and the SLO fails saying why.
	quiet := []results.Record{{Kind: results.KindSpeech, E2ES: 1, TTFPS: 0.1, LeadingSilenceS: f(1), AudioBytes: 10, AudioDurationS: 1}}
	slo, _ := Parse("ttfa_audible_p95<1s")
	if r := Evaluate([]SLO{slo}, summary.Compute(quiet, summary.Options{}), quiet)[0]; !r.NoData || r.Pass {
		t.Errorf("never audible: %+v", r)
	}
}
