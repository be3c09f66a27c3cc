package report

import (
	"bytes"
	"strings"
	"testing"
)

// latencyLike is the latency table of a real run (column widths as there).
func latencyLike() Table {
	return Table{
		Title:  "Latency and real-time factor",
		Header: []string{"metric", "n", "mean", "std", "min", "p50", "p90", "p95", "p99", "max"},
		Rows: [][]string{
			{"ttfp (ms)", "6", "153.6", "8.640", "139.2", "156.6", "160.6", "161.3", "161.8", "161.9"},
			{"leading_silence (ms) [2]", "6", "0.1528", "0.0430", "0.1250", "0.1250", "0.2083", "0.2083", "0.2083", "0.2083"},
			{"e2e (ms)", "6", "1299", "166.2", "1094", "1298", "1482", "1501", "1515", "1519"},
			{"client_queue (ms)", "6", "0.0341", "0.0596", "0.0045", "0.0099", "0.0857", "0.1206", "0.1486", "0.1555"},
		},
		Notes:    []string{"[2] leading_silence = the audio before the first audible sample"},
		Optional: statsOptional(),
	}
}

func renderAt(t *testing.T, width int, tb Table) string {
	t.Helper()
	var buf bytes.Buffer
	if err := RenderWith(&buf, FormatTable, Options{Width: width}, tb); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// A terminal narrower than the default width gets the distribution tables
// without their least telling columns, said in a note, rather than lines
// that wrap.
func TestNarrowTerminalDropsOptionalColumns(t *testing.T) {
	for _, width := range []int{80, 60} {
		out := renderAt(t, width, latencyLike())
		if w := widest(out); w > width {
			t.Errorf("at %d columns the widest line is %d:\n%s", width, w, out)
		}
		if !strings.Contains(out, "left out to fit") || !strings.Contains(out, "p99") || !strings.Contains(out, "p50") {
			t.Errorf("at %d columns: want the percentiles kept and a note on what was left out:\n%s", width, out)
		}
	}
	out := renderAt(t, 80, latencyLike())
	if !strings.Contains(out, "\n  std left out to fit 80 columns") || strings.Contains(out, "  std  ") || !strings.Contains(out, "  min  ") {
		t.Errorf("at 80 columns want std left out, the others kept:\n%s", out)
	}
	if out := renderAt(t, DefaultWidth, latencyLike()); strings.Contains(out, "left out") || !strings.Contains(out, "std") {
		t.Errorf("at the default width every column stays:\n%s", out)
	}
	if out := renderAt(t, -1, latencyLike()); strings.Contains(out, "left out") {
		t.Errorf("--wide leaves nothing out:\n%s", out)
	}
}
