package report

import (
	"io"
	"strings"

	"github.com/omnibench/omnibench/report/table"
)

// Outcome is the first word of a verdict line.
type Outcome string

// The outcomes of a report, as its verdict line starts. They follow the
// exit status: PASS is 0, FAIL is 3 (a missed SLO or gate) or 1 (a
// failure), NO VERDICT is 1 (the command refused to judge, and says why).
const (
	Pass      Outcome = "PASS"
	Fail      Outcome = "FAIL"
	NoVerdict Outcome = "NO VERDICT"
)

// Verdict is a report's outcome in one line, the last line of every text
// report (as go test ends with ok or FAIL) and the badge of its HTML page.
type Verdict struct {
	Outcome Outcome
	Reason  string // "40 requests measured, 2 SLOs met", "SLO x missed (y)"
}

// Line is the verdict as its line prints: "PASS: 40 requests measured".
func (v Verdict) Line() string { return string(v.Outcome) + ": " + v.Reason }

func (o Outcome) colour() string {
	switch o {
	case Pass:
		return table.ANSIGreen
	case Fail:
		return table.ANSIRed
	}
	return table.ANSIYellow
}

// WriteVerdict writes the verdict line, wrapped to the width of the
// tables (a long reason continues on lines indented by two spaces), its
// outcome coloured when opts.Colour.
func WriteVerdict(w io.Writer, v Verdict, opts Options) error {
	width := opts.LineWidth()
	lines := table.WrapWords(v.Line(), width)
	if len(lines) > 1 {
		words := strings.Fields(v.Line())
		rest := strings.Join(words[len(strings.Fields(lines[0])):], " ")
		lines = lines[:1]
		for _, l := range table.WrapWords(rest, max(20, width-2)) {
			lines = append(lines, "  "+l)
		}
	}
	if opts.Colour {
		lines[0] = v.Outcome.colour() + string(v.Outcome) + table.ANSIReset + strings.TrimPrefix(lines[0], string(v.Outcome))
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// isFailureCell reports whether an HTML cell states a failure ("MISS",
// "MISS [2]" with its footnote, "FAIL"), which the page marks.
func isFailureCell(s string) bool {
	s = strings.TrimSpace(table.StripFootnoteMarkers(s))
	return s == "MISS" || s == "FAIL" || s == "FAILED"
}
