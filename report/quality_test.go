package report

import (
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/summary"
)

// TestQualityRows: the Requests table counts the responses flagged
// audio_defect with their reasons and the transcriptions; without checks it
// has no such row.
func TestQualityRows(t *testing.T) {
	s := &summary.Summary{Requests: summary.Requests{Total: 4, Completed: 4}}
	if text := tableText(requestsTable(RunReport{Summary: s})); strings.Contains(text, "audio_defect") {
		t.Errorf("unchecked run shows defects:\n%s", text)
	}
	s.Quality = &summary.Quality{Checked: 4, Defects: 2, ByDefect: map[string]int{"internal_gap": 2, "clipped": 1},
		ASR: &summary.ASR{Scored: 3, Offered: 4, Skipped: 1, Threshold: 0.2, Above: 1}}
	text := tableText(requestsTable(RunReport{Summary: s}))
	for _, want := range []string{"audio_defect (of 4 checked)", "  clipped", "  internal_gap", "transcribed (scored of 4 offered; 1 skipped, 0 failed)", "WER above 0.20"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in\n%s", want, text)
		}
	}
}

func tableText(t Table) string {
	var b strings.Builder
	for _, r := range t.Rows {
		b.WriteString(strings.Join(r, " | ") + "\n")
	}
	return b.String()
}
