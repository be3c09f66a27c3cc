package scrape

import (
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/omnibench/omnibench/report/table"
)

// TextWidth is the width WriteText keeps within by default: a terminal of
// 100 columns, or a CI log, shows the diff without wrapping.
const TextWidth = 100

// WriteText writes the tables of Tables as text that keeps within width
// columns (0: TextWidth): each row names its series as
// family{labels}, with the labels every row of a table shares said once
// above it; a series too long to share its line with the figures gets a
// line of its own, and the figures follow on the next one.
func (d *Delta) WriteText(w io.Writer, opts TableOptions, width int) error {
	if width <= 0 {
		width = TextWidth
	}
	var b strings.Builder
	for i, t := range d.Tables(opts) {
		if i > 0 {
			b.WriteString("\n")
		}
		writeSeriesTable(&b, t, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

const textGap = "  "

// writeSeriesTable lays out one table of Tables: columns 0 and 1 are the
// family and its labels, the others figures (right-aligned) and a note.
func writeSeriesTable(b *strings.Builder, t table.Table, width int) {
	wrapLine(b, "", t.Title, width)
	if len(t.Header) < 2 {
		for _, n := range t.Notes {
			wrapLine(b, "  ", n, width)
		}
		return
	}
	labelSets := make([][]string, len(t.Rows))
	for i, r := range t.Rows {
		labelSets[i] = splitLabelKey(r[1])
	}
	common := commonLabels(labelSets)
	if len(common) > 0 && len(t.Rows) > 1 {
		wrapLine(b, "  ", "every series has "+strings.Join(common, ","), width)
	}
	names := make([]string, len(t.Rows))
	for i, r := range t.Rows {
		var own []string
		for _, l := range labelSets[i] {
			if !containsString(common, l) || len(t.Rows) == 1 {
				own = append(own, l)
			}
		}
		names[i] = r[0]
		if len(own) > 0 {
			names[i] += "{" + strings.Join(own, ",") + "}"
		}
	}
	figures := t.Header[2:]
	widths := make([]int, len(figures))
	for c, h := range figures {
		widths[c] = runes(h)
		for _, r := range t.Rows {
			if 2+c < len(r) {
				widths[c] = max(widths[c], runes(r[2+c]))
			}
		}
	}
	figWidth := 0
	for _, w := range widths {
		figWidth += len(textGap) + w
	}
	nameWidth := runes("series")
	for _, n := range names {
		nameWidth = max(nameWidth, runes(n))
	}
	nameWidth = max(20, min(nameWidth, width-figWidth))
	row := func(name string, cells []string) string {
		var l strings.Builder
		l.WriteString(name + strings.Repeat(" ", max(0, nameWidth-runes(name))))
		for c, w := range widths {
			cell := ""
			if c < len(cells) {
				cell = cells[c]
			}
			l.WriteString(textGap)
			if c == len(widths)-1 && figures[c] == "note" {
				l.WriteString(cell) // text, left-aligned
				continue
			}
			l.WriteString(strings.Repeat(" ", max(0, w-runes(cell))) + cell)
		}
		return strings.TrimRight(l.String(), " ") + "\n"
	}
	b.WriteString(row("series", figures))
	for i, r := range t.Rows {
		if runes(names[i]) <= nameWidth {
			b.WriteString(row(names[i], r[2:]))
			continue
		}
		wrapLine(b, "", names[i], width)
		b.WriteString(row("", r[2:]))
	}
	for _, n := range t.Notes {
		wrapLine(b, "  ", n, width)
	}
}

// splitLabelKey splits a LabelKey (`a="x",b="y"`) into its pairs; "-" and
// "" have none.
func splitLabelKey(key string) []string {
	if key == "" || key == "-" {
		return nil
	}
	var out []string
	for key != "" {
		eq := strings.IndexByte(key, '=')
		if eq < 0 {
			return append(out, key)
		}
		q, err := strconv.QuotedPrefix(key[eq+1:])
		if err != nil {
			return append(out, key)
		}
		n := eq + 1 + len(q)
		out = append(out, key[:n])
		key = strings.TrimPrefix(key[n:], ",")
	}
	return out
}

// commonLabels are the pairs every label set has (none for one set or none).
func commonLabels(sets [][]string) []string {
	if len(sets) == 0 {
		return nil
	}
	var out []string
	for _, l := range sets[0] {
		all := true
		for _, s := range sets[1:] {
			if !containsString(s, l) {
				all = false
				break
			}
		}
		if all {
			out = append(out, l)
		}
	}
	return out
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// wrapLine writes prefix+text in lines of at most width columns, breaking
// after a space or comma where it can, else anywhere; continuation lines
// are indented four columns.
func wrapLine(b *strings.Builder, prefix, text string, width int) {
	for {
		room := width - runes(prefix)
		r := []rune(text)
		if len(r) <= room || room < 10 {
			b.WriteString(prefix + text + "\n")
			return
		}
		cut := room
		for i := room - 1; i > room/2; i-- {
			if r[i] == ' ' || r[i] == ',' {
				cut = i + 1
				break
			}
		}
		b.WriteString(strings.TrimRight(prefix+string(r[:cut]), " ") + "\n")
		text = strings.TrimLeft(string(r[cut:]), " ")
		prefix = "    "
		if text == "" {
			return
		}
	}
}
