package summary

import (
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestQuality: defects are counted beside the error classes, over the
// measured completed responses that were checked; a flagged response keeps
// its latencies; transcription scores arrive in the record (a results file)
// or later by index (a live run).
func TestQuality(t *testing.T) {
	rec := func(id string, ok bool, a *results.AudioCheck, asr *results.ASRScore) results.Record {
		r := results.Record{ID: id, Kind: results.KindSpeech, E2ES: 1, TTFPS: 0.1, AudioBytes: 4800,
			AudioFrames: 2400, AudioDurationS: 0.1, Audio: a, ASR: asr}
		if !ok {
			r.ErrorClass = results.ErrTruncated
		}
		return r
	}
	clean := &results.AudioCheck{LongestGapS: 0.05}
	gap := &results.AudioCheck{LongestGapS: 1.5, Defects: []string{"internal_gap"}}
	both := &results.AudioCheck{LongestGapS: 1.2, Defects: []string{"clipped", "internal_gap"}}
	recs := []results.Record{
		rec("a", true, clean, &results.ASRScore{WER: 0.1}),
		rec("b", true, gap, &results.ASRScore{WER: 0.5}),
		rec("c", true, both, nil),
		rec("d", false, both, nil), // failed: not in the quality figures
		rec("e", true, nil, nil),   // unchecked
	}
	s := Compute(recs, Options{})
	q := s.Quality
	if q == nil {
		t.Fatal("no quality figures")
	}
	if q.Checked != 3 || q.Defects != 2 || q.DefectRate != 2.0/3 || q.InternalGapMaxS != 1.5 ||
		q.ByDefect["internal_gap"] != 2 || q.ByDefect["clipped"] != 1 {
		t.Errorf("quality %+v", q)
	}
	if e2e, _ := s.Metric(MetricE2E); e2e.N != 4 {
		t.Errorf("e2e over %d responses, want 4 (defects keep their latencies)", e2e.N)
	}
	if g, _ := s.Metric(MetricInternalGap); g.N != 3 || g.Max != 1500 {
		t.Errorf("internal gap metric %+v", g)
	}
	if a := q.ASR; a == nil || a.Scored != 2 || a.WERMean != 0.3 || a.Above != 1 || a.ShareAbove != 0.5 {
		t.Errorf("asr %+v", q.ASR)
	}

	live := SetOf(recs[2:3])
	live.SetASR(0, results.ASRScore{WER: 0.25})
	live.NoteASR(ASRCounts{Offered: 3, Skipped: 1, Failed: 1})
	a := ComputeSet(live, Options{}).Quality.ASR
	if a == nil || a.Scored != 1 || a.WERMean != 0.25 || a.Offered != 3 || a.Skipped != 1 || a.Failed != 1 {
		t.Errorf("live asr %+v", a)
	}
	if s := Compute(recs[4:], Options{}); s.Quality != nil {
		t.Errorf("unchecked run has quality figures %+v", s.Quality)
	}
}
