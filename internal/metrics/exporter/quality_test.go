package exporter

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/load"
)

// TestQualityFamilies: with AudioChecks the checked responses and their
// defects by reason are exported (an unknown reason as other, a failed
// response not at all); without, no such family exists.
func TestQualityFamilies(t *testing.T) {
	plain, err := New(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := testutil.GatherAndCount(plain.Metrics().Registry(), omnimetrics.PrefixClient+"audio_checked_total"); n != 0 {
		t.Errorf("without checks: %d audio_checked_total series", n)
	}
	opts := goldenOptions()
	opts.AudioChecks = true
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	rec := func(ok bool, defects ...string) *results.Record {
		r := &results.Record{Kind: results.KindSpeech, AudioBytes: 480, AudioFrames: 240, SampleRate: 24000, TTFPS: 0.1, E2ES: 0.2,
			Audio: &results.AudioCheck{LongestGapS: 0.5, Defects: defects}}
		if !ok {
			r.ErrorClass = results.ErrTruncated
		}
		return r
	}
	for _, r := range []*results.Record{rec(true), rec(true, "clipped", "internal_gap"), rec(true, "strange"), rec(false, "clipped")} {
		e.OnStart(load.Arrival{})
		e.OnRecord(r)
	}
	q := e.quality
	if got := testutil.ToFloat64(q.checked); got != 3 {
		t.Errorf("checked %v, want 3 (the failed response is not counted)", got)
	}
	for reason, want := range map[string]float64{"clipped": 1, "internal_gap": 1, "all_silent": 0, classOther: 1} {
		if got := testutil.ToFloat64(q.defects[reason]); got != want {
			t.Errorf("defects{reason=%q} %v, want %v", reason, got, want)
		}
	}
	problems, err := promlint.NewWithMetricFamilies(gatherAll(t, e)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		for _, f := range QualityFamilies() {
			if p.Metric == omnimetrics.PrefixClient+f.Name && p.Text != "metric names should not contain ':'" {
				t.Errorf("lint: %s: %s", p.Metric, p.Text)
			}
		}
	}
}
