// Package junit writes JUnit XML reports, the test-result format every CI
// system shows, so `omnibench check` and `omnibench run --slo` can hand their
// verdicts to CI as test cases.
//
// The output is the common Jenkins/Surefire dialect:
//
//	<testsuites tests="3" failures="1" errors="0" skipped="0" time="1.250">
//	  <testsuite name="slo" tests="3" failures="1" errors="0" skipped="0" time="1.250">
//	    <testcase name="..." classname="..." time="0.000">
//	      <failure message="one line">details</failure>
//	    </testcase>
//	  </testsuite>
//	</testsuites>
//
// Text is escaped by encoding/xml; characters that XML 1.0 cannot carry at all
// (control characters other than tab, newline and carriage return, U+FFFE,
// U+FFFF, lone surrogates, invalid UTF-8) are replaced by U+FFFD, so a server
// error message full of binary garbage still yields a file CI can parse.
package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Report is a whole document: the suites and, optionally, a name for the
// <testsuites> element.
type Report struct {
	Name   string
	Suites []Suite
}

// Suite is one <testsuite>.
type Suite struct {
	Name  string
	Cases []Case
	// Time is the suite's duration in seconds; 0 means the sum of its cases.
	Time float64
	// Timestamp, when set, is when the suite ran (the timestamp attribute,
	// RFC 3339 in UTC).
	Timestamp time.Time
	// Properties describe the conditions the suite ran under (<properties>).
	Properties []Property
}

// Property is one <property> of a suite.
type Property struct {
	Name, Value string
}

// Case is one <testcase>. It fails when Failure is non-empty, else it is
// skipped when Skipped is non-empty, else it passes (a failure wins over a
// skip: a case cannot be both).
type Case struct {
	Name      string
	Classname string
	// Failure is the failure's detail text (the body of <failure>); empty
	// means the case did not fail.
	Failure string
	// Message is a one-line summary. For a failing case it is the failure's
	// message attribute (default: the first line of Failure); for a passing
	// case it goes to <system-out>, so CI shows why it passed too.
	Message string
	// FailureType is the failing case's type attribute (empty: none).
	FailureType string
	Time        float64 // seconds
	// Skipped is the reason the case was skipped; empty means not skipped.
	Skipped string
}

// Counts of one suite or of a whole report.
type counts struct{ tests, failures, skipped int }

func (c Case) failed() bool  { return c.Failure != "" }
func (c Case) skipped() bool { return !c.failed() && c.Skipped != "" }

// The XML shapes. Attributes tests/failures/errors/skipped are always written
// (some CI parsers insist on them); errors is always 0, as omnibench reports
// problems that stop a check as failures.
type xmlSuites struct {
	XMLName  xml.Name   `xml:"testsuites"`
	Name     string     `xml:"name,attr,omitempty"`
	Tests    int        `xml:"tests,attr"`
	Failures int        `xml:"failures,attr"`
	Errors   int        `xml:"errors,attr"`
	Skipped  int        `xml:"skipped,attr"`
	Time     string     `xml:"time,attr"`
	Suites   []xmlSuite `xml:"testsuite"`
}

type xmlSuite struct {
	Name       string         `xml:"name,attr"`
	Tests      int            `xml:"tests,attr"`
	Failures   int            `xml:"failures,attr"`
	Errors     int            `xml:"errors,attr"`
	Skipped    int            `xml:"skipped,attr"`
	Time       string         `xml:"time,attr"`
	Timestamp  string         `xml:"timestamp,attr,omitempty"`
	Properties *xmlProperties `xml:"properties,omitempty"` // a pointer: no element at all without properties
	Cases      []xmlCase      `xml:"testcase"`
}

type xmlProperties struct {
	List []xmlProperty `xml:"property"`
}

type xmlProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type xmlCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Time      string      `xml:"time,attr"`
	Failure   *xmlFailure `xml:"failure,omitempty"`
	Skipped   *xmlSkipped `xml:"skipped,omitempty"`
	SystemOut string      `xml:"system-out,omitempty"`
}

type xmlFailure struct {
	Message string `xml:"message,attr,omitempty"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

type xmlSkipped struct {
	Message string `xml:"message,attr,omitempty"`
}

// Write writes suites as one <testsuites> document with an XML declaration.
func Write(w io.Writer, suites ...Suite) error {
	return WriteReport(w, Report{Suites: suites})
}

// WriteReport writes r as one <testsuites> document with an XML declaration.
func WriteReport(w io.Writer, r Report) error {
	doc := build(r.Suites)
	doc.Name = clean(r.Name)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("junit: writing XML: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("junit: writing XML: %w", err)
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("junit: writing XML: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("junit: writing XML: %w", err)
	}
	return nil
}

// WriteFile writes suites to path atomically: to a temporary file in the same
// directory, renamed over path once complete, so a CI job never reads half a
// report (and an old report survives a failed write).
func WriteFile(path string, suites ...Suite) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("junit: %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := Write(f, suites...); err != nil {
		return fmt.Errorf("junit: %s: %w", path, err)
	}
	// CreateTemp makes the file 0600; a report is not secret and CI
	// artifact collectors may run as another user.
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("junit: %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("junit: %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("junit: %s: %w", path, err)
	}
	return nil
}

func build(suites []Suite) xmlSuites {
	doc := xmlSuites{Suites: make([]xmlSuite, 0, len(suites))}
	var total float64
	for _, s := range suites {
		xs := xmlSuite{Name: clean(s.Name), Cases: make([]xmlCase, 0, len(s.Cases))}
		if !s.Timestamp.IsZero() {
			xs.Timestamp = s.Timestamp.UTC().Format(time.RFC3339)
		}
		if len(s.Properties) > 0 {
			xs.Properties = &xmlProperties{}
			for _, p := range s.Properties {
				xs.Properties.List = append(xs.Properties.List, xmlProperty{Name: clean(p.Name), Value: clean(p.Value)})
			}
		}
		var c counts
		var sum float64
		for _, tc := range s.Cases {
			c.tests++
			sum += seconds(tc.Time)
			xc := xmlCase{Name: clean(tc.Name), Classname: clean(tc.Classname), Time: formatTime(tc.Time)}
			switch {
			case tc.failed():
				c.failures++
				msg := tc.Message
				if msg == "" {
					msg, _, _ = strings.Cut(tc.Failure, "\n")
				}
				xc.Failure = &xmlFailure{Message: clean(msg), Type: clean(tc.FailureType), Text: clean(tc.Failure)}
			case tc.skipped():
				c.skipped++
				xc.Skipped = &xmlSkipped{Message: clean(tc.Skipped)}
			default:
				xc.SystemOut = clean(tc.Message)
			}
			xs.Cases = append(xs.Cases, xc)
		}
		t := seconds(s.Time)
		if t == 0 {
			t = sum
		}
		xs.Tests, xs.Failures, xs.Skipped, xs.Time = c.tests, c.failures, c.skipped, formatTime(t)
		doc.Tests += c.tests
		doc.Failures += c.failures
		doc.Skipped += c.skipped
		total += t
		doc.Suites = append(doc.Suites, xs)
	}
	doc.Time = formatTime(total)
	return doc
}

// seconds maps an unusable duration (negative, NaN, infinite) to 0 so the
// time attributes stay numbers CI can parse.
func seconds(t float64) float64 {
	if math.IsNaN(t) || math.IsInf(t, 0) || t < 0 {
		return 0
	}
	return t
}

func formatTime(t float64) string { return strconv.FormatFloat(seconds(t), 'f', 3, 64) }

// clean replaces what XML 1.0 cannot represent with U+FFFD. encoding/xml
// escapes markup characters itself; this handles the characters that no
// escape can carry (XML 1.0 section 2.2, production Char).
func clean(s string) string {
	if validXML(s) {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isXMLChar(r) {
			return r
		}
		return '\uFFFD'
	}, s)
}

func validXML(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !isXMLChar(r) {
			return false
		}
	}
	return true
}

func isXMLChar(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return true
	case r >= 0x20 && r <= 0xD7FF:
		return true
	case r >= 0xE000 && r <= 0xFFFD:
		return true
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}
