package abtest

import (
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
)

// HTML returns the result as a self-contained HTML report: the tables of
// Tables, then for each metric the two arms' distributions (CDFs) overlaid.
// Metrics are named as in package summary (e2e_ms, ttfp_ms, audio_rtf) so
// the charts match those of a run report.
func (r *Result) HTML() report.HTMLReport {
	names := map[string]string{"e2e": summary.MetricE2E, "ttfp": summary.MetricTTFP, "audio_rtf": summary.MetricAudioRTF}
	arm := func(a *ArmResult) report.ABArm {
		out := report.ABArm{Name: a.Name + ": " + a.Label, Samples: map[string][]float64{}, Units: map[string]string{}}
		for _, mr := range r.Metrics {
			name, ok := names[mr.Metric.Name]
			if !ok {
				name = mr.Metric.Name
			}
			xs := mr.SamplesA
			if a == r.B {
				xs = mr.SamplesB
			}
			scaled := make([]float64, len(xs))
			for i, x := range xs {
				scaled[i] = x * mr.Metric.Scale
			}
			out.Samples[name] = scaled
			if mr.Metric.Display != "x" {
				out.Units[name] = mr.Metric.Display
			}
		}
		return out
	}
	return report.HTMLReport{Title: "omnibench ab", Sections: report.ABSections(arm(r.A), arm(r.B), r.Tables())}
}
