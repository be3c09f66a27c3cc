package summary

import (
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestAudibleAndFirstEventFigures: hand-checked distributions of TTFA
// audible, leading silence and the benchmark's TTFP (first audio event, even
// empty), and their bench keys beside audio_ttfp_ms.
func TestAudibleAndFirstEventFigures(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	recs := []results.Record{
		// Chat with an empty first audio event at 0.05 s, audible at 0.3 s.
		{Kind: results.KindChat, E2ES: 1, TTFPS: 0.1, FirstAudioEventS: 0.05, TTFAAudibleS: 0.3,
			LeadingSilenceS: f(0.2), AudioBytes: 4800, AudioDurationS: 0.1},
		// Chat without an empty event: the benchmark's TTFP is TTFP.
		{Kind: results.KindChat, E2ES: 1, TTFPS: 0.2, FirstAudioEventS: 0.2, TTFAAudibleS: 0.2,
			LeadingSilenceS: f(0), AudioBytes: 4800, AudioDurationS: 0.1},
		// Speech never audible: no TTFA, the whole 0.5 s leading silence;
		// a stray FirstAudioEventS is ignored for speech.
		{Kind: results.KindSpeech, E2ES: 1, TTFPS: 0.3, FirstAudioEventS: 0.01,
			LeadingSilenceS: f(0.5), AudioBytes: 4800, AudioDurationS: 0.5},
	}
	s := Compute(recs, Options{Percentiles: []float64{50}})
	ttfa, ok := s.Metric(MetricTTFAAudible)
	if !ok || ttfa.N != 2 {
		t.Fatalf("ttfa audible: %+v", ttfa)
	}
	approx(t, "ttfa mean", ttfa.Mean, 250)
	sil, _ := s.Metric(MetricLeadingSilence)
	approx(t, "leading silence mean", sil.Mean, 700.0/3)
	ev, _ := s.Metric(MetricTTFPFirstEvent)
	approx(t, "first-event ttfp mean", ev.Mean, (50+200+300)/3.0)
	ttfp, _ := s.Metric(MetricTTFP)
	approx(t, "ttfp mean", ttfp.Mean, 200)

	b := s.Bench()
	// The bench block takes the benchmark's TTFP (first event) under its
	// key and omnibench's beside it.
	for k, want := range map[string]float64{
		"mean_audio_ttfp_ms": 550.0 / 3, "mean_audio_ttfp_nonempty_ms": 200,
		"mean_ttfa_audible_ms": 250, "median_ttfa_audible_ms": 250, "mean_leading_silence_ms": 700.0 / 3,
	} {
		got, ok := b[k]
		if !ok {
			t.Errorf("bench key %s missing", k)
			continue
		}
		approx(t, k, got, want)
	}

	// From the intended start: the lag shifts TTFA like TTFP; not the silence.
	recs[0].LagS = 0.1
	recs[0].LatencyOrigin = results.OriginIntended
	s = Compute(recs[:1], Options{})
	ttfa, _ = s.Metric(MetricTTFAAudible)
	sil, _ = s.Metric(MetricLeadingSilence)
	approx(t, "shifted ttfa", ttfa.Mean, 400)
	approx(t, "unshifted silence", sil.Mean, 200)
}
