package table

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// widest returns the widest line of out, in runes (what a terminal shows).
func widest(out string) int {
	w := 0
	for _, l := range strings.Split(out, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

func TestRenderFormats(t *testing.T) {
	tb := Table{Title: "Latency", Header: []string{"metric", "p50_ms"}, Rows: [][]string{{"ttfp", "12.5"}, {"e2e", "900"}}, Notes: []string{"n=2"}}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, tb); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"Latency", "p50_ms", "ttfp", "12.5", "n=2"} {
		if !strings.Contains(out, want) {
			t.Errorf("table output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "P 50 MS") {
		t.Errorf("header was reformatted:\n%s", out)
	}

	buf.Reset()
	if err := Render(&buf, FormatMarkdown, tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| ttfp") || !strings.Contains(buf.String(), "### Latency") {
		t.Errorf("markdown output:\n%s", buf.String())
	}

	buf.Reset()
	tb.Rows[0][0] += " " + tb.Footnote("time to first packet")
	if err := Render(&buf, FormatCSV, tb); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "metric,p50_ms\nttfp,12.5\ne2e,900\n"; got != want {
		t.Errorf("csv = %q, want %q", got, want)
	}

	if err := Render(&buf, "xml", tb); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("unknown format error = %v", err)
	}
}

func TestFormatFixed(t *testing.T) {
	cases := []struct {
		v    float64
		prec int
		want string
	}{{1.23456, 3, "1.235"}, {-0.0001, 3, "0.000"}, {-8.88e-16, 1, "0.0"}, {-2.5, 1, "-2.5"}, {math.NaN(), 2, "-"}, {math.Inf(1), 2, "-"}}
	for _, c := range cases {
		if got := FormatFixed(c.v, c.prec); got != c.want {
			t.Errorf("FormatFixed(%g, %d) = %q, want %q", c.v, c.prec, got, c.want)
		}
	}
}

func TestTextFitsWidth(t *testing.T) {
	long := "a long explanation of where this figure comes from, which used to be a column of its own and made every row wrap"
	tb := Table{Title: "Scenarios", Header: []string{"name", "kind", "description"}, Rows: [][]string{
		{"chat-voice", "chat", long},
		{"tts-short", "speech-sse", "short"},
	}}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, tb); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if w := widest(out); w > DefaultWidth {
		t.Errorf("widest line %d > %d:\n%s", w, DefaultWidth, out)
	}
	// Wrapped at word boundaries: every word of the cell is still whole.
	for _, word := range strings.Fields(long) {
		if !strings.Contains(out, word) {
			t.Errorf("word %q was broken:\n%s", word, out)
		}
	}
	if !strings.Contains(out, "chat-voice  chat        a long") {
		t.Errorf("columns not aligned:\n%s", out)
	}

	buf.Reset()
	if err := RenderWith(&buf, FormatTable, Options{Width: -1}, tb); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), long) {
		t.Errorf("--wide wrapped a cell:\n%s", buf.String())
	}
}

func TestHeadersWrapBeforeCells(t *testing.T) {
	header := []string{"level"}
	row := []string{"1"}
	for i := range 12 {
		header = append(header, "TTFP p"+strconv.Itoa(90+i)+" (ms)")
		row = append(row, "162.5")
	}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, Table{Header: header, Rows: [][]string{row}}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if w := widest(out); w > DefaultWidth || len(lines) != 5 {
		t.Fatalf("want a 3-line header, a rule and one row within %d columns, got width %d:\n%s", DefaultWidth, w, out)
	}
	if !strings.HasPrefix(lines[0], "        TTFP   TTFP") || !strings.HasPrefix(lines[2], "level   (ms)   (ms)") {
		t.Errorf("header words not stacked above the rule:\n%s", out)
	}
	// Numbers align right under their header.
	if !strings.HasPrefix(lines[4], "    1  162.5  162.5") {
		t.Errorf("numbers not right-aligned:\n%s", out)
	}
}

func TestFootnotes(t *testing.T) {
	var tb Table
	a := tb.Footnote("server: bucket estimate")
	b := tb.Footnote("client: arrival clock")
	if a2 := tb.Footnote("server: bucket estimate"); a != "[1]" || b != "[2]" || a2 != a || len(tb.Notes) != 2 {
		t.Fatalf("markers %q %q %q, notes %q", a, b, a2, tb.Notes)
	}
	tb.Header = []string{"figure", "value"}
	tb.Rows = [][]string{{"ttfp p50 " + a, "1"}, {"continuity " + b, "2"}}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, tb); err != nil {
		t.Fatal(err)
	}
	if out := buf.String(); !strings.Contains(out, "\n  [1] server: bucket estimate\n  [2] client: arrival clock\n") {
		t.Errorf("footnotes:\n%s", out)
	}
}

func TestCSVIsTidy(t *testing.T) {
	tables := []Table{
		{Title: "Requests", Header: []string{"outcome", "count"}, Rows: [][]string{{"completed", "8"}}, Notes: []string{"decoration"}},
		{Title: "Latency", Header: []string{"metric", "n", "p50"}, Rows: [][]string{{"ttfp (ms) [1]", "8", "155.8"}}, Notes: []string{"[1] time to first packet"}},
	}
	var buf bytes.Buffer
	if err := Render(&buf, FormatCSV, tables...); err != nil {
		t.Fatal(err)
	}
	want := "table,row,column,value\nRequests,completed,count,8\nLatency,ttfp (ms),n,8\nLatency,ttfp (ms),p50,155.8\n"
	if got := buf.String(); got != want {
		t.Errorf("csv =\n%s\nwant\n%s", got, want)
	}
}

// TestGridExact pins the grid tablewriter draws, byte for byte: no
// borders, columns two spaces apart, one dashed rule under the header,
// header words stacked onto the rule, text cells wrapped at spaces,
// numbers right-aligned, no trailing blanks; Markdown through its
// Markdown renderer with pipes escaped.
func TestGridExact(t *testing.T) {
	tb := Table{Title: "Scenarios", Header: []string{"name", "rate (req/s)", "description"}, Rows: [][]string{
		{"chat-voice", "12.5", "a long explanation of where this figure comes from, wrapped at spaces"},
		{"tts|short", "-", "short"},
		{"e2e", "900", ""},
	}, Notes: []string{"[1] a note"}}
	var buf bytes.Buffer
	if err := RenderWith(&buf, FormatTable, Options{Width: 50}, tb); err != nil {
		t.Fatal(err)
	}
	wantText := `Scenarios
               rate
name        (req/s)  description
----------  -------  -----------------------------
chat-voice     12.5  a long explanation of where
                     this figure comes from,
                     wrapped at spaces
tts|short         -  short
e2e             900
  [1] a note
`
	if got := buf.String(); got != wantText {
		t.Errorf("text =\n%s\nwant\n%s", got, wantText)
	}

	buf.Reset()
	if err := RenderWith(&buf, FormatMarkdown, Options{Width: 50}, tb); err != nil {
		t.Fatal(err)
	}
	wantMD := `### Scenarios

| name       | rate (req/s) | description                                                           |
|:-----------|:-------------|:----------------------------------------------------------------------|
| chat-voice | 12.5         | a long explanation of where this figure comes from, wrapped at spaces |
| tts\|short | -            | short                                                                 |
| e2e        | 900          |                                                                       |

> [1] a note
`
	if got := buf.String(); got != wantMD {
		t.Errorf("markdown =\n%s\nwant\n%s", got, wantMD)
	}

	// A header with no rows beneath is still ruled off; a table without a
	// header has no rule.
	buf.Reset()
	if err := Render(&buf, FormatTable, Table{Header: []string{"metric", "n"}}, Table{Rows: [][]string{{"a", "1"}, {"bb", "22"}}}); err != nil {
		t.Fatal(err)
	}
	if got, want := buf.String(), "metric  n\n------  -\n\na    1\nbb  22\n"; got != want {
		t.Errorf("header-only and headerless tables = %q, want %q", got, want)
	}
}

type failingWriter struct{ err error }

func (f failingWriter) Write([]byte) (int, error) { return 0, f.err }

func TestRenderReportsWriteErrors(t *testing.T) {
	full := errors.New("disk full")
	tb := Table{Header: []string{"metric", "n"}, Rows: [][]string{{"ttfp", "8"}}}
	for _, format := range []string{FormatTable, FormatMarkdown, FormatCSV} {
		if err := Render(failingWriter{full}, format, tb); !errors.Is(err, full) {
			t.Errorf("%s: error %v, want %v", format, err, full)
		}
	}
}
