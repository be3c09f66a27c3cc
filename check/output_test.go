package check

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/report"
)

func sampleReport(t *testing.T) *Report {
	t.Helper()
	fs := parseText(t, replaceLine(t, textExposition(t, metricsCore(t, true)), `threshold_ms="100"`, `threshold_ms="x"`))
	return Evaluate(Input{After: fs}, profileRules(t))
}

func TestReportTable(t *testing.T) {
	rep := sampleReport(t)
	var buf bytes.Buffer
	if err := report.Render(&buf, "table", rep.Table(false)); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	first := strings.Index(out, "FAIL ")
	pass := strings.Index(out, "PASS ")
	if first < 0 || pass < 0 || first > pass {
		t.Errorf("failures are not listed first:\n%s", out)
	}
	if !strings.Contains(out, "FAIL: ") || !strings.Contains(out, "1 failed") {
		t.Errorf("no verdict line:\n%s", out)
	}
	buf.Reset()
	if err := report.Render(&buf, "markdown", rep.Table(true)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "| PASS") || !strings.Contains(buf.String(), "| FAIL") {
		t.Errorf("failures-only table:\n%s", buf.String())
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
