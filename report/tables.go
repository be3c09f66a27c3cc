// Package report renders omnibench's results for people and programs: the
// run report's tables (summaries, SLOs, the server beside the client), its
// verdict line and the self-contained HTML report. The tables themselves,
// text, Markdown and CSV from one Table value, are package
// report/table's; the names below keep them reachable as report's for the
// commands that build a run report, while the commands that only print
// tables import report/table and do not depend on summaries and SLOs.
package report

import (
	"io"

	"github.com/omnibench/omnibench/report/table"
)

// Table is one titled grid of cells with notes beneath it (table.Table).
type Table = table.Table

// Options shape the text rendering (table.Options).
type Options = table.Options

// Output formats understood by Render.
const (
	FormatTable    = table.FormatTable
	FormatMarkdown = table.FormatMarkdown
	FormatCSV      = table.FormatCSV
	FormatJSON     = table.FormatJSON
)

// DefaultWidth is the widest line a text table may print by default.
const DefaultWidth = table.DefaultWidth

// Residue is the magnitude below which a figure prints as 0.
const Residue = table.Residue

// Render writes tables in format (table.Render).
func Render(w io.Writer, format string, tables ...Table) error {
	return table.Render(w, format, tables...)
}

// RenderWith is Render with options (table.RenderWith).
func RenderWith(w io.Writer, format string, opts Options, tables ...Table) error {
	return table.RenderWith(w, format, opts, tables...)
}

// CheckFormat validates a --format value (table.CheckFormat).
func CheckFormat(format string, allowed ...string) error {
	return table.CheckFormat(format, allowed...)
}

// WidthFor is the width limit for text written to out (table.WidthFor).
func WidthFor(out io.Writer, wide bool) int { return table.WidthFor(out, wide) }

// TerminalWidth is the width of the terminal out writes to
// (table.TerminalWidth).
func TerminalWidth(out io.Writer) (int, bool) { return table.TerminalWidth(out) }

// ColourFor reports whether text written to out may be coloured
// (table.ColourFor).
func ColourFor(out io.Writer) bool { return table.ColourFor(out) }

// Denoise returns 0 for floating-point residue (table.Denoise).
func Denoise(v float64) float64 { return table.Denoise(v) }

// FormatValue formats a figure with four significant digits
// (table.FormatValue).
func FormatValue(v float64) string { return table.FormatValue(v) }

// FormatP formats a p-value (table.FormatP).
func FormatP(p float64) string { return table.FormatP(p) }

// FormatPct formats a fraction as a percentage (table.FormatPct).
func FormatPct(p float64) string { return table.FormatPct(p) }

// FormatFixed formats v with prec decimals (table.FormatFixed).
func FormatFixed(v float64, prec int) string { return table.FormatFixed(v, prec) }
