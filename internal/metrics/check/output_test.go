package check

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/report/table"
)

func sampleReport(t *testing.T) *Report {
	t.Helper()
	fs := parseText(t, replaceLine(t, textExposition(t, metricsCore(t, true)), `threshold_ms="100"`, `threshold_ms="x"`))
	return Evaluate(Input{After: fs}, profileRules(t))
}

func TestReportText(t *testing.T) {
	rep := sampleReport(t)
	var buf bytes.Buffer
	if err := rep.WriteText(&buf, false); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(out, "FAIL threshold_ms values are integers\n") || strings.Contains(out, "PASS") ||
		!strings.Contains(out, `threshold_ms="x" is not an integer`) || !strings.Contains(out, "expected  no problems") {
		t.Errorf("default output lists the failed rule only, with its figures:\n%s", out)
	}
	if last := lines[len(lines)-1]; !strings.HasPrefix(last, fmt.Sprintf("1 of %d rules failed", len(rep.Results))) {
		t.Errorf("summary line = %q", last)
	}
	buf.Reset()
	if err := rep.WriteText(&buf, true); err != nil {
		t.Fatal(err)
	}
	verbose := strings.Split(strings.TrimRight(buf.String(), "\n"), "\n")
	if len(verbose) < len(rep.Results) || !strings.Contains(buf.String(), "\nPASS naming conventions: ") {
		t.Errorf("verbose lists every rule: %d lines for %d rules\n%s", len(verbose), len(rep.Results), buf.String())
	}
	for _, l := range append(lines, verbose...) {
		if n := utf8.RuneCountInString(l); n > TextWidth {
			t.Errorf("line of %d columns: %q", n, l)
		}
	}
	buf.Reset()
	if err := table.Render(&buf, "markdown", rep.Table(true)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "| PASS") || !strings.Contains(buf.String(), "| FAIL") {
		t.Errorf("failures-only table:\n%s", buf.String())
	}
}

// TestProblemsNotTruncated: a check that finds many problems lists each,
// in the text output and in JSON.
func TestProblemsNotTruncated(t *testing.T) {
	text := textExposition(t, metricsCore(t, true))
	for i := 0; i < 20; i++ {
		text += fmt.Sprintf("# TYPE vllm:omni_extra_%d_ms counter\nvllm:omni_extra_%d_ms 1\n", i, i)
	}
	rep := Evaluate(Input{After: parseText(t, text)}, profileRules(t))
	r := byRule(rep)["naming conventions"]
	if r.Status != Fail || len(r.Problems) < 40 {
		t.Fatalf("naming: %d problems, want >= 40 (two per family)", len(r.Problems))
	}
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "more") || !strings.Contains(buf.String(), "vllm:omni_extra_19_ms") {
		t.Errorf("JSON truncates the problems")
	}
	buf.Reset()
	if err := rep.WriteText(&buf, false); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "vllm:omni_extra_19_ms") || strings.Count(buf.String(), "\n     - ") < 40 {
		t.Errorf("text output does not list every problem:\n%s", buf.String())
	}
}

func TestReportJSON(t *testing.T) {
	rep := sampleReport(t)
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		OK      bool     `json:"ok"`
		Stats   string   `json:"stats"`
		Failed  int      `json:"failed"`
		Passed  int      `json:"passed"`
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.OK || doc.Failed != 1 || doc.Passed != rep.Passed || len(doc.Results) != len(rep.Results) || !strings.HasPrefix(doc.Stats, "on") {
		t.Errorf("JSON = %+v", doc)
	}
}

func TestReportJUnit(t *testing.T) {
	rep := sampleReport(t)
	yamlRules, err := ParseRules("extra.yaml", []byte("rules:\n  - family: audio_rtf\n    exists: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	fs := parseText(t, textExposition(t, metricsCore(t, true)))
	both := Evaluate(Input{After: fs}, append(profileRules(t), yamlRules...))
	rep.Results = append(rep.Results, both.Results[len(both.Results)-1])
	rep.Failed++

	var buf bytes.Buffer
	if err := rep.WriteJUnit(&buf, time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	if doc.Tests != len(rep.Results) || doc.Failures != 2 || doc.Skipped != rep.Skipped || len(doc.Suites) != 2 {
		t.Fatalf("junit totals = tests %d failures %d skipped %d suites %d", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suites))
	}
	if doc.Suites[1].Name != "omnibench check: extra.yaml" || doc.Suites[1].Failures != 1 {
		t.Errorf("suite per rule file: %+v", doc.Suites[1])
	}
	var failed *junitCase
	for i, c := range doc.Suites[0].Cases {
		if c.Failure != nil {
			failed = &doc.Suites[0].Cases[i]
		}
	}
	if failed == nil || failed.Name != "threshold_ms values are integers" || !strings.Contains(failed.Failure.Message, `threshold_ms="x" is not an integer`) ||
		!strings.Contains(failed.Failure.Text, "expected: no problems") {
		t.Errorf("failed case = %+v", failed)
	}
	if !strings.HasPrefix(buf.String(), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Error("no XML header")
	}
}

// The reader's view of check's JUnit document.
type junitSuites struct {
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name    string `xml:"name,attr"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
}
