package check

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/omnibench/omnibench/report"
)

// Table renders the results as one table, failures first, then passes and
// skips, each in rule order. Long cells are clipped; with failuresOnly, only
// failed rules are listed.
func (r *Report) Table(failuresOnly bool) report.Table {
	t := report.Table{
		Title:  "Metrics check",
		Header: []string{"status", "rule", "family", "expected", "observed", "difference", "tolerance", "detail"},
	}
	for _, want := range []Status{Fail, Pass, Skip} {
		if failuresOnly && want != Fail {
			continue
		}
		for _, res := range r.Results {
			if res.Status != want {
				continue
			}
			t.Rows = append(t.Rows, []string{strings.ToUpper(string(res.Status)), res.Rule, res.Family,
				clip(res.Expected), clip(res.Observed), res.Difference, res.Tolerance, clip(res.Detail)})
		}
	}
	verdict := "PASS"
	if !r.OK() {
		verdict = "FAIL"
	}
	t.Notes = []string{
		fmt.Sprintf("%s: %d passed, %d failed, %d skipped. Server stats: %s.", verdict, r.Passed, r.Failed, r.Skipped, r.Stats),
	}
	return t
}

// maxCell bounds a table cell; JSON and JUnit carry the full text.
const maxCell = 72

func clip(s string) string {
	if r := []rune(s); len(r) > maxCell {
		return string(r[:maxCell-1]) + "…"
	}
	return s
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
	return enc.Encode(doc)
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, one test case per result,
// grouped in one suite per rule source (profile or rule file), the form CI
// systems (GitLab, Jenkins, GitHub test reporters) display.
func (r *Report) WriteJUnit(w io.Writer, at time.Time) error {
	doc := junitSuites{Name: "omnibench check"}
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
			doc.Suites = append(doc.Suites, junitSuite{Name: "omnibench check: " + suite, Timestamp: at.UTC().Format(time.RFC3339),
				Properties: []junitProperty{{Name: "stats", Value: r.Stats}}})
		}
		s := &doc.Suites[i]
		c := junitCase{Name: res.Rule, Classname: "omnibench.check." + strings.ReplaceAll(suite, " ", ".")}
		text := caseText(res)
		switch res.Status {
		case Fail:
			msg := res.Detail
			if msg == "" {
				msg = fmt.Sprintf("expected %s, observed %s", res.Expected, res.Observed)
			}
			c.Failure = &junitMessage{Message: msg, Type: "fail", Text: text}
			s.Failures++
			doc.Failures++
		case Skip:
			c.Skipped = &junitMessage{Message: res.Detail}
			s.Skipped++
			doc.Skipped++
		default:
			c.SystemOut = text
		}
		s.Tests++
		doc.Tests++
		s.Cases = append(s.Cases, c)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: %w", err)
	}
	_, err := io.WriteString(w, "\n")
	return err
}

func caseText(res Result) string {
	var b strings.Builder
	for _, kv := range [][2]string{
		{"family", res.Family}, {"expected", res.Expected}, {"observed", res.Observed},
		{"difference", res.Difference}, {"tolerance", res.Tolerance}, {"detail", res.Detail}, {"source", res.Source},
	} {
		if kv[1] != "" {
			fmt.Fprintf(&b, "%s: %s\n", kv[0], kv[1])
		}
	}
	return b.String()
}
