// Package exposition validates a Prometheus exposition as written on the
// wire: the raw bytes of a text format 0.0.4 or OpenMetrics 1.0 body, read
// line by line by a hand-written scanner and checked against the two
// specifications. Parsers such as expfmt's are lenient where a server may
// not be (they accept a NaN counter, a histogram without +Inf, TYPE after
// samples, interleaved series); this package reports each such departure as
// a Violation naming the rule, the line and the offending token, the way
// promtool does.
//
// Everything the scanner accepts as text format, expfmt's text parser also
// accepts (a fuzz test holds it to that); it is stricter where the
// specification is: metric names are the 0.0.4 ones (no quoted UTF-8
// names), types are lower case, HELP escapes only \\ and \n.
//
// Protobuf expositions are not text and are not validated here.
package exposition

import (
	"fmt"
	"unicode/utf8"
)

// Format is the text format an exposition is validated against.
type Format int

// Formats.
const (
	Text        Format = iota // Prometheus text format 0.0.4
	OpenMetrics               // OpenMetrics 1.0 text
)

func (f Format) String() string {
	if f == OpenMetrics {
		return "OpenMetrics 1.0"
	}
	return "text 0.0.4"
}

// Rule identifiers. Every violation belongs to exactly one.
const (
	RuleSyntax     = "syntax"
	RuleMetricName = "metric-name"
	RuleLabelName  = "label-name"
	RuleEscape     = "escape"
	RuleValue      = "value"
	RuleTimestamp  = "timestamp"
	RuleHelp       = "help"
	RuleType       = "type"
	RuleUnit       = "unit"
	RuleGrouping   = "grouping"
	RuleDuplicate  = "duplicate-series"
	RuleSampleName = "sample-name"
	RuleCounter    = "counter"
	RuleBuckets    = "histogram-buckets"
	RuleCount      = "histogram-count"
	RuleSummary    = "summary"
	RuleInfoState  = "info-stateset"
	RuleExemplar   = "exemplar"
	RuleBlankLine  = "blank-line"
	RuleComment    = "comment"
	RuleEOF        = "eof"
	RuleUTF8       = "utf8"
	RuleLineEnd    = "line-end"
)

// RuleInfo describes a rule: its identifier and what it requires.
type RuleInfo struct {
	ID    string
	Title string // what a valid exposition does, e.g. "counter values are not NaN and not negative"
}

// Rules lists the rules that apply to a format, in the order results are
// reported.
func Rules(f Format) []RuleInfo {
	all := []struct {
		RuleInfo
		omOnly bool
	}{
		{RuleInfo{RuleSyntax, "every line is a sample, a comment or metadata, with the tokens the grammar allows"}, false},
		{RuleInfo{RuleLineEnd, "lines end in LF (no CR); the last line ends in LF"}, false},
		{RuleInfo{RuleUTF8, "the exposition is valid UTF-8"}, false},
		{RuleInfo{RuleMetricName, "metric names match [a-zA-Z_:][a-zA-Z0-9_:]* (OpenMetrics: no family is named like another's samples)"}, false},
		{RuleInfo{RuleLabelName, "label names match [a-zA-Z_][a-zA-Z0-9_]*, are not reserved (__) and not repeated"}, false},
		{RuleInfo{RuleEscape, "label values and HELP texts use only the escapes the format defines"}, false},
		{RuleInfo{RuleValue, "sample values are numbers of the format"}, false},
		{RuleInfo{RuleTimestamp, "timestamps are numbers of the format (and never decrease within a series)"}, false},
		{RuleInfo{RuleHelp, "at most one HELP per family, before its samples"}, false},
		{RuleInfo{RuleType, "at most one TYPE per family, a known type, before its samples"}, false},
		{RuleInfo{RuleUnit, "at most one UNIT per family, before its samples, a suffix of the family name, none on info and stateset"}, true},
		{RuleInfo{RuleGrouping, "a family's lines are contiguous, and so are the samples of each of its series"}, false},
		{RuleInfo{RuleDuplicate, "no sample (name and label set) appears twice"}, false},
		{RuleInfo{RuleSampleName, "sample names are those the family's type defines"}, false},
		{RuleInfo{RuleCounter, "counter values are not NaN and not negative"}, false},
		{RuleInfo{RuleBuckets, "histogram buckets have a numeric le, increase in le, are cumulative and end with +Inf"}, false},
		{RuleInfo{RuleCount, "a histogram has a _count equal to its +Inf bucket (OpenMetrics: _count and _sum together, the sum not negative)"}, false},
		{RuleInfo{RuleSummary, "summary quantiles are numbers in [0, 1] in increasing order; counts (OpenMetrics: and sums) are not negative"}, false},
		{RuleInfo{RuleInfoState, "info values are 1, stateset values 0 or 1 with the family's label"}, true},
		{RuleInfo{RuleExemplar, "exemplars only in OpenMetrics, on counter totals and histogram buckets, labels <= 128 runes"}, false},
		{RuleInfo{RuleBlankLine, "no blank lines"}, true},
		{RuleInfo{RuleComment, "no comments other than HELP, TYPE, UNIT and EOF"}, true},
		{RuleInfo{RuleEOF, "# EOF once, as the last line"}, true},
	}
	out := make([]RuleInfo, 0, len(all))
	for _, r := range all {
		if r.omOnly && f != OpenMetrics {
			continue
		}
		out = append(out, r.RuleInfo)
	}
	return out
}

// Violation is one departure from the format.
type Violation struct {
	Rule     string `json:"rule"`
	Line     int    `json:"line"`             // 1-based line of the body
	Token    string `json:"token"`            // the offending token as written (clipped to maxToken bytes)
	Family   string `json:"family,omitempty"` // the metric family, when known
	Expected string `json:"expected"`
	Observed string `json:"observed"`
}

func (v Violation) String() string {
	s := fmt.Sprintf("line %d: %s: %s", v.Line, v.Rule, v.Observed)
	if v.Token != "" {
		s += fmt.Sprintf(" (%q)", v.Token)
	}
	return s + "; want " + v.Expected
}

// Result is the outcome of validating one exposition.
type Result struct {
	Format     Format
	Lines      int // lines read
	Families   int
	Samples    int
	Violations []Violation
	// Stopped is set when MaxViolations were found: the lines after the
	// last violation's were not checked.
	Stopped bool
}

// MaxViolations bounds the violations collected from one exposition: a body
// that is not an exposition at all would otherwise yield one per line.
const MaxViolations = 1000

// maxToken bounds the token quoted in a violation; longer ones end in "…"
// followed by their length, so a 1 MB line does not become a 1 MB message.
const maxToken = 120

func clipToken(s string) string {
	if len(s) <= maxToken {
		return s
	}
	cut := maxToken
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}
