// Package table renders omnibench's tables for people and programs: aligned
// text, Markdown and CSV from one Table value, with the cell formats the
// commands share. Commands build Tables; they never format columns
// themselves. The layout of a text table (column widths, where headers and
// cells wrap to fit the width limit, the optional columns left out on a
// narrow terminal) is this package's own; the grid itself, text and
// Markdown, is drawn by github.com/olekukonko/tablewriter.
//
// It is a leaf: it knows nothing of runs, summaries or SLOs, so that the
// commands that only print tables (scrape, merge, check, replay) do not
// depend on them. Package report builds the run report's tables on it.
package table

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"golang.org/x/term"
)

// Output formats understood by Render.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatCSV      = "csv"
	FormatJSON     = "json"
)

// DefaultWidth is the widest line a text table may print by default: a
// terminal of 100 columns, or a CI log, shows every table without wrapping.
const DefaultWidth = 100

// Table is one titled grid of cells with optional notes printed beneath it.
// Long explanations belong in the notes (see Footnote), not in a column.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
	// Optional names columns (by header) that a text table leaves out,
	// the first named first, when it cannot fit its width otherwise (a
	// terminal narrower than DefaultWidth); a note says which.
	Optional []string
}

// Footnote adds text as a numbered note beneath the table and returns its
// marker ("[1]") for a cell to carry. The same text always gets the same
// number, so rows sharing an explanation share the footnote.
func (t *Table) Footnote(text string) string {
	for i, n := range t.Notes {
		if n == footnotePrefix(i+1)+text {
			return marker(i + 1)
		}
	}
	t.Notes = append(t.Notes, footnotePrefix(len(t.Notes)+1)+text)
	return marker(len(t.Notes))
}

func marker(n int) string         { return "[" + strconv.Itoa(n) + "]" }
func footnotePrefix(n int) string { return marker(n) + " " }

// footnoteMarkers matches the markers Footnote hands out at the end of a
// cell; CSV, which carries no notes, drops them.
var footnoteMarkers = regexp.MustCompile(`(\s*\[\d+\])+$`)

// StripFootnoteMarkers returns s without the footnote markers ("[1]",
// "[1] [3]") at its end, for output that carries no notes.
func StripFootnoteMarkers(s string) string { return footnoteMarkers.ReplaceAllString(s, "") }

// leadingMarker matches the marker a footnote's text starts with.
var leadingMarker = regexp.MustCompile(`^\[\d+\] `)

// Options shape the text rendering.
type Options struct {
	// Width is the widest line a text table may print: 0 means
	// DefaultWidth, a negative value means no limit (--wide). Markdown and
	// CSV are for programs and are never wrapped.
	Width int
	// Colour paints the failure words of text tables (MISS, FAIL) red:
	// for a terminal (ColourFor), never for a file or a pipe.
	Colour bool
}

// WidthFor is the width limit for text written to out: no limit with
// --wide, the terminal's width when out is a terminal, else DefaultWidth.
func WidthFor(out io.Writer, wide bool) int {
	if wide {
		return -1
	}
	if w, ok := TerminalWidth(out); ok {
		return w
	}
	return DefaultWidth
}

// TerminalWidth is the width in columns of the terminal out writes to
// (looking through writers that wrap another, such as a redacting one);
// false when out is not a terminal.
func TerminalWidth(out io.Writer) (int, bool) {
	f, ok := terminal(out)
	if !ok {
		return 0, false
	}
	w, _, err := term.GetSize(int(f.Fd()))
	return w, err == nil && w > 0
}

// LineWidth is the widest line the options allow: DefaultWidth for 0, 0
// (no limit) for a negative Width.
func (o Options) LineWidth() int {
	switch {
	case o.Width == 0:
		return DefaultWidth
	case o.Width < 0:
		return 0
	}
	return o.Width
}

// Render writes tables in format: "table" (aligned text, at most
// DefaultWidth columns wide), "markdown" or "csv". JSON is not a table
// format: commands marshal their own documented structs.
func Render(w io.Writer, format string, tables ...Table) error {
	return RenderWith(w, format, Options{}, tables...)
}

// RenderWith is Render with options (the width limit of text tables).
func RenderWith(w io.Writer, format string, opts Options, tables ...Table) error {
	switch format {
	case FormatTable, "":
		return renderText(w, tables, opts.LineWidth(), opts.Colour)
	case FormatMarkdown, "md":
		return renderMarkdown(w, tables)
	case FormatCSV:
		return renderCSV(w, tables)
	default:
		return fmt.Errorf("report: unknown format %q (want table, markdown or csv)", format)
	}
}

// CheckFormat validates a --format value against the formats a command offers.
func CheckFormat(format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return fmt.Errorf("unknown --format %q (want %s)", format, strings.Join(allowed, ", "))
}

// errWriter remembers the first write error so the renderers can write
// line by line and check once.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) line(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s+"\n")
	}
}

func renderText(w io.Writer, tables []Table, width int, colour bool) error {
	ew := &errWriter{w: w}
	for i, t := range tables {
		if i > 0 {
			ew.line("")
		}
		t = fitColumns(t, width)
		if t.Title != "" {
			for _, l := range WrapWords(t.Title, width) {
				ew.line(l)
			}
		}
		lines, err := drawGrid(layout(t, width))
		if err != nil {
			return fmt.Errorf("report: table %q: %w", t.Title, err)
		}
		for _, l := range lines {
			if colour {
				l = colourFailures(l)
			}
			ew.line(l)
		}
		for _, n := range t.Notes {
			for _, l := range wrapNote(n, width) {
				ew.line(l)
			}
		}
	}
	return ew.err
}

// fitColumns leaves out t's optional columns, in their order, until its
// layout fits width (0: no limit), and adds a note naming them.
func fitColumns(t Table, width int) Table {
	if width <= 0 || len(t.Optional) == 0 {
		return t
	}
	var dropped []string
	for _, name := range t.Optional {
		if layout(t, width).total() <= width {
			break
		}
		if c := slices.Index(t.Header, name); c >= 0 {
			t = withoutColumn(t, c)
			dropped = append(dropped, name)
		}
	}
	if len(dropped) > 0 {
		t.Notes = append(slices.Clone(t.Notes),
			fmt.Sprintf("%s left out to fit %d columns (--wide shows every column)", strings.Join(dropped, ", "), width))
	}
	return t
}

// withoutColumn is t without column c; t's slices are not changed.
func withoutColumn(t Table, c int) Table {
	cut := func(r []string) []string {
		if c >= len(r) {
			return r
		}
		return slices.Delete(slices.Clone(r), c, c+1)
	}
	t.Header = cut(t.Header)
	rows := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		rows[i] = cut(r)
	}
	t.Rows = rows
	return t
}

// columnGap separates the columns of a text table.
const columnGap = "  "

// grid is a table laid out for text: the width of every column and its
// cells already wrapped into lines (joined by "\n"), ready to be drawn.
type grid struct {
	widths []int
	right  []bool     // numeric columns align right, header included
	header []string   // nil without a header; every cell has the same line count
	rows   [][]string // every row has one cell per column
}

// layout lays a table out as text no wider than width (0 = no limit)
// when it can: headers wrap at their spaces first, then the widest text
// columns wrap their cells at word boundaries. Numbers never wrap and
// are right-aligned. Widths are display widths, measured as tablewriter
// measures them when it draws the grid.
func layout(t Table, width int) grid {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return grid{}
	}
	cell := func(r []string, c int) string {
		if c < len(r) {
			return r[c]
		}
		return ""
	}
	numeric := make([]bool, cols)
	maxCell := make([]int, cols) // widest cell (not header)
	longestWord := make([]int, cols)
	widths := make([]int, cols)
	for c := range cols {
		numeric[c] = numericColumn(t.Rows, c)
		for _, r := range t.Rows {
			maxCell[c] = max(maxCell[c], textWidth(cell(r, c)))
			longestWord[c] = max(longestWord[c], longestWordLen(cell(r, c)))
		}
		// An all-blank column keeps its place one space wide: tablewriter
		// draws no column of width 0.
		widths[c] = max(1, maxCell[c], textWidth(cell(t.Header, c)))
	}
	total := func() int {
		n := textWidth(columnGap) * (cols - 1)
		for _, w := range widths {
			n += w
		}
		return n
	}
	if width > 0 && total() > width {
		// Wrap the headers first, all alike so they read as one block: onto
		// two lines, and if that is not enough as far as their words allow.
		for _, lines := range []int{2, 0} {
			if total() <= width {
				break
			}
			for c := range cols {
				widths[c] = min(widths[c], headerWidth(cell(t.Header, c), maxCell[c], lines))
			}
		}
		// Then wrap the widest text column's cells at spaces.
		for total() > width {
			best := -1
			for c := range cols {
				floor := max(longestWord[c], longestWordLen(cell(t.Header, c)), 8)
				if !numeric[c] && widths[c] > floor && (best < 0 || widths[c] > widths[best]) {
					best = c
				}
			}
			if best < 0 {
				break
			}
			floor := max(longestWord[best], longestWordLen(cell(t.Header, best)), 8)
			widths[best] = max(floor, widths[best]-(total()-width))
		}
	}

	g := grid{widths: widths, right: numeric}
	wrap := func(cells []string, header bool) []string {
		wrapped := make([][]string, cols)
		lines := 1
		for c := range cols {
			wrapped[c] = WrapWords(cell(cells, c), widths[c])
			lines = max(lines, len(wrapped[c]))
		}
		out := make([]string, cols)
		for c := range cols {
			if header {
				// Wrapped header words sit on the row above the rule, so the
				// last line of every header touches it.
				wrapped[c] = append(make([]string, lines-len(wrapped[c])), wrapped[c]...)
			}
			out[c] = strings.Join(wrapped[c], "\n")
		}
		return out
	}
	if len(t.Header) > 0 {
		g.header = wrap(t.Header, true)
	}
	for _, r := range t.Rows {
		g.rows = append(g.rows, wrap(r, false))
	}
	return g
}

// total is the width of the grid's widest line.
func (g grid) total() int {
	n := textWidth(columnGap) * max(len(g.widths)-1, 0)
	for _, w := range g.widths {
		n += w
	}
	return n
}

// drawGrid draws a laid-out grid with tablewriter, borderless: columns
// two spaces apart, a dashed rule under the header and nothing else. The
// cells arrive wrapped and the widths decided, so tablewriter neither
// wraps, trims nor reformats them; only trailing blanks are cut from its
// lines. It returns the lines (tablewriter does not report write errors,
// so the caller writes them).
func drawGrid(g grid) ([]string, error) {
	if len(g.widths) == 0 {
		return nil, nil
	}
	align := make([]tw.Align, len(g.widths))
	widths := tw.NewMapper[int, int]()
	for c, width := range g.widths {
		align[c] = tw.AlignLeft
		if g.right[c] {
			align[c] = tw.AlignRight
		}
		widths.Set(c, width)
	}
	symbols := tw.NewSymbolCustom("omnibench").WithRow("-").WithColumn(columnGap).
		WithCenter(columnGap).WithHeaderMid(columnGap).WithMidLeft("").WithMidRight("")
	cellConfig := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
		Padding:    tw.CellPadding{Global: tw.PaddingNone},
		Alignment:  tw.CellAlignment{PerColumn: align},
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: symbols,
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.On, BetweenRows: tw.Off, ShowHeader: tw.On},
				Lines:      tw.Lines{ShowTop: tw.Off, ShowBottom: tw.Off, ShowHeaderLine: tw.On, ShowFooterLine: tw.Off},
			},
		})),
		tablewriter.WithHeaderConfig(cellConfig),
		tablewriter.WithRowConfig(cellConfig),
		tablewriter.WithBehavior(tw.Behavior{TrimSpace: tw.Off, TrimLine: tw.Off, AutoHide: tw.Off}),
		tablewriter.WithColumnWidths(widths),
	)
	if g.header != nil {
		tbl.Header(g.header)
		if len(g.rows) == 0 {
			// tablewriter rules a header off only above rows or a footer:
			// a blank footer keeps the rule under a header with no rows
			// (its blank line is cut below).
			tbl.Footer(make([]string, len(g.widths)))
		}
	}
	if err := tbl.Bulk(g.rows); err != nil {
		return nil, err
	}
	if err := tbl.Render(); err != nil {
		return nil, err
	}
	lines := splitLines(buf.String())
	if g.header != nil && len(g.rows) == 0 {
		lines = lines[:len(lines)-1] // the blank footer
	}
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return lines, nil
}

// splitLines splits tablewriter's output into its lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// headerWidth is the narrowest width, at least the column's widest cell,
// at which header wraps onto at most lines lines (0: no limit, down to its
// longest word).
func headerWidth(header string, widestCell, lines int) int {
	floor := max(widestCell, longestWordLen(header))
	if lines == 0 {
		return floor
	}
	for w := floor; w < textWidth(header); w++ {
		if len(WrapWords(header, w)) <= lines {
			return w
		}
	}
	return max(floor, textWidth(header))
}

// numericColumn reports whether every cell of column c reads as a figure
// (IsFigure, the rule the HTML page aligns by too), so the column aligns
// right.
func numericColumn(rows [][]string, c int) bool {
	seen := false
	for _, r := range rows {
		if c >= len(r) || r[c] == "" || r[c] == "-" {
			continue
		}
		if !IsFigure(r[c]) {
			return false
		}
		seen = true
	}
	return seen
}

// textWidth is the width s takes on a terminal, measured as tablewriter
// measures the cells it pads, so layout and drawing agree.
func textWidth(s string) int { return twwidth.Width(s) }

func longestWordLen(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		n = max(n, textWidth(w))
	}
	return n
}

// WrapWords breaks s into lines of at most width runes at spaces; a word
// longer than width stays whole on its own line. Width 0 means no limit.
func WrapWords(s string, width int) []string {
	if width <= 0 || textWidth(s) <= width {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, w := range strings.Fields(s) {
		switch {
		case line == "":
			line = w
		case textWidth(line)+1+textWidth(w) <= width:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	return append(lines, line)
}

// wrapNote indents a note by two spaces and wraps it to width, continuing
// lines under the text after a footnote marker.
func wrapNote(n string, width int) []string {
	indent := "  "
	hang := indent
	if m := leadingMarker.FindString(n); m != "" {
		hang += strings.Repeat(" ", len(m))
	}
	if width <= 0 {
		return []string{indent + n}
	}
	lines := WrapWords(n, max(20, width-len(hang)))
	for i := range lines {
		if i == 0 {
			lines[i] = indent + lines[i]
		} else {
			lines[i] = hang + lines[i]
		}
	}
	return lines
}

// renderMarkdown writes GitHub-flavoured Markdown tables through
// tablewriter's Markdown renderer: a "###" title, cells left-aligned and
// never wrapped (a reader's viewer wraps), pipes escaped, notes quoted
// beneath.
func renderMarkdown(w io.Writer, tables []Table) error {
	ew := &errWriter{w: w}
	esc := strings.NewReplacer("|", `\|`, "\n", " ")
	for i, t := range tables {
		if i > 0 {
			ew.line("")
		}
		if t.Title != "" {
			ew.line("### " + t.Title)
			ew.line("")
		}
		lines, err := drawMarkdown(t, esc)
		if err != nil {
			return fmt.Errorf("report: table %q: %w", t.Title, err)
		}
		for _, l := range lines {
			ew.line(l)
		}
		for _, n := range t.Notes {
			ew.line("")
			ew.line("> " + esc.Replace(n))
		}
	}
	return ew.err
}

// drawMarkdown draws one table's grid as Markdown lines. Every column is
// at least three characters wide, so short columns still read as columns
// in the source.
func drawMarkdown(t Table, esc *strings.Replacer) ([]string, error) {
	cols := len(t.Header)
	for _, r := range t.Rows {
		cols = max(cols, len(r))
	}
	if cols == 0 {
		return nil, nil
	}
	cells := func(r []string) []string {
		out := make([]string, cols)
		for c := range min(cols, len(r)) {
			out[c] = esc.Replace(r[c])
		}
		return out
	}
	header := cells(t.Header)
	rows := make([][]string, len(t.Rows))
	widths := tw.NewMapper[int, int]()
	for c := range cols {
		widths.Set(c, max(3, textWidth(header[c])))
	}
	for i, r := range t.Rows {
		rows[i] = cells(r)
		for c, s := range rows[i] {
			widths.Set(c, max(widths.Get(c), textWidth(s)))
		}
	}
	for c := range cols {
		widths.Set(c, widths.Get(c)+2) // the cell padding of one space a side
	}
	cellConfig := tw.CellConfig{
		Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone, AutoFormat: tw.Off},
		Alignment:  tw.CellAlignment{Global: tw.AlignLeft},
	}
	var buf bytes.Buffer
	tbl := tablewriter.NewTable(&buf,
		tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderConfig(cellConfig),
		tablewriter.WithRowConfig(cellConfig),
		tablewriter.WithBehavior(tw.Behavior{TrimSpace: tw.Off, TrimLine: tw.Off, AutoHide: tw.Off}),
		tablewriter.WithColumnWidths(widths),
	)
	tbl.Header(header)
	if err := tbl.Bulk(rows); err != nil {
		return nil, err
	}
	if err := tbl.Render(); err != nil {
		return nil, err
	}
	return splitLines(buf.String()), nil
}

// renderCSV writes tidy CSV: one header row and one observation per row,
// with no titles, notes or blank lines. One table is written as it is.
// Several tables (the run report) are written in long form, one cell per
// row: table,row,column,value, where row is the row's first cell and
// column its header.
func renderCSV(w io.Writer, tables []Table) error {
	cw := csv.NewWriter(w)
	clean := func(r []string) []string {
		out := make([]string, len(r))
		for i, s := range r {
			out[i] = strings.TrimSpace(StripFootnoteMarkers(s))
		}
		return out
	}
	if len(tables) == 1 {
		t := tables[0]
		if len(t.Header) > 0 {
			if err := cw.Write(clean(t.Header)); err != nil {
				return err
			}
		}
		for _, r := range t.Rows {
			if err := cw.Write(clean(r)); err != nil {
				return err
			}
		}
	} else {
		if err := cw.Write([]string{"table", "row", "column", "value"}); err != nil {
			return err
		}
		for _, t := range tables {
			header := clean(t.Header)
			for _, r := range t.Rows {
				r = clean(r)
				for c := 1; c < len(r); c++ {
					col := strconv.Itoa(c)
					if c < len(header) {
						col = header[c]
					}
					if err := cw.Write([]string{t.Title, r[0], col, r[c]}); err != nil {
						return err
					}
				}
				if len(r) == 1 {
					col := ""
					if len(header) > 0 {
						col = header[0]
					}
					if err := cw.Write([]string{t.Title, r[0], col, r[0]}); err != nil {
						return err
					}
				}
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
