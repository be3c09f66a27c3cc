package report

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report/table"
)

// TestWriteVerdict: one line when it fits, a long reason continued on
// indented lines within the width, the outcome coloured only when asked.
func TestWriteVerdict(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteVerdict(&buf, Verdict{Outcome: Pass, Reason: "40 requests measured, 2 SLOs met"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "PASS: 40 requests measured, 2 SLOs met\n" {
		t.Errorf("got %q", got)
	}

	long := Verdict{Outcome: Fail, Reason: "SLO audio_ttfp_p95<500ms: " + strings.Repeat("audio_ttfp_p95 = 612 ms, missed ", 8)}
	buf.Reset()
	if err := WriteVerdict(&buf, long, Options{Width: 60}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "FAIL: SLO audio_ttfp_p95<500ms") {
		t.Fatalf("lines %q", lines)
	}
	for _, l := range lines {
		if twwidth.Width(l) > 60 {
			t.Errorf("line of %d columns: %q", twwidth.Width(l), l)
		}
	}
	for _, l := range lines[1:] {
		if !strings.HasPrefix(l, "  ") {
			t.Errorf("continuation line not indented: %q", l)
		}
	}
	if got := strings.Join(strings.Fields(buf.String()), " "); got != strings.Join(strings.Fields(long.Line()), " ") {
		t.Errorf("wrapped text lost words:\n%s", got)
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("coloured without Colour: %q", buf.String())
	}

	buf.Reset()
	if err := WriteVerdict(&buf, Verdict{Outcome: NoVerdict, Reason: "capacity: unknown"}, Options{Colour: true}); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != table.ANSIYellow+"NO VERDICT"+table.ANSIReset+": capacity: unknown\n" {
		t.Errorf("coloured: %q", got)
	}
}

// TestRenderColoursFailures: with Colour, MISS is red and every column
// stays where it was without colour.
func TestRenderColoursFailures(t *testing.T) {
	tbl := Table{Title: "Service-level objectives", Header: []string{"objective", "verdict", "detail"},
		Rows: [][]string{{"audio_ttfp_p95<500ms", "MISS", "612 ms"}, {"error_rate<=0.5", "pass", "0"}}}
	var plain, coloured bytes.Buffer
	if err := RenderWith(&plain, FormatTable, Options{}, tbl); err != nil {
		t.Fatal(err)
	}
	if err := RenderWith(&coloured, FormatTable, Options{Colour: true}, tbl); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(coloured.String(), table.ANSIRed+"MISS"+table.ANSIReset) || strings.Contains(plain.String(), "\x1b[") {
		t.Fatalf("plain:\n%s\ncoloured:\n%q", plain.String(), coloured.String())
	}
	stripped := strings.NewReplacer(table.ANSIRed, "", table.ANSIReset, "").Replace(coloured.String())
	if stripped != plain.String() {
		t.Errorf("colour moved the columns:\n%s\nwant:\n%s", stripped, plain.String())
	}
}

// TestHTMLVerdictBadgeAndFailureCells: the page shows its verdict under
// the title and marks the MISS cells.
func TestHTMLVerdictBadgeAndFailureCells(t *testing.T) {
	tbl := Table{Header: []string{"objective", "verdict"}, Rows: [][]string{{"e2e_p95<1s", "MISS"}, {"error_rate<=0.5", "pass"}, {"e2e_p99<2s", "MISS [1]"}}}
	page := HTMLReport{Title: "t", Verdict: &Verdict{Outcome: Fail, Reason: "SLO e2e_p95<1s missed"}, Sections: []HTMLSection{TablesSection("SLOs", tbl)}}
	var buf bytes.Buffer
	if err := WriteHTML(&buf, page); err != nil {
		t.Fatal(err)
	}
	html := buf.String()
	for _, want := range []string{`<p class="verdict fail" role="status"><strong>FAIL</strong>: SLO e2e_p95&lt;1s missed</p>`, `<td class="fail">MISS</td>`, `<td class="fail">MISS [1]</td>`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(html, `<td class="fail">pass</td>`) {
		t.Errorf("a passing cell is marked")
	}
}

// TestRunTablesOfARecordedVerdict: a re-rendered run has only the load
// generator verdict its results file recorded; a saturated one opens the
// report with the warning and has a load generator section.
func TestRunTablesOfARecordedVerdict(t *testing.T) {
	recs := []results.Record{{Seq: 0, Kind: results.KindChat, E2ES: 1, TTFPS: 0.1}}
	h := results.Header{Mode: "closed", Client: &results.ClientHealth{Saturated: true, ClientDelayMS: 12.5, Reasons: []string{"CPU 97 % of 2 cores"}}}
	tables := RunTables(RunReport{Header: h, Summary: summary.Compute(recs, summary.Options{})})
	if tables[0].Title != warningTitle || !strings.Contains(tables[0].Rows[0][0], "the load generator was saturated (CPU 97 % of 2 cores)") {
		t.Errorf("first table %+v, want the saturation warning", tables[0])
	}
	var found bool
	for _, tb := range tables {
		if tb.Title == "Load generator" {
			found = true
			if tb.Rows[0][1] != "yes: 1 threshold(s) passed" || tb.Rows[1][1] != "12.500" {
				t.Errorf("load generator rows %q", tb.Rows)
			}
		}
	}
	if !found {
		t.Errorf("no load generator section")
	}
}

// wrapped is a writer around another, as the redacting writer of the
// commands is.
type wrapped struct{ io.Writer }

func (w wrapped) Unwrap() io.Writer { return w.Writer }

// TestColourFor: a terminal, also behind a wrapping writer, is coloured
// unless NO_COLOR is set; a pipe never is.
func TestColourFor(t *testing.T) {
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0) // the master side of a new pseudo-terminal
	if err != nil {
		t.Skipf("no pseudo-terminal to test with: %v", err)
	}
	defer tty.Close()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	t.Setenv("NO_COLOR", "")
	if !ColourFor(wrapped{tty}) || ColourFor(w) || ColourFor(&bytes.Buffer{}) {
		t.Errorf("terminal %v, pipe %v, buffer %v; want true, false, false", ColourFor(wrapped{tty}), ColourFor(w), ColourFor(&bytes.Buffer{}))
	}
	t.Setenv("NO_COLOR", "1")
	if ColourFor(tty) {
		t.Errorf("NO_COLOR=1: a terminal is still coloured")
	}
}
