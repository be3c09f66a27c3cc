package table

import (
	"io"
	"os"
	"regexp"

	"golang.org/x/term"
)

// ANSI colours of a terminal: red for a failure, green for a pass, yellow
// for no verdict.
const (
	ANSIRed    = "\x1b[1;31m"
	ANSIGreen  = "\x1b[1;32m"
	ANSIYellow = "\x1b[1;33m"
	ANSIReset  = "\x1b[0m"
)

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
	return failureWords.ReplaceAllString(line, ANSIRed+"$1"+ANSIReset)
}
