package main

import (
	"io"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/report"
)

// addWideFlag binds --wide, shared by every command that prints tables.
func addWideFlag(f *pflag.FlagSet, wide *bool) {
	f.BoolVar(wide, "wide", false, "print text tables at full width instead of fitting them to 100 columns (or the terminal's width)")
}

// renderTables writes tables to w in format, fitted to 100 columns (the
// terminal's width when w is a wider terminal) unless wide, failures in red
// on a terminal.
func renderTables(w io.Writer, format string, wide bool, tables ...report.Table) error {
	return report.RenderWith(w, format, report.Options{Width: report.WidthFor(w, wide), Colour: report.ColourFor(w)}, tables...)
}
