package junit

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The reader's view of the document, declared apart from the writer's types
// so the test checks the XML itself, not a round trip through shared structs.
type readSuites struct {
	XMLName  xml.Name    `xml:"testsuites"`
	Tests    string      `xml:"tests,attr"`
	Failures string      `xml:"failures,attr"`
	Errors   string      `xml:"errors,attr"`
	Skipped  string      `xml:"skipped,attr"`
	Time     string      `xml:"time,attr"`
	Suites   []readSuite `xml:"testsuite"`
}

type readSuite struct {
	Name     string     `xml:"name,attr"`
	Tests    string     `xml:"tests,attr"`
	Failures string     `xml:"failures,attr"`
	Skipped  string     `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Cases    []readCase `xml:"testcase"`
}

type readCase struct {
	Name      string `xml:"name,attr"`
	Classname string `xml:"classname,attr"`
	Time      string `xml:"time,attr"`
	Failure   *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	SystemOut string `xml:"system-out"`
}

func parse(t *testing.T, b []byte) readSuites {
	t.Helper()
	var doc readSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("output is not XML: %v\n%s", err, b)
	}
	return doc
}

func TestWriteCounts(t *testing.T) {
	suites := []Suite{
		{Name: "slo", Time: 2.5, Cases: []Case{
			{Name: "a", Classname: "slo", Message: "ok, 10 ms to spare"},
			{Name: "b", Classname: "slo", Failure: "observed 612 ms\nlimit 500 ms", Message: "missed by 112 ms", Time: 0.25},
			{Name: "c", Classname: "slo", Skipped: "no goodput"},
			{Name: "d", Classname: "slo", Failure: "first line\nsecond line"},
		}},
		{Name: "check", Cases: []Case{
			{Name: "e", Time: 0.5},
			{Name: "f", Time: 0.75, Failure: "bad", Skipped: "ignored: a failure wins"},
		}},
	}
	var buf bytes.Buffer
	if err := Write(&buf, suites...); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML declaration:\n%s", buf.String())
	}
	doc := parse(t, buf.Bytes())
	// 6 cases, failures b, d, f; skipped c; time 2.5 + (0.5+0.75).
	if doc.Tests != "6" || doc.Failures != "3" || doc.Errors != "0" || doc.Skipped != "1" || doc.Time != "3.750" {
		t.Errorf("testsuites counts = tests %s failures %s errors %s skipped %s time %s, want 6 3 0 1 3.750",
			doc.Tests, doc.Failures, doc.Errors, doc.Skipped, doc.Time)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("%d suites, want 2", len(doc.Suites))
	}
	s0, s1 := doc.Suites[0], doc.Suites[1]
	if s0.Name != "slo" || s0.Tests != "4" || s0.Failures != "2" || s0.Skipped != "1" || s0.Time != "2.500" {
		t.Errorf("suite 0 = %+v", s0)
	}
	if s1.Name != "check" || s1.Tests != "2" || s1.Failures != "1" || s1.Skipped != "0" || s1.Time != "1.250" {
		t.Errorf("suite 1 (time from its cases) = %+v", s1)
	}
	a, b, c, d := s0.Cases[0], s0.Cases[1], s0.Cases[2], s0.Cases[3]
	if a.Failure != nil || a.Skipped != nil || a.SystemOut != "ok, 10 ms to spare" || a.Time != "0.000" {
		t.Errorf("passing case = %+v", a)
	}
	if b.Failure == nil || b.Failure.Message != "missed by 112 ms" || b.Failure.Text != "observed 612 ms\nlimit 500 ms" || b.Time != "0.250" {
		t.Errorf("failing case = %+v", b)
	}
	if c.Skipped == nil || c.Skipped.Message != "no goodput" || c.Failure != nil {
		t.Errorf("skipped case = %+v", c)
	}
	if d.Failure == nil || d.Failure.Message != "first line" {
		t.Errorf("failure without a message should take its first line: %+v", d)
	}
	if f := s1.Cases[1]; f.Failure == nil || f.Skipped != nil {
		t.Errorf("failing and skipped case should be a failure only: %+v", f)
	}
}

func TestWriteEscaping(t *testing.T) {
	nasty := `a<b & "c" 'd' ]]> </failure>`
	control := "ok\x00nul\x1besc\x7fdel\ufffeend\xffbad\ttab\r\nline"
	// What a reader must get back: markup intact, XML-impossible characters
	// replaced by U+FFFD, tab/CR/LF kept (encoding/xml writes them as
	// character references, so a reader's end-of-line handling keeps them).
	wantControl := "ok\ufffdnul\ufffdesc\x7fdel\ufffdend\ufffdbad\ttab\r\nline"
	wantControlAttr := wantControl
	var buf bytes.Buffer
	err := Write(&buf, Suite{Name: nasty, Cases: []Case{
		{Name: nasty, Classname: control, Failure: nasty + "\n" + control, Message: control},
		{Name: "pass", Message: nasty},
		{Name: "skip", Skipped: control},
	}})
	if err != nil {
		t.Fatal(err)
	}
	raw := buf.String()
	if strings.Contains(raw, "\x00") || strings.Contains(raw, "\x1b") || strings.Contains(raw, "\xff") {
		t.Errorf("raw output carries characters XML cannot hold: %q", raw)
	}
	if strings.Count(raw, "</failure>") != 1 {
		t.Errorf("markup in text was not escaped:\n%s", raw)
	}
	doc := parse(t, buf.Bytes())
	s := doc.Suites[0]
	if s.Name != nasty {
		t.Errorf("suite name = %q, want %q", s.Name, nasty)
	}
	c := s.Cases[0]
	if c.Name != nasty {
		t.Errorf("case name = %q, want %q", c.Name, nasty)
	}
	if c.Classname != wantControlAttr {
		t.Errorf("classname = %q, want %q", c.Classname, wantControlAttr)
	}
	if c.Failure.Message != wantControlAttr {
		t.Errorf("failure message = %q, want %q", c.Failure.Message, wantControlAttr)
	}
	if want := nasty + "\n" + wantControl; c.Failure.Text != want {
		t.Errorf("failure text = %q, want %q", c.Failure.Text, want)
	}
	if got := s.Cases[1].SystemOut; got != nasty {
		t.Errorf("system-out = %q, want %q", got, nasty)
	}
	if got := s.Cases[2].Skipped.Message; got != wantControlAttr {
		t.Errorf("skipped message = %q, want %q", got, wantControlAttr)
	}
}

func TestClean(t *testing.T) {
	for in, want := range map[string]string{
		"plain":            "plain",
		"tab\tnl\ncr\r":    "tab\tnl\ncr\r",
		"\x00\x08\x0b\x0c": "\ufffd\ufffd\ufffd\ufffd",
		"\ufffe\uffff":     "\ufffd\ufffd",
		"\xc3\x28":         "\ufffd(",    // invalid two-byte sequence
		"µ日本😀":             "µ日本😀",       // valid non-ASCII is kept
		"\U0010FFFF":       "\U0010FFFF", // the last code point is an XML Char
	} {
		if got := clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestWriteUnusableTimes(t *testing.T) {
	var buf bytes.Buffer
	nan := func() float64 { var z float64; return z / z }()
	if err := Write(&buf, Suite{Name: "s", Time: -1, Cases: []Case{{Name: "x", Time: nan}}}); err != nil {
		t.Fatal(err)
	}
	doc := parse(t, buf.Bytes())
	if doc.Time != "0.000" || doc.Suites[0].Time != "0.000" || doc.Suites[0].Cases[0].Time != "0.000" {
		t.Errorf("times = %s %s %s, want 0.000", doc.Time, doc.Suites[0].Time, doc.Suites[0].Cases[0].Time)
	}
}

func TestWriteEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf); err != nil {
		t.Fatal(err)
	}
	doc := parse(t, buf.Bytes())
	if doc.Tests != "0" || doc.Failures != "0" || len(doc.Suites) != 0 {
		t.Errorf("empty report = %+v", doc)
	}
}

type failWriter struct{}

var errDiskFull = errors.New("disk full")

func (failWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteError(t *testing.T) {
	err := Write(failWriter{}, Suite{Name: "s"})
	if !errors.Is(err, errDiskFull) {
		t.Errorf("Write error = %v, want it to wrap %v", err, errDiskFull)
	}
}

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "junit.xml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, Suite{Name: "slo", Cases: []Case{{Name: "a", Failure: "x"}}}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if doc := parse(t, b); doc.Tests != "1" || doc.Failures != "1" {
		t.Errorf("file counts = %s/%s, want 1/1", doc.Tests, doc.Failures)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v, want 0644", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("temporary files left behind: %v", names)
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "no", "such", "dir", "junit.xml")
	err := WriteFile(path, Suite{Name: "s"})
	if err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("WriteFile into a missing directory: error %v, want one naming %s", err, path)
	}
}

// TestWriteReportAttributes checks the optional parts of the dialect that
// `omnibench check` writes: the document's name, a suite's timestamp and
// properties, and a failure's type; a suite without them has none.
func TestWriteReportAttributes(t *testing.T) {
	var buf bytes.Buffer
	err := WriteReport(&buf, Report{Name: "omnibench check", Suites: []Suite{
		{Name: "rules", Timestamp: time.Date(2026, 7, 1, 14, 0, 0, 0, time.FixedZone("CEST", 2*3600)),
			Properties: []Property{{Name: "stats", Value: "on"}},
			Cases:      []Case{{Name: "r", Classname: "c", Failure: "detail", Message: "why", FailureType: "fail"}}},
		{Name: "plain", Cases: []Case{{Name: "p", Classname: "c"}}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="omnibench check" tests="2" failures="1" errors="0" skipped="0" time="0.000">
  <testsuite name="rules" tests="1" failures="1" errors="0" skipped="0" time="0.000" timestamp="2026-07-01T12:00:00Z">
    <properties>
      <property name="stats" value="on"></property>
    </properties>
    <testcase name="r" classname="c" time="0.000">
      <failure message="why" type="fail">detail</failure>
    </testcase>
  </testsuite>
  <testsuite name="plain" tests="1" failures="0" errors="0" skipped="0" time="0.000">
    <testcase name="p" classname="c" time="0.000"></testcase>
  </testsuite>
</testsuites>
`
	if got := buf.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
