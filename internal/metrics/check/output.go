package check

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/junit"
	"github.com/omnibench/omnibench/report/table"
)

// Table renders the results as one table for Markdown: failures first,
// then passes and skips, each in rule order; with failuresOnly, only
// failed rules. Cells carry their full text (WriteText is the default
// output for a terminal or CI log).
func (r *Report) Table(failuresOnly bool) table.Table {
	t := table.Table{
		Title:  "Metrics check",
		Header: []string{"status", "rule", "family", "line", "expected", "observed", "difference", "tolerance", "detail"},
	}
	for _, want := range []Status{Fail, Pass, Skip} {
		if failuresOnly && want != Fail {
			continue
		}
		for _, res := range r.Results {
			if res.Status != want {
				continue
			}
			t.Rows = append(t.Rows, []string{strings.ToUpper(string(res.Status)), res.Rule, res.Family, lineCell(res),
				res.Expected, res.Observed, res.Difference, res.Tolerance, fullDetail(res)})
		}
	}
	t.Notes = append(append([]string{}, r.Notes...), r.Summary())
	return t
}

func lineCell(res Result) string {
	if res.Line == 0 {
		return ""
	}
	s := strconv.Itoa(res.Line)
	if tok := res.Token; tok != "" {
		if strings.ContainsFunc(tok, unicode.IsControl) {
			tok = strconv.Quote(tok) // a tab or CR must be seen
		}
		s += ": " + tok
	}
	return s
}

// fullDetail is the detail followed by every problem.
func fullDetail(res Result) string {
	parts := make([]string, 0, 1+len(res.Problems))
	if res.Detail != "" {
		parts = append(parts, res.Detail)
	}
	parts = append(parts, res.Problems...)
	return strings.Join(parts, "; ")
}

// Summary is the one-line verdict: "45 rules, 0 failed" or "2 of 45 rules
// failed", with the skipped count and the stats setting.
func (r *Report) Summary() string {
	n := len(r.Results)
	s := fmt.Sprintf("%d rules, 0 failed", n)
	if r.Failed > 0 {
		s = fmt.Sprintf("%d of %d rules failed", r.Failed, n)
	}
	if r.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", r.Skipped)
	}
	if r.Stats != "" {
		s += "; server stats " + r.Stats
	}
	return s
}

// TextWidth is the width the text output keeps within.
const TextWidth = 100

// WriteText writes what a person reads in a terminal or a CI log: each
// failed rule as a short block (family, the exposition line and token,
// expected, observed, every problem), the notes, and the summary line.
// With verbose, passed and skipped rules follow the failures, one line
// each. Every line fits in TextWidth columns: long values wrap.
func (r *Report) WriteText(w io.Writer, verbose bool) error {
	var b strings.Builder
	for _, res := range r.Results {
		if res.Status == Fail {
			writeBlock(&b, res)
		}
	}
	if verbose {
		for _, want := range []Status{Pass, Skip} {
			for _, res := range r.Results {
				if res.Status != want {
					continue
				}
				text := res.Rule
				what := res.Observed
				if res.Status == Skip || what == "" {
					what = joinNote(res.Observed, res.Detail)
				}
				if what != "" {
					text += ": " + what
				}
				wrapInto(&b, strings.ToUpper(string(res.Status))+" ", text, "     ")
			}
		}
	}
	for _, n := range r.Notes {
		wrapInto(&b, "note: ", n, "      ")
	}
	wrapInto(&b, "", r.Summary(), "  ")
	_, err := io.WriteString(w, b.String())
	return err
}

func writeBlock(b *strings.Builder, res Result) {
	wrapInto(b, "FAIL ", res.Rule, "     ")
	field := func(name, value string) {
		if value != "" {
			wrapInto(b, fmt.Sprintf("     %-10s", name), value, strings.Repeat(" ", 15))
		}
	}
	field("family", res.Family)
	if res.Line > 0 {
		field("line", lineCell(res))
	}
	field("expected", res.Expected)
	field("observed", res.Observed)
	field("difference", res.Difference)
	if res.Tolerance != "" && res.Tolerance != "exact" {
		field("tolerance", res.Tolerance)
	}
	field("detail", res.Detail)
	for _, p := range res.Problems {
		wrapInto(b, "     - ", p, "       ")
	}
}

// wrapInto writes first+text, wrapped at TextWidth columns (at blanks where
// or commas where there are some, else anywhere), continuation lines starting with indent.
func wrapInto(b *strings.Builder, first, text, indent string) {
	prefix := first
	for {
		room := TextWidth - utf8.RuneCountInString(prefix)
		if utf8.RuneCountInString(text) <= room {
			b.WriteString(prefix + text + "\n")
			return
		}
		runes := []rune(text)
		cut := room
		for i := room - 1; i > room/2; i-- {
			if runes[i] == ' ' || runes[i] == ',' {
				cut = i + 1
				break
			}
		}
		b.WriteString(prefix + strings.TrimRight(string(runes[:cut]), " ") + "\n")
		text = strings.TrimLeft(string(runes[cut:]), " ")
		prefix = indent
		if text == "" {
			return
		}
	}
}

// WriteJSON writes the report as one indented JSON document: ok, stats, the
// counts and the results with their figures.
func (r *Report) WriteJSON(w io.Writer) error {
	doc := struct {
		OK bool `json:"ok"`
		*Report
	}{r.OK(), r}
	if doc.Results == nil {
		doc.Results = []Result{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // rules quote < and >, and tokens quote &
	return enc.Encode(doc)
}

// WriteJUnit writes the report as JUnit XML, one test case per result,
// grouped in one suite per rule source (profile or rule file), the form CI
// systems (GitLab, Jenkins, GitHub test reporters) display.
func (r *Report) WriteJUnit(w io.Writer, at time.Time) error {
	doc := junit.Report{Name: "omnibench check"}
	index := map[string]int{}
	for _, res := range r.Results {
		src := res.Source
		if src == "" {
			src = "rules"
		}
		// One suite per file or profile, not per line.
		suite := src
		if i := strings.LastIndexByte(src, ':'); i > 0 && !strings.HasPrefix(src, "profile ") {
			suite = src[:i]
		}
		i, ok := index[suite]
		if !ok {
			i = len(doc.Suites)
			index[suite] = i
			doc.Suites = append(doc.Suites, junit.Suite{Name: "omnibench check: " + suite, Timestamp: at,
				Properties: []junit.Property{{Name: "stats", Value: r.Stats}}})
		}
		s := &doc.Suites[i]
		s.Cases = append(s.Cases, resultCase(res, "omnibench.check."+strings.ReplaceAll(suite, " ", ".")))
	}
	return junit.WriteReport(w, doc)
}

// resultCase is one result as a test case: a failure with the result's
// detail, a skip with its reason, or a pass with its figures.
func resultCase(res Result, classname string) junit.Case {
	c := junit.Case{Name: res.Rule, Classname: classname}
	text := caseText(res)
	switch res.Status {
	case Fail:
		msg := fullDetail(res)
		if msg == "" {
			msg = fmt.Sprintf("expected %s, observed %s", res.Expected, res.Observed)
		}
		if text == "" { // junit tells a failing case by its text
			text = msg
		}
		c.Failure, c.Message, c.FailureType = text, msg, "fail"
	case Skip:
		c.Skipped = res.Detail
		if c.Skipped == "" { // junit tells a skipped case by its reason
			c.Skipped = "skipped"
		}
	default:
		c.Message = text
	}
	return c
}

func caseText(res Result) string {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"family", res.Family}, {"expected", res.Expected}, {"observed", res.Observed},
		{"line", lineCell(res)}, {"difference", res.Difference}, {"tolerance", res.Tolerance}, {"detail", res.Detail},
		{"source", res.Source},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	for _, p := range res.Problems {
		fmt.Fprintf(&b, "problem: %s\n", p)
	}
	return b.String()
}
