package compare

import (
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/stats"
)

// TestWERMetric: transcribed runs compare their WER like any other metric
// (larger is worse); runs without transcriptions have no WER row.
func TestWERMetric(t *testing.T) {
	recs := func(wers ...float64) []*results.Record {
		var out []*results.Record
		for i, w := range wers {
			r := &results.Record{Seq: i, E2ES: 1}
			if w >= 0 {
				r.ASR = &results.ASRScore{WER: w}
			}
			out = append(out, r)
		}
		return out
	}
	m, err := LookupMetric("wer")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := Analyze([]Metric{m}, recs(0.1, 0.12, 0.11, 0.09, 0.1, 0.13), recs(0.5, 0.55, 0.6, 0.52, 0.58, 0.51), stats.Options{})
	if err != nil || len(rows) != 1 || !rows[0].Tested || rows[0].B.Mean <= rows[0].A.Mean {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	if rows, _ := Analyze([]Metric{m}, recs(-1, -1), recs(-1, -1), stats.Options{}); len(rows) != 0 {
		t.Errorf("untranscribed runs have a WER row: %+v", rows)
	}
}
