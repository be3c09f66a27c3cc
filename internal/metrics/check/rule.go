package check

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/scrape"
)

// Rule is one assertion about a scrape. Exactly one of Exists, Empty, Type,
// Labels, Buckets, Expect and Check is set; the other fields qualify it.
// Rules come from YAML (see LoadRules) or from a built-in profile.
type Rule struct {
	Name   string // shown in reports; generated when empty
	Family string // family name; either pipeline prefix or none ("audio_ttfp_s")
	// Match restricts value rules to series whose labels include these
	// pairs. One label may be "*": the rule then runs once per value (the
	// keys of the run figure its Expect names with ".*", else the label's
	// values in the scrape).
	Match map[string]string

	Exists *bool // the family is (true) or is not (false) in the scrape
	// Optional makes `exists: true` and expect rules skip instead of fail
	// when the family is absent: for families only some server versions
	// expose.
	Optional bool
	Empty    *bool     // the family is present with no non-zero series (true), or has data (false)
	Type     string    // the family has this type
	Labels   []string  // the family's series carry exactly these label names (any order)
	Buckets  []float64 // every series has exactly these finite bucket bounds, and +Inf

	// Expect compares a measure of the matching series with a number or a
	// run figure.
	Expect *Expectation
	// Measure is what Expect compares: value (summed over series), delta
	// (increase between the scrapes), count, sum or mean (of a histogram's
	// observations between the scrapes). Default: value for gauges, delta
	// for counters and count for histograms.
	Measure string
	// Quantile makes the measure a histogram quantile estimate (0..1) over
	// the observations between the scrapes.
	Quantile  *float64
	Tolerance Tolerance

	// Check names a built-in check: lint, naming, histogram_invariants,
	// integer_labels, stats_gating, format. Family, when set, restricts it
	// (except format, which reads the whole exposition).
	Check       string
	Label       string // integer_labels: the label whose values must be integers
	Stats       string // stats_gating: on, off or auto (default auto)
	NonNegative bool   // histogram_invariants: sums must not be negative

	// Source says where the rule was defined ("rules.yaml:12", "profile vllm-omni").
	Source string
}

// Measures.
const (
	MeasureValue    = "value"
	MeasureDelta    = "delta"
	MeasureCount    = "count"
	MeasureSum      = "sum"
	MeasureMean     = "mean"
	MeasureQuantile = "quantile"
)

// Built-in checks.
const (
	CheckLint                = "lint"
	CheckNaming              = "naming"
	CheckHistogramInvariants = "histogram_invariants"
	CheckIntegerLabels       = "integer_labels"
	CheckStatsGating         = "stats_gating"
	// CheckFormat validates the exposition bytes against the text format
	// 0.0.4 or OpenMetrics 1.0 (see package exposition).
	CheckFormat = "format"
	// CheckBreakdown checks what the breakdown of a run relies on (stage
	// counts, hops, the pipeline's e2e against its parts; breakdown.go).
	CheckBreakdown = "breakdown_consistency"
)

func checkNames() []string {
	return []string{CheckLint, CheckNaming, CheckHistogramInvariants, CheckIntegerLabels, CheckStatsGating, CheckFormat, CheckBreakdown}
}

func measureNames() []string {
	return []string{MeasureValue, MeasureDelta, MeasureCount, MeasureSum, MeasureMean}
}

func typeNames() []string {
	return []string{scrape.TypeCounter, scrape.TypeGauge, scrape.TypeHistogram, scrape.TypeSummary, scrape.TypeUntyped, scrape.TypeGaugeHistogram}
}

// Expectation is a comparison: Op is ==, !=, <=, >=, < or >; the other side
// is Value, or the run figure Figure ("completed.stop") when Figure is set.
type Expectation struct {
	Op     string
	Value  float64
	Figure string
}

// ParseExpectation reads "OP NUMBER" or "OP run.FIGURE", e.g. "<= 2.5" or
// "== run.completed.stop".
func ParseExpectation(s string) (*Expectation, error) {
	s = strings.TrimSpace(s)
	var op string
	for _, o := range []string{"==", "!=", "<=", ">=", "<", ">"} {
		if strings.HasPrefix(s, o) {
			op = o
			break
		}
	}
	if op == "" {
		return nil, fmt.Errorf("expect %q: want an operator (==, !=, <=, >=, <, >) and a number or run figure, e.g. \"<= 2.5\"", s)
	}
	operand := strings.TrimSpace(s[len(op):])
	if fig, ok := strings.CutPrefix(operand, "run."); ok {
		if err := validFigure(fig); err != nil {
			return nil, fmt.Errorf("expect %q: %w", s, err)
		}
		return &Expectation{Op: op, Figure: fig}, nil
	}
	v, err := strconv.ParseFloat(operand, 64)
	if err != nil || math.IsNaN(v) {
		return nil, fmt.Errorf("expect %q: %q is neither a number nor run.<figure>", s, operand)
	}
	return &Expectation{Op: op, Value: v}, nil
}

func (e *Expectation) String() string {
	if e.Figure != "" {
		return e.Op + " run." + e.Figure
	}
	return e.Op + " " + scrape.FormatValue(e.Value)
}

// holds compares observed with expected, allowing a deviation of allowed.
func (e *Expectation) holds(observed, expected, allowed float64) bool {
	if math.IsNaN(observed) || math.IsNaN(expected) {
		return false
	}
	switch e.Op {
	case "==":
		return math.Abs(observed-expected) <= allowed || observed == expected
	case "!=":
		return math.Abs(observed-expected) > allowed
	case "<=":
		return observed <= expected+allowed
	case ">=":
		return observed >= expected-allowed
	case "<":
		return observed < expected+allowed
	case ">":
		return observed > expected-allowed
	}
	return false
}

// Tolerance is the deviation a comparison allows: max(Abs, Rel*|expected|).
type Tolerance struct {
	Abs float64
	Rel float64 // fraction: 0.05 is 5%
}

// ParseTolerance reads "2" (absolute) or "5%" (relative to the expected value).
func ParseTolerance(s string) (Tolerance, error) {
	s = strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(s, "%"); ok {
		v, err := strconv.ParseFloat(strings.TrimSpace(p), 64)
		if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return Tolerance{}, fmt.Errorf("tolerance %q: want a non-negative percentage such as \"5%%\"", s)
		}
		return Tolerance{Rel: v / 100}, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return Tolerance{}, fmt.Errorf("tolerance %q: want a non-negative number or a percentage such as \"5%%\"", s)
	}
	return Tolerance{Abs: v}, nil
}

// Allowed is the deviation allowed around expected.
func (t Tolerance) Allowed(expected float64) float64 {
	if t.Rel == 0 || math.IsInf(expected, 0) {
		return t.Abs // and never 0*Inf = NaN
	}
	return math.Max(t.Abs, t.Rel*math.Abs(expected))
}

func (t Tolerance) String() string {
	pct := strconv.FormatFloat(t.Rel*100, 'f', -1, 64) + "%"
	switch {
	case t.Abs == 0 && t.Rel == 0:
		return "exact"
	case t.Rel == 0:
		return "±" + scrape.FormatValue(t.Abs)
	case t.Abs == 0:
		return "±" + pct
	}
	return "±max(" + scrape.FormatValue(t.Abs) + ", " + pct + ")"
}

// kind names the assertion a rule makes.
func (r *Rule) kind() string {
	switch {
	case r.Check != "":
		return "check"
	case r.Exists != nil:
		return "exists"
	case r.Empty != nil:
		return "empty"
	case r.Type != "":
		return "type"
	case r.Labels != nil:
		return "labels"
	case r.Buckets != nil:
		return "buckets"
	case r.Expect != nil:
		return "expect"
	}
	return ""
}

// Validate reports what is wrong with a rule, independent of any scrape.
func (r *Rule) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	set := 0
	for _, on := range []bool{r.Check != "", r.Exists != nil, r.Empty != nil, r.Type != "", r.Labels != nil, r.Buckets != nil, r.Expect != nil} {
		if on {
			set++
		}
	}
	if set != 1 {
		bad("a rule makes exactly one assertion (one of exists, empty, type, labels, buckets, expect, check); this one has %d", set)
	}
	if r.Family == "" && r.Check == "" {
		bad("family is required")
	}
	if r.Type != "" && !contains(typeNames(), r.Type) {
		bad("type %q: want one of %s", r.Type, strings.Join(typeNames(), ", "))
	}
	if r.Check != "" && !contains(checkNames(), r.Check) {
		bad("check %q: want one of %s", r.Check, strings.Join(checkNames(), ", "))
	}
	if r.Check == CheckIntegerLabels && r.Label == "" {
		bad("check integer_labels needs label: (the label whose values must be integers)")
	}
	if r.Stats != "" {
		if _, err := ParseStatsMode(r.Stats); err != nil {
			bad("stats: %v", err)
		}
	}
	if r.Optional && r.Expect == nil && (r.Exists == nil || !*r.Exists) {
		bad("optional belongs to a rule with exists: true or expect")
	}
	if r.Expect == nil && (r.Measure != "" || r.Quantile != nil || r.Tolerance != (Tolerance{})) {
		bad("measure, quantile and tolerance belong to a rule with expect")
	}
	if r.Measure != "" && !contains(measureNames(), r.Measure) {
		bad("measure %q: want one of %s (or quantile: Q)", r.Measure, strings.Join(measureNames(), ", "))
	}
	if r.Quantile != nil {
		if q := *r.Quantile; !(q >= 0 && q <= 1) {
			bad("quantile %v: want a number in 0..1", q)
		}
		if r.Measure != "" {
			bad("quantile and measure exclude each other")
		}
	}
	wild := 0
	for k, v := range r.Match {
		if v == "*" {
			wild++
		}
		if k == "" {
			bad("match: empty label name")
		}
	}
	if wild > 1 {
		bad("match: at most one label may be \"*\"")
	}
	if r.Expect != nil && strings.HasSuffix(r.Expect.Figure, ".*") && wild != 1 {
		bad("expect %s needs a match label set to \"*\"", r.Expect)
	}
	for i := 1; i < len(r.Buckets); i++ {
		if !(r.Buckets[i] > r.Buckets[i-1]) {
			bad("buckets: bounds must increase (%v after %v)", r.Buckets[i], r.Buckets[i-1])
			break
		}
	}
	return errors.Join(errs...)
}

// DisplayName is the rule's name, or one made from what it asserts.
func (r *Rule) DisplayName() string {
	if r.Name != "" {
		return r.Name
	}
	fam := r.Family
	if fam == "" {
		fam = "all families"
	}
	switch r.kind() {
	case "check":
		if r.Family != "" {
			return r.Check + " " + r.Family
		}
		if r.Check == CheckIntegerLabels {
			return r.Check + " " + r.Label
		}
		return r.Check
	case "exists":
		if *r.Exists {
			return fam + " exists"
		}
		return fam + " absent"
	case "empty":
		if *r.Empty {
			return fam + " empty"
		}
		return fam + " has data"
	case "expect":
		m := r.Measure
		if r.Quantile != nil {
			m = "p" + strconv.FormatFloat(*r.Quantile*100, 'f', -1, 64)
		}
		if m == "" {
			m = "value"
		}
		return fam + matchString(r.Match) + " " + m + " " + r.Expect.String()
	}
	return fam + " " + r.kind()
}

func matchString(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	return "{" + scrape.LabelKey(m) + "}"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
