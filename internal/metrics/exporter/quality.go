package exporter

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
)

// defectReasons are the reason label values of audio_defects_total (the
// defects of package audiocheck); any other counts as classOther, so the
// label set stays bounded.
var defectReasons = [...]string{"all_silent", "clipped", "internal_gap"}

// QualityFamilies are the signal-check families (names without the
// prefix). They are registered only with Options.AudioChecks, so a run
// without the checks exports what it always did.
func QualityFamilies() []omnimetrics.FamilySpec {
	model := []string{omnimetrics.LabelModelName}
	return []omnimetrics.FamilySpec{
		{Name: "audio_checked_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Completed measured responses whose decoded audio was checked (--audio-checks)"},
		{Name: "audio_defects_total", Type: omnimetrics.TypeCounter,
			Labels: []string{omnimetrics.LabelModelName, LabelReason},
			Help:   "Checked responses flagged audio_defect, by reason (all_silent, clipped, internal_gap); a response can count under several; defects are not errors"},
		{Name: "audio_internal_gap_seconds", Type: omnimetrics.TypeHistogram, Labels: model,
			Buckets: omnimetrics.SecondsFastBuckets(),
			Help:    "Longest gap of near-silence inside each checked response's audio"},
	}
}

// qualityMetrics observes the signal checks.
type qualityMetrics struct {
	checked prometheus.Counter
	defects map[string]prometheus.Counter // by reason, classOther included
	gap     prometheus.Observer
}

func newQualityMetrics(reg prometheus.Registerer, opts Options) (*qualityMetrics, error) {
	modelOnly := prometheus.Labels{omnimetrics.LabelModelName: opts.ModelName}
	var vecs []prometheus.Collector
	for _, spec := range QualityFamilies() {
		c, err := register(reg, spec, constLabels(opts))
		if err != nil {
			return nil, err
		}
		vecs = append(vecs, c)
	}
	q := &qualityMetrics{
		checked: vecs[0].(*prometheus.CounterVec).With(modelOnly),
		defects: map[string]prometheus.Counter{},
		gap:     vecs[2].(*prometheus.HistogramVec).With(modelOnly),
	}
	for _, reason := range append(defectReasons[:], classOther) {
		q.defects[reason] = vecs[1].(*prometheus.CounterVec).With(prometheus.Labels{omnimetrics.LabelModelName: opts.ModelName, LabelReason: reason})
	}
	return q, nil
}

// observe counts one completed response's check.
func (q *qualityMetrics) observe(a *results.AudioCheck) {
	q.checked.Inc()
	q.gap.Observe(max(a.LongestGapS, 0))
	for _, d := range a.Defects {
		if !slices.Contains(defectReasons[:], d) {
			d = classOther
		}
		q.defects[d].Inc()
	}
}
