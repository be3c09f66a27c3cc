// Package report renders omnibench's results for people and programs: text
// tables, Markdown and CSV from one Table value, and (in other files) the run
// report and the self-contained HTML report. Commands build Tables; they never
// format columns themselves.
package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Output formats understood by Render.
const (
	FormatTable    = "table"
	FormatMarkdown = "markdown"
	FormatCSV      = "csv"
	FormatJSON     = "json"
)

// Table is one titled grid of cells with optional notes printed beneath it.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

// Render writes tables in format: "table" (aligned text), "markdown" or "csv".
// JSON is not a table format: commands marshal their own documented structs.
func Render(w io.Writer, format string, tables ...Table) error {
	switch format {
	case FormatTable, "":
		return renderText(w, tables, false)
	case FormatMarkdown, "md":
		return renderText(w, tables, true)
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

func renderText(w io.Writer, tables []Table, markdown bool) error {
	for i, t := range tables {
		if i > 0 {
			if _, err := io.WriteString(w, "\n"); err != nil {
				return err
			}
		}
		if t.Title != "" {
			title := t.Title
			if markdown {
				title = "### " + title
			}
			if _, err := fmt.Fprintf(w, "%s\n", title); err != nil {
				return err
			}
			if markdown {
				if _, err := io.WriteString(w, "\n"); err != nil {
					return err
				}
			}
		}
		opts := []tablewriter.Option{
			tablewriter.WithHeaderAutoFormat(tw.Off),
			tablewriter.WithHeaderAlignment(tw.AlignLeft),
		}
		if markdown {
			opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
		}
		tbl := tablewriter.NewTable(w, opts...)
		if len(t.Header) > 0 {
			tbl.Header(toAny(t.Header)...)
		}
		for _, row := range t.Rows {
			if err := tbl.Append(toAny(row)...); err != nil {
				return fmt.Errorf("report: table %q: %w", t.Title, err)
			}
		}
		if err := tbl.Render(); err != nil {
			return fmt.Errorf("report: table %q: %w", t.Title, err)
		}
		for _, n := range t.Notes {
			prefix := "  "
			if markdown {
				prefix = "\n> "
			}
			if _, err := fmt.Fprintf(w, "%s%s\n", prefix, n); err != nil {
				return err
			}
		}
	}
	return nil
}

func renderCSV(w io.Writer, tables []Table) error {
	cw := csv.NewWriter(w)
	for i, t := range tables {
		if i > 0 {
			// A blank record separates tables; the title row names the next one.
			if err := cw.Write([]string{}); err != nil {
				return err
			}
		}
		if len(tables) > 1 && t.Title != "" {
			if err := cw.Write([]string{"# " + t.Title}); err != nil {
				return err
			}
		}
		if len(t.Header) > 0 {
			if err := cw.Write(t.Header); err != nil {
				return err
			}
		}
		if err := cw.WriteAll(t.Rows); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
