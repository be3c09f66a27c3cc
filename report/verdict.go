package report

import (
	"io"
	"os"
	"regexp"
	"strings"

	"golang.org/x/term"
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

// ANSI colours of a terminal: red for a failure, green for a pass, yellow
// for no verdict.
const (
	ansiRed    = "\x1b[1;31m"
	ansiGreen  = "\x1b[1;32m"
	ansiYellow = "\x1b[1;33m"
	ansiReset  = "\x1b[0m"
)

func (o Outcome) colour() string {
	switch o {
	case Pass:
		return ansiGreen
	case Fail:
		return ansiRed
	}
	return ansiYellow
}

// WriteVerdict writes the verdict line, wrapped to the width of the
// tables (a long reason continues on lines indented by two spaces), its
// outcome coloured when opts.Colour.
func WriteVerdict(w io.Writer, v Verdict, opts Options) error {
	width := opts.width()
	lines := wrapWords(v.Line(), width)
	if len(lines) > 1 {
		words := strings.Fields(v.Line())
		rest := strings.Join(words[len(strings.Fields(lines[0])):], " ")
		lines = lines[:1]
		for _, l := range wrapWords(rest, max(20, width-2)) {
			lines = append(lines, "  "+l)
		}
	}
	if opts.Colour {
		lines[0] = v.Outcome.colour() + string(v.Outcome) + ansiReset + strings.TrimPrefix(lines[0], string(v.Outcome))
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n")+"\n")
	return err
}

// ColourFor reports whether text written to out may be coloured: out is a
// terminal and NO_COLOR (https://no-color.org) is unset or empty.
func ColourFor(out io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	_, ok := terminal(out)
	return ok
}

// terminal is the terminal out writes to, seen through the writers that
// wrap one (a redacting writer has Unwrap); false when out is a file, a
// pipe or a buffer.
func terminal(out io.Writer) (*os.File, bool) {
	for range 4 { // a wrapper of a wrapper at most, in practice
		if u, ok := out.(interface{ Unwrap() io.Writer }); ok {
			out = u.Unwrap()
		}
	}
	f, ok := out.(*os.File)
	return f, ok && term.IsTerminal(int(f.Fd()))
}

// failureWords are the cells and words a coloured text table shows in red:
// a missed SLO, a failed gate or rule.
var failureWords = regexp.MustCompile(`\b(MISS|FAIL|FAILED)\b`)

// colourFailures paints the failure words of a rendered line red. It runs
// after the layout, so the escape codes take no column.
func colourFailures(line string) string {
	return failureWords.ReplaceAllString(line, ansiRed+"$1"+ansiReset)
}

// isFailureCell reports whether an HTML cell states a failure ("MISS",
// "MISS [2]" with its footnote, "FAIL"), which the page marks.
func isFailureCell(s string) bool {
	s = strings.TrimSpace(footnoteMarkers.ReplaceAllString(s, ""))
	return s == "MISS" || s == "FAIL" || s == "FAILED"
}
