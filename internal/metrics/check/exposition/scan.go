package exposition

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Validate checks body against format f. It never fails: everything wrong
// is a Violation in the result.
func Validate(body []byte, f Format) *Result {
	sc := &scanner{
		om:       f == OpenMetrics,
		res:      &Result{Format: f},
		families: map[string]*family{},
	}
	sc.run(body)
	return sc.res
}

// scanner holds the state of one validation.
type scanner struct {
	om       bool
	res      *Result
	families map[string]*family
	order    []*family
	cur      *family // the family of the previous metadata or sample line
	line     int     // current line, 1-based
	text     string  // current line, without its LF (and CR)
	eofLine  int     // OpenMetrics: the line of # EOF

	// labelIndex holds the names of the label set being read, once it is
	// long (see addLabel); every label set starts without one.
	labelIndex map[string]bool
}

// family is what the scanner knows about one metric family.
type family struct {
	name                         string
	typ                          string // declared type; "" when undeclared
	unit                         string // OpenMetrics: the declared unit; "" when none
	line                         int    // the line that named the family first
	helpLine, typeLine, unitLine int
	firstSample                  int // line of the first sample; 0 when none
	lastLine                     int // last line that belonged to the family
	samples                      int
	series                       []*series
	byKey                        map[string]*series
	cur                          *series
	seen                         map[string]seenSample // sample name and full label set
}

type seenSample struct {
	line  int
	hasTS bool
	ts    float64
}

// series is one label set of a family (le and quantile excluded): the
// samples that together form a histogram or summary.
type series struct {
	key             string
	firstLine       int
	lastLine        int
	buckets         []bucket
	quantiles       []bucket // bound = quantile
	count, sum      *point
	negativeBuckets bool
}

type bucket struct {
	bound float64
	raw   string // le or quantile as written
	value float64
	line  int
	token string
}

type point struct {
	value float64
	line  int
	token string
}

// sample is one parsed sample line.
type sample struct {
	name     string
	labels   []labelPair
	value    float64
	rawValue string
	hasTS    bool
	ts       float64
	exemplar *exemplar
}

type labelPair struct{ name, value string }

type exemplar struct {
	labels []labelPair
	runes  int
}

// add records a violation at the current line; past MaxViolations it stops
// the scan.
func (sc *scanner) add(rule, token, fam, expected, observed string) {
	sc.addAt(sc.line, rule, token, fam, expected, observed)
}

func (sc *scanner) addAt(line int, rule, token, fam, expected, observed string) {
	if sc.res.Stopped {
		return
	}
	sc.res.Violations = append(sc.res.Violations, Violation{Rule: rule, Line: line, Token: clipToken(token),
		Family: fam, Expected: expected, Observed: observed})
	if len(sc.res.Violations) >= MaxViolations {
		sc.res.Stopped = true
	}
}

func (sc *scanner) run(body []byte) {
	rest := body
	for len(rest) > 0 && !sc.res.Stopped {
		sc.line++
		var raw []byte
		nl := bytes.IndexByte(rest, '\n')
		if nl < 0 {
			raw, rest = rest, nil
		} else {
			raw, rest = rest[:nl], rest[nl+1:]
		}
		if sc.eofLine > 0 {
			sc.add(RuleEOF, string(raw), "", "nothing after # EOF", fmt.Sprintf("more after # EOF (line %d)", sc.eofLine))
			break
		}
		if !utf8.Valid(raw) {
			off := 0
			for off < len(raw) {
				r, size := utf8.DecodeRune(raw[off:])
				if r == utf8.RuneError && size <= 1 {
					break
				}
				off += size
			}
			sc.add(RuleUTF8, string(raw[off:min(len(raw), off+4)]), "", "UTF-8 text", fmt.Sprintf("invalid UTF-8 at byte %d of the line", off+1))
		}
		if n := len(raw); n > 0 && raw[n-1] == '\r' {
			sc.add(RuleLineEnd, `\r`, "", "lines end in LF", "the line ends in CR LF")
			raw = raw[:n-1]
		}
		if nl < 0 {
			sc.unterminated(raw)
		}
		sc.text = string(raw)
		if sc.om {
			sc.omLine()
		} else {
			sc.textLine()
		}
	}
	sc.res.Lines = sc.line
	if sc.om && sc.eofLine == 0 && !sc.res.Stopped {
		sc.line = max(sc.line, 1)
		sc.res.Lines = sc.line
		sc.add(RuleEOF, "", "", "the exposition ends with # EOF", "no # EOF line")
	}
	sc.finish()
}

// unterminated reports a last line without LF where the format requires it.
func (sc *scanner) unterminated(raw []byte) {
	if sc.om {
		// The LF after # EOF is optional; a missing # EOF is reported at
		// the end of the scan.
		return
	}
	if len(bytes.Trim(raw, " \t")) > 0 {
		sc.add(RuleLineEnd, lastToken(string(raw)), "", "the last line ends in LF", "the exposition ends without a line feed")
	}
}

func lastToken(s string) string {
	s = strings.TrimRight(s, " \t")
	if i := strings.LastIndexAny(s, " \t"); i >= 0 {
		return s[i+1:]
	}
	return s
}

// ----- text format 0.0.4 -----

func (sc *scanner) textLine() {
	c := cursor{s: sc.text}
	c.skipBlanks()
	switch {
	case c.done():
		return // empty lines are ignored in the text format
	case c.peek() == '#':
		c.i++
		sc.textComment(&c)
	case c.peek() == '{':
		sc.add(RuleMetricName, c.until(" \t"), "", "a sample line starting with its metric name",
			"a label set without metric name (quoted UTF-8 names are not part of text format 0.0.4)")
	default:
		if s, ok := sc.textSample(&c); ok {
			sc.sample(s)
		}
	}
}

var textTypes = []string{"counter", "gauge", "histogram", "summary", "untyped"}

func (sc *scanner) textComment(c *cursor) {
	c.skipBlanks()
	kw := c.until(" \t")
	if kw != "HELP" && kw != "TYPE" {
		return // a plain comment
	}
	rule := map[string]string{"HELP": RuleHelp, "TYPE": RuleType}[kw]
	c.skipBlanks()
	if c.done() {
		sc.add(rule, "# "+kw, "", "# "+kw+" followed by a metric name", "a bare # "+kw+" line")
		return
	}
	start := c.i
	name := c.metricName()
	if name == "" || (!c.done() && !isBlank(c.peek())) {
		c.i = start
		sc.add(RuleMetricName, c.until(" \t"), "", "a metric name after # "+kw, "an invalid metric name")
		return
	}
	c.skipBlanks()
	text := c.rest()
	f := sc.resolveText(name)
	switch kw {
	case "HELP":
		sc.helpEscapes(text, f.name, false)
		sc.metadata(RuleHelp, f, &f.helpLine)
	case "TYPE":
		switch {
		case text == "":
			sc.add(RuleType, sc.text, f.name, "# TYPE name type", "a TYPE line without a type")
		case !contains(textTypes, text):
			sc.add(RuleType, text, f.name, "one of "+strings.Join(textTypes, ", "), typeObserved(text))
		}
		if sc.metadata(RuleType, f, &f.typeLine) && contains(textTypes, text) {
			f.typ = text
		}
	}
}

func typeObserved(t string) string {
	if contains(textTypes, strings.ToLower(t)) || contains(omTypes, strings.ToLower(t)) {
		return "type " + strconv.Quote(t) + " (types are lower case)"
	}
	return "unknown type " + strconv.Quote(t)
}

// resolveText finds the family a name belongs to as expfmt does: a family
// of that exact name, else the histogram or summary whose _bucket, _count
// or _sum it is, else a new family.
func (sc *scanner) resolveText(name string) *family {
	if f := sc.families[name]; f != nil {
		return f
	}
	for _, suf := range []string{"_count", "_sum"} {
		if stem, ok := strings.CutSuffix(name, suf); ok && stem != "" {
			if f := sc.families[stem]; f != nil && f.typ == "summary" {
				return f
			}
		}
	}
	for _, suf := range []string{"_count", "_sum", "_bucket"} {
		if stem, ok := strings.CutSuffix(name, suf); ok && stem != "" {
			if f := sc.families[stem]; f != nil && f.typ == "histogram" {
				return f
			}
		}
	}
	return sc.family(name)
}

func (sc *scanner) family(name string) *family {
	f := sc.families[name]
	if f == nil {
		f = &family{name: name, line: sc.line, byKey: map[string]*series{}, seen: map[string]seenSample{}}
		sc.families[name] = f
		sc.order = append(sc.order, f)
	}
	return f
}

// textSample parses a sample line of the text format, the way expfmt's
// parser reads it (blanks and tabs between tokens, a trailing comma in the
// label set), stricter only where the specification is.
func (sc *scanner) textSample(c *cursor) (*sample, bool) {
	start := c.i
	name := c.metricName()
	if name == "" || (!c.done() && !isBlank(c.peek()) && c.peek() != '{') {
		c.i = start
		sc.add(RuleMetricName, c.until(" \t{"), "", "a metric name matching [a-zA-Z_:][a-zA-Z0-9_:]*", "an invalid metric name")
		return nil, false
	}
	s := &sample{name: name}
	c.skipBlanks()
	if c.peek() == '{' {
		c.i++
		labels, ok := sc.textLabels(c, name)
		if !ok {
			return nil, false
		}
		s.labels = labels
		c.skipBlanks()
	}
	raw := c.until(" \t")
	if raw == "" {
		sc.add(RuleValue, sc.text, name, "a value after the metric name and labels", "no value")
		return nil, false
	}
	v, err := textFloat(raw)
	if err != nil {
		sc.add(RuleValue, raw, name, "a float (Go ParseFloat syntax, NaN, +Inf, -Inf)", "value "+strconv.Quote(raw))
		return nil, false
	}
	s.value, s.rawValue = v, raw
	if c.done() {
		return s, true
	}
	c.skipBlanks()
	switch {
	case c.done():
		sc.add(RuleSyntax, sc.text, name, "a timestamp or the end of the line after the value", "blanks at the end of the line")
		return nil, false
	case c.peek() == '#':
		sc.add(RuleExemplar, c.rest(), name, "no exemplar (exemplars are OpenMetrics only)", "an exemplar in the text format")
		return nil, false
	}
	tsRaw := c.until(" \t")
	ts, err := strconv.ParseInt(tsRaw, 10, 64)
	if err != nil {
		sc.add(RuleTimestamp, tsRaw, name, "an integer timestamp in milliseconds", "timestamp "+strconv.Quote(tsRaw))
		return nil, false
	}
	if !c.done() {
		sc.add(RuleSyntax, c.rest(), name, "the end of the line after the timestamp", "more text after the timestamp")
		return nil, false
	}
	s.hasTS, s.ts = true, float64(ts)
	return s, true
}

// textFloat parses a value as expfmt does: Go's ParseFloat without hex
// floats and digit separators.
func textFloat(s string) (float64, error) {
	if strings.ContainsAny(s, "pP_") {
		return 0, fmt.Errorf("unsupported character in float")
	}
	return strconv.ParseFloat(s, 64)
}

func (sc *scanner) textLabels(c *cursor, metric string) ([]labelPair, bool) {
	var out []labelPair
	sc.labelIndex = nil
	for {
		c.skipBlanks()
		if c.done() {
			sc.add(RuleSyntax, sc.text, metric, "a label set closed by '}'", "the line ends inside the label set")
			return nil, false
		}
		if c.peek() == '}' {
			c.i++
			return out, true
		}
		name, ok := sc.labelName(c, metric, " \t=")
		if !ok {
			return nil, false
		}
		c.skipBlanks()
		if c.peek() != '=' {
			sc.add(RuleSyntax, c.until(" \t"), metric, "'=' after label name "+name, "no '='")
			return nil, false
		}
		c.i++
		c.skipBlanks()
		value, ok := sc.labelValue(c, metric)
		if !ok {
			return nil, false
		}
		out = sc.addLabel(out, name, value, metric)
		c.skipBlanks()
		switch c.peek() {
		case ',':
			c.i++
		case '}':
			c.i++
			return out, true
		default:
			sc.add(RuleSyntax, c.until(" \t"), metric, "',' or '}' after the value of label "+name, "something else")
			return nil, false
		}
	}
}

// labelName reads a label name; stop lists the bytes that may follow it.
func (sc *scanner) labelName(c *cursor, metric, stop string) (string, bool) {
	start := c.i
	name := c.labelName()
	if name == "" || (!c.done() && !strings.ContainsRune(stop, rune(c.peek()))) {
		c.i = start
		tok := c.until(" \t=,}")
		if tok == "" && !c.done() {
			tok = string(c.peek())
		}
		sc.add(RuleLabelName, tok, metric, "a label name matching [a-zA-Z_][a-zA-Z0-9_]*", "an invalid label name")
		return "", false
	}
	return name, true
}

// labelValue reads a quoted label value at c (which must be at the opening
// quote) and decodes its escapes.
func (sc *scanner) labelValue(c *cursor, metric string) (string, bool) {
	if c.peek() != '"' {
		sc.add(RuleSyntax, c.until(" \t,}"), metric, `a label value in double quotes`, "no opening quote")
		return "", false
	}
	c.i++
	var b strings.Builder
	for !c.done() {
		ch := c.s[c.i]
		switch ch {
		case '"':
			c.i++
			return b.String(), true
		case '\\':
			if c.i+1 >= len(c.s) {
				c.i++
				continue // unterminated, reported below
			}
			switch e := c.s[c.i+1]; e {
			case '\\', '"':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			default:
				// OpenMetrics lets a backslash precede any other character
				// and keeps both; the text format knows only these three.
				if !sc.om {
					sc.add(RuleEscape, c.s[c.i:c.i+2], metric, `only \\, \" and \n in label values`, "escape "+strconv.Quote(c.s[c.i:c.i+2]))
				}
				b.WriteString(c.s[c.i : c.i+2])
			}
			c.i += 2
		default:
			b.WriteByte(ch)
			c.i++
		}
	}
	sc.add(RuleSyntax, sc.text, metric, "a label value closed by '\"'", "the line ends inside a label value")
	return "", false
}

// addLabel appends a label, reporting reserved and repeated names.
func (sc *scanner) addLabel(out []labelPair, name, value, metric string) []labelPair {
	switch {
	case name == "__name__":
		sc.add(RuleLabelName, name, metric, "no __name__ label (the metric name is written before the label set)", "label __name__")
	case strings.HasPrefix(name, "__"):
		sc.add(RuleLabelName, name, metric, "label names not starting with __ (reserved)", "label "+name)
	}
	// A linear search is quadratic in the labels of one line; a line of a
	// million labels must not take hours, so long sets are indexed.
	repeated := false
	if len(out) < 32 {
		for _, l := range out {
			repeated = repeated || l.name == name
		}
	} else {
		if sc.labelIndex == nil {
			sc.labelIndex = make(map[string]bool, len(out))
			for _, l := range out {
				sc.labelIndex[l.name] = true
			}
		}
		repeated = sc.labelIndex[name]
		sc.labelIndex[name] = true
	}
	if repeated {
		sc.add(RuleLabelName, name, metric, "each label name once per label set", "label "+name+" repeated")
		return out
	}
	return append(out, labelPair{name, value})
}

// helpEscapes checks the escapes of a HELP text. The text format allows
// only \\ and \n; OpenMetrics lets a backslash precede any character but
// the line end, so there only a backslash that ends the text is wrong.
func (sc *scanner) helpEscapes(text, fam string, om bool) {
	want := `only \\ and \n in HELP`
	if om {
		want = "a character after every backslash in HELP"
	}
	for i := 0; i < len(text); i++ {
		if text[i] != '\\' {
			continue
		}
		if i+1 >= len(text) {
			sc.add(RuleEscape, `\`, fam, want, "a backslash at the end of the HELP text")
			return
		}
		if e := text[i+1]; !om && e != '\\' && e != 'n' {
			sc.add(RuleEscape, text[i:i+2], fam, want, "escape "+strconv.Quote(text[i:i+2]))
		}
		i++
	}
}

// metadata records a HELP, TYPE or UNIT line for f; the line's field is
// set unless it repeats one. It reports whether the line was the first of
// its kind.
func (sc *scanner) metadata(rule string, f *family, seen *int) bool {
	kw := map[string]string{RuleHelp: "HELP", RuleType: "TYPE", RuleUnit: "UNIT"}[rule]
	sc.enter(f)
	first := *seen == 0
	switch {
	case !first:
		sc.add(rule, sc.text, f.name, "one # "+kw+" per family", fmt.Sprintf("a second # %s (the first is on line %d)", kw, *seen))
	case f.firstSample > 0:
		sc.add(rule, sc.text, f.name, "# "+kw+" before the family's samples",
			fmt.Sprintf("# %s after samples (the first is on line %d)", kw, f.firstSample))
	}
	if first {
		*seen = sc.line
	}
	return first
}

// enter makes f the current family, reporting a family whose lines are
// split by another family's.
func (sc *scanner) enter(f *family) {
	if sc.cur != f && f.lastLine > 0 {
		sc.add(RuleGrouping, sc.text, f.name, "all lines of a family together",
			fmt.Sprintf("family %s continues after other families (its earlier lines end at line %d)", f.name, f.lastLine))
	}
	sc.cur = f
	f.lastLine = sc.line
}

// ----- OpenMetrics 1.0 -----

var omTypes = []string{"counter", "gauge", "histogram", "gaugehistogram", "stateset", "info", "summary", "unknown"}

func (sc *scanner) omLine() {
	line := sc.text
	switch {
	case line == "":
		sc.add(RuleBlankLine, "", "", "no blank lines in OpenMetrics", "a blank line")
	case line == "# EOF":
		sc.eofLine = sc.line
	case line[0] == '#':
		sc.omDescriptor(line)
	default:
		c := cursor{s: line}
		if s, ok := sc.omSample(&c); ok {
			sc.sample(s)
		}
	}
}

func (sc *scanner) omDescriptor(line string) {
	rest, ok := strings.CutPrefix(line, "# ")
	kw, after, hasArgs := strings.Cut(rest, " ")
	if !ok || (kw != "HELP" && kw != "TYPE" && kw != "UNIT") {
		if strings.TrimSpace(line) == "# EOF" {
			sc.add(RuleEOF, line, "", "exactly \"# EOF\"", "an EOF line with extra blanks")
			return
		}
		sc.add(RuleComment, line, "", "only # HELP, # TYPE, # UNIT and # EOF lines", "a comment line")
		return
	}
	rule := map[string]string{"HELP": RuleHelp, "TYPE": RuleType, "UNIT": RuleUnit}[kw]
	if !hasArgs || after == "" {
		sc.add(rule, line, "", "# "+kw+" followed by a metric family name", "a bare # "+kw+" line")
		return
	}
	name, text, hasText := strings.Cut(after, " ")
	if !validMetricName(name) {
		sc.add(RuleMetricName, name, "", "a metric family name matching [a-zA-Z_:][a-zA-Z0-9_:]*", "an invalid metric family name")
		return
	}
	f := sc.family(name)
	switch kw {
	case "HELP":
		if !hasText {
			sc.add(RuleHelp, line, name, "# HELP name text (a space, then the text, which may be empty)", "no space and text after the name")
		}
		sc.helpEscapes(text, name, true)
		sc.metadata(RuleHelp, f, &f.helpLine)
	case "TYPE":
		valid := hasText && contains(omTypes, text)
		switch {
		case !hasText || text == "":
			sc.add(RuleType, line, name, "# TYPE name type", "a TYPE line without a type")
		case !valid:
			sc.add(RuleType, text, name, "one of "+strings.Join(omTypes, ", "), typeObserved(text))
		}
		if sc.metadata(RuleType, f, &f.typeLine) && valid {
			f.typ = text
		}
	case "UNIT":
		// An empty unit ("# UNIT name ") is allowed and means none.
		switch {
		case !hasText:
			sc.add(RuleUnit, line, name, "# UNIT name unit (a space, then the unit, which may be empty)", "no space and unit after the name")
		case !validUnit(text):
			sc.add(RuleUnit, text, name, "a unit of [a-zA-Z0-9_:]", "an invalid unit")
		case text != "" && !strings.HasSuffix(name, "_"+text):
			sc.add(RuleUnit, text, name, "a family name ending in _"+text, "unit "+text+" is not the suffix of "+name)
		}
		if sc.metadata(RuleUnit, f, &f.unitLine) {
			f.unit = text
		}
	}
}

func validUnit(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isNameChar(s[i], true) {
			return false
		}
	}
	return true
}

// omSample parses a sample line by the OpenMetrics ABNF: single spaces, no
// trailing comma, an optional timestamp and exemplar.
func (sc *scanner) omSample(c *cursor) (*sample, bool) {
	name := c.metricName()
	if name == "" || (!c.done() && !isBlank(c.peek()) && c.peek() != '{') {
		c.i = 0
		sc.add(RuleMetricName, c.until(" {"), "", "a metric name matching [a-zA-Z_:][a-zA-Z0-9_:]*", "an invalid metric name")
		return nil, false
	}
	s := &sample{name: name}
	if c.peek() == '{' {
		c.i++
		labels, _, ok := sc.omLabels(c, name)
		if !ok {
			return nil, false
		}
		s.labels = labels
	}
	if !sc.space(c, name, "the value") {
		return nil, false
	}
	raw := c.until(" ")
	v, ok := omNumber(raw, true)
	if !ok {
		sc.add(RuleValue, raw, name, "a number (decimal, +Inf, -Inf or NaN)", "value "+strconv.Quote(raw))
		return nil, false
	}
	s.value, s.rawValue = v, raw
	if c.done() {
		return s, true
	}
	if !sc.space(c, name, "a timestamp or exemplar") {
		return nil, false
	}
	if c.peek() != '#' {
		tsRaw := c.until(" ")
		ts, ok := omNumber(tsRaw, false)
		if !ok {
			sc.add(RuleTimestamp, tsRaw, name, "a timestamp in seconds (a decimal number)", "timestamp "+strconv.Quote(tsRaw))
			return nil, false
		}
		s.hasTS, s.ts = true, ts
		if c.done() {
			return s, true
		}
		if !sc.space(c, name, "an exemplar") {
			return nil, false
		}
	}
	ex, ok := sc.omExemplar(c, name)
	if !ok {
		return nil, false
	}
	s.exemplar = ex
	return s, true
}

// space consumes the one space before the next token.
func (sc *scanner) space(c *cursor, metric, next string) bool {
	if c.done() || c.peek() != ' ' {
		tok := c.until(" ")
		what := "no space"
		if strings.HasPrefix(tok, "\t") {
			what = "a tab"
		}
		sc.add(RuleSyntax, tok, metric, "one space before "+next, what)
		return false
	}
	c.i++
	if c.done() {
		sc.add(RuleSyntax, sc.text, metric, next+" after the space", "a space at the end of the line")
		return false
	}
	if c.peek() == ' ' || c.peek() == '\t' {
		sc.add(RuleSyntax, sc.text, metric, "exactly one space between tokens", "more than one blank")
		return false
	}
	return true
}

// omLabels reads a label set after its '{' and returns the labels and the
// number of runes of their names and values.
func (sc *scanner) omLabels(c *cursor, metric string) ([]labelPair, int, bool) {
	var (
		out   []labelPair
		runes int
	)
	sc.labelIndex = nil
	if c.peek() == '}' {
		c.i++
		return nil, 0, true
	}
	for {
		name, ok := sc.labelName(c, metric, "=")
		if !ok {
			return nil, 0, false
		}
		if c.peek() != '=' {
			sc.add(RuleSyntax, c.until(" ,}"), metric, "'=' right after label name "+name, "no '='")
			return nil, 0, false
		}
		c.i++
		value, ok := sc.labelValue(c, metric)
		if !ok {
			return nil, 0, false
		}
		out = sc.addLabel(out, name, value, metric)
		runes += utf8.RuneCountInString(name) + utf8.RuneCountInString(value)
		switch c.peek() {
		case ',':
			c.i++
			if c.peek() == '}' {
				sc.add(RuleSyntax, ",}", metric, "a label after ',' (no trailing comma in OpenMetrics)", "a trailing comma")
				return nil, 0, false
			}
		case '}':
			c.i++
			return out, runes, true
		default:
			tok := c.until(" ")
			if tok == "" && !c.done() {
				tok = string(c.peek())
			}
			sc.add(RuleSyntax, tok, metric, "',' or '}' right after the value of label "+name, "something else")
			return nil, 0, false
		}
	}
}

// omExemplar reads "# {labels} value [timestamp]" at c.
func (sc *scanner) omExemplar(c *cursor, metric string) (*exemplar, bool) {
	if !strings.HasPrefix(c.s[c.i:], "# {") {
		sc.add(RuleExemplar, c.rest(), metric, `an exemplar "# {labels} value [timestamp]"`, "something else after the value")
		return nil, false
	}
	c.i += 3
	labels, runes, ok := sc.omLabels(c, metric)
	if !ok {
		return nil, false
	}
	if !sc.space(c, metric, "the exemplar value") {
		return nil, false
	}
	raw := c.until(" ")
	if _, ok := omNumber(raw, true); !ok {
		sc.add(RuleExemplar, raw, metric, "a number as exemplar value", "exemplar value "+strconv.Quote(raw))
		return nil, false
	}
	if !c.done() {
		if !sc.space(c, metric, "the exemplar timestamp") {
			return nil, false
		}
		tsRaw := c.until(" ")
		if _, ok := omNumber(tsRaw, false); !ok {
			sc.add(RuleTimestamp, tsRaw, metric, "a timestamp in seconds (a decimal number)", "exemplar timestamp "+strconv.Quote(tsRaw))
			return nil, false
		}
		if !c.done() {
			sc.add(RuleSyntax, c.rest(), metric, "the end of the line after the exemplar", "more text")
			return nil, false
		}
	}
	return &exemplar{labels: labels, runes: runes}, true
}

// omNumber parses an OpenMetrics number: a decimal real number, or (when
// special is set, for values) +Inf, -Inf, Infinity and NaN in any case.
func omNumber(s string, special bool) (float64, bool) {
	if special {
		switch strings.ToLower(s) {
		case "nan":
			return math.NaN(), true
		case "inf", "+inf", "infinity", "+infinity":
			return math.Inf(1), true
		case "-inf", "-infinity":
			return math.Inf(-1), true
		}
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			n++
		}
		return n
	}
	intDigits := digits()
	fracDigits := 0
	if i < len(s) && s[i] == '.' {
		i++
		fracDigits = digits()
	}
	if intDigits == 0 && fracDigits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false // out of range
	}
	return v, true
}

// ----- samples and families, both formats -----

// Roles a sample plays in its family.
const (
	roleValue    = "value"
	roleTotal    = "total"
	roleCreated  = "created"
	roleBucket   = "bucket"
	roleCount    = "count"
	roleSum      = "sum"
	roleQuantile = "quantile"
	roleInfo     = "info"
	roleInvalid  = "invalid"
)

// omRole is the role of sample name in family f by f's OpenMetrics type.
func omRole(f *family, name string) (string, bool) {
	suffix, ok := strings.CutPrefix(name, f.name)
	if !ok {
		return "", false
	}
	roles := map[string]map[string]string{
		"counter":        {"_total": roleTotal, "_created": roleCreated},
		"gauge":          {"": roleValue},
		"histogram":      {"_bucket": roleBucket, "_count": roleCount, "_sum": roleSum, "_created": roleCreated},
		"gaugehistogram": {"_bucket": roleBucket, "_gcount": roleCount, "_gsum": roleSum},
		"summary":        {"": roleQuantile, "_count": roleCount, "_sum": roleSum, "_created": roleCreated},
		"info":           {"_info": roleInfo},
		"stateset":       {"": roleValue},
		"unknown":        {"": roleValue},
		"":               {"": roleValue},
	}[f.typ]
	r, ok := roles[suffix]
	return r, ok
}

var omSuffixes = []string{"_total", "_created", "_bucket", "_count", "_sum", "_gcount", "_gsum", "_info"}

func (sc *scanner) resolveOM(name string) (*family, string) {
	var candidates []*family
	if sc.cur != nil {
		candidates = append(candidates, sc.cur)
	}
	if f := sc.families[name]; f != nil {
		candidates = append(candidates, f)
	}
	for _, suf := range omSuffixes {
		if stem, ok := strings.CutSuffix(name, suf); ok && stem != "" {
			if f := sc.families[stem]; f != nil {
				candidates = append(candidates, f)
			}
		}
	}
	for _, f := range candidates {
		if role, ok := omRole(f, name); ok {
			return f, role
		}
	}
	// The family's own name, or one of its type's suffixes where the type
	// wants another: a counter sample without _total, a gauge's _bucket.
	for _, f := range candidates {
		if f.typ == "" || f.typ == "unknown" {
			continue
		}
		suffix, ok := strings.CutPrefix(name, f.name)
		if ok && (suffix == "" || (f == sc.cur && contains(omSuffixes, suffix))) {
			want := make([]string, 0, 4)
			for _, s := range omSuffixes {
				if _, ok := omRole(f, f.name+s); ok {
					want = append(want, f.name+s)
				}
			}
			if _, ok := omRole(f, f.name); ok {
				want = append(want, f.name)
			}
			sc.add(RuleSampleName, name, f.name, "a sample name of a "+f.typ+": "+strings.Join(want, ", "), "sample "+name)
			return f, roleInvalid
		}
	}
	return sc.family(name), roleValue
}

// textRole is the role of a sample in family f in the text format.
func (sc *scanner) textRole(f *family, name string) string {
	suffix, _ := strings.CutPrefix(name, f.name)
	switch f.typ {
	case "histogram":
		switch suffix {
		case "_bucket":
			return roleBucket
		case "_count":
			return roleCount
		case "_sum":
			return roleSum
		}
		sc.add(RuleSampleName, name, f.name, "a histogram sample: "+f.name+"_bucket, _count or _sum", "sample "+name)
		return roleInvalid
	case "summary":
		switch suffix {
		case "":
			return roleQuantile
		case "_count":
			return roleCount
		case "_sum":
			return roleSum
		}
	case "counter":
		return roleTotal
	}
	return roleValue
}

// sample checks one parsed sample against its family.
func (sc *scanner) sample(s *sample) {
	var (
		f    *family
		role string
	)
	if sc.om {
		f, role = sc.resolveOM(s.name)
	} else {
		f = sc.resolveText(s.name)
		role = sc.textRole(f, s.name)
	}
	sc.enter(f)
	sc.res.Samples++
	f.samples++
	if f.firstSample == 0 {
		f.firstSample = sc.line
	}
	token := sc.text

	// The series: the label set without le (buckets) or quantile.
	exclude := ""
	switch role {
	case roleBucket:
		exclude = "le"
	case roleQuantile:
		exclude = "quantile"
	}
	key := labelKey(s.labels, exclude)
	full := s.name + "{" + labelKey(s.labels, "") + "}"
	if prev, dup := f.seen[full]; dup {
		switch {
		case sc.om && prev.hasTS && s.hasTS && s.ts >= prev.ts:
			// A later point of the same series. The timestamp may repeat:
			// monotonic timestamps never go back, and readers that keep
			// nanoseconds see steps below one as repeats.
		case sc.om && prev.hasTS && s.hasTS:
			sc.add(RuleTimestamp, token, f.name, "timestamps that never decrease within a series",
				fmt.Sprintf("timestamp %s not after line %d's", strconv.FormatFloat(s.ts, 'g', -1, 64), prev.line))
		default:
			sc.add(RuleDuplicate, token, f.name, "each series once", fmt.Sprintf("the same series as line %d", prev.line))
		}
	}
	f.seen[full] = seenSample{line: sc.line, hasTS: s.hasTS, ts: s.ts}
	se := f.byKey[key]
	switch {
	case se == nil:
		se = &series{key: key, firstLine: sc.line}
		f.byKey[key] = se
		f.series = append(f.series, se)
	case se != f.cur:
		sc.add(RuleGrouping, token, f.name, "the samples of a series together",
			fmt.Sprintf("series {%s} continues after another series (its earlier samples end at line %d)", key, se.lastLine))
	}
	f.cur, se.lastLine = se, sc.line

	if s.exemplar != nil {
		switch {
		case role != roleTotal && role != roleBucket || (role == roleTotal && f.typ != "counter"):
			sc.add(RuleExemplar, token, f.name, "exemplars only on counter _total and histogram _bucket samples", "an exemplar on "+s.name)
		case s.exemplar.runes > 128:
			sc.add(RuleExemplar, token, f.name, "exemplar labels of at most 128 runes (names and values)",
				fmt.Sprintf("%d runes", s.exemplar.runes))
		}
	}
	sc.checkValue(f, se, s, role, token)
}

func (sc *scanner) checkValue(f *family, se *series, s *sample, role, token string) {
	v := s.value
	isHist := f.typ == "histogram" || f.typ == "gaugehistogram"
	switch {
	case role == roleTotal && (f.typ == "counter"):
		if math.IsNaN(v) || v < 0 {
			sc.add(RuleCounter, token, f.name, "a counter value that is not NaN and not negative", "value "+s.rawValue)
		}
	case role == roleBucket:
		le, ok := labelValue(s.labels, "le")
		if !ok {
			sc.add(RuleBuckets, token, f.name, `an le label on every bucket`, "a bucket without le")
			return
		}
		bound, ok := sc.parseBound(le)
		if !ok || math.IsNaN(bound) {
			sc.add(RuleBuckets, `le="`+le+`"`, f.name, "le as a number (+Inf for the last bucket)", "le "+strconv.Quote(le))
			return
		}
		if sc.om && math.IsInf(bound, 1) && le != "+Inf" {
			sc.add(RuleBuckets, `le="`+le+`"`, f.name, `le="+Inf" for the last bucket, written exactly so`, "le "+strconv.Quote(le))
		}
		if math.IsNaN(v) || v < 0 || (sc.om && v != math.Trunc(v)) {
			sc.add(RuleBuckets, token, f.name, bucketValueRule(sc.om), "bucket value "+s.rawValue)
		}
		if bound < 0 {
			se.negativeBuckets = true
		}
		se.buckets = append(se.buckets, bucket{bound: bound, raw: le, value: v, line: sc.line, token: token})
	case role == roleCount || role == roleSum:
		if isHist {
			if _, has := labelValue(s.labels, "le"); has {
				sc.add(RuleCount, token, f.name, "le only on _bucket samples", "an le label on "+s.name)
			}
		} else if _, has := labelValue(s.labels, "quantile"); has {
			sc.add(RuleSummary, token, f.name, "quantile only on the quantile samples", "a quantile label on "+s.name)
		}
		p := &point{value: v, line: sc.line, token: token}
		rule := RuleCount
		if !isHist {
			rule = RuleSummary
		}
		if role == roleCount {
			se.count = p
			if math.IsNaN(v) || v < 0 || (sc.om && v != math.Trunc(v)) {
				sc.add(rule, token, f.name, countValueRule(sc.om), "count "+s.rawValue)
			}
		} else {
			se.sum = p
			switch {
			case math.IsNaN(v) && (sc.om || isHist):
				sc.add(rule, token, f.name, "a sum that is not NaN", "sum "+s.rawValue)
			case sc.om && !isHist && v < 0:
				// A summary's sum counts like a counter; a histogram's is
				// judged with its buckets (finishHistogram).
				sc.add(rule, token, f.name, "a sum that is not negative", "sum "+s.rawValue)
			}
		}
	case role == roleQuantile:
		q, ok := labelValue(s.labels, "quantile")
		if !ok {
			sc.add(RuleSummary, token, f.name, "a quantile label on "+s.name, "no quantile label")
			return
		}
		bound, ok := sc.parseBound(q)
		if !ok || !(bound >= 0 && bound <= 1) {
			sc.add(RuleSummary, `quantile="`+q+`"`, f.name, "quantile as a number in [0, 1]", "quantile "+strconv.Quote(q))
			return
		}
		if sc.om && v < 0 {
			sc.add(RuleSummary, token, f.name, "quantile values that are not negative", "value "+s.rawValue)
		}
		se.quantiles = append(se.quantiles, bucket{bound: bound, raw: q, value: v, line: sc.line, token: token})
	case role == roleInfo:
		if v != 1 {
			sc.add(RuleInfoState, token, f.name, "info value 1", "value "+s.rawValue)
		}
	case role == roleValue && f.typ == "stateset":
		if v != 0 && v != 1 {
			sc.add(RuleInfoState, token, f.name, "stateset value 0 or 1", "value "+s.rawValue)
		}
		if _, ok := labelValue(s.labels, f.name); !ok {
			sc.add(RuleInfoState, token, f.name, "a label named "+f.name+" on every stateset sample", "no "+f.name+" label")
		}
	}
}

func bucketValueRule(om bool) string {
	if om {
		return "a bucket count that is a non-negative integer"
	}
	return "a bucket count that is not NaN and not negative"
}

func countValueRule(om bool) string {
	if om {
		return "a count that is a non-negative integer"
	}
	return "a count that is not NaN and not negative"
}

// parseBound parses an le or quantile label value by the format's rules.
func (sc *scanner) parseBound(s string) (float64, bool) {
	if sc.om {
		return omNumber(s, true)
	}
	v, err := textFloat(s)
	return v, err == nil
}

// finish checks what needs a whole series or family: histogram buckets
// and counts, summary quantile order, OpenMetrics units and name clashes.
func (sc *scanner) finish() {
	sc.res.Families = 0
	if sc.om {
		sc.nameClashes()
	}
	for _, f := range sc.order {
		if f.samples > 0 || f.typeLine > 0 || f.helpLine > 0 {
			sc.res.Families++
		}
		if sc.om && f.unit != "" && (f.typ == "info" || f.typ == "stateset") {
			sc.addAt(f.unitLine, RuleUnit, f.unit, f.name, "no unit on "+f.typ+" families", "unit "+f.unit+" on "+f.typ+" "+f.name)
		}
		switch f.typ {
		case "histogram", "gaugehistogram":
			for _, se := range f.series {
				sc.finishHistogram(f, se)
			}
		case "summary":
			for _, se := range f.series {
				for i := 1; i < len(se.quantiles); i++ {
					if q, p := se.quantiles[i], se.quantiles[i-1]; !(q.bound > p.bound) {
						sc.addAt(q.line, RuleSummary, q.token, f.name, "quantiles in increasing order, each once",
							fmt.Sprintf("quantile %s after %s (line %d)", q.raw, p.raw, p.line))
					}
				}
			}
		}
	}
}

// nameClashes reports, in OpenMetrics, a family whose name or sample names
// another family could also write: a gauge a_created beside a counter a,
// whose samples may include a_created.
func (sc *scanner) nameClashes() {
	owner := map[string]*family{}
	for _, f := range sc.order {
		for _, name := range omSampleNames(f) {
			prev := owner[name]
			if prev == nil {
				owner[name] = f
				continue
			}
			sc.addAt(f.line, RuleMetricName, f.name, f.name, "family names whose samples no other family could write",
				fmt.Sprintf("%s clashes with family %s (line %d)", name, prev.name, prev.line))
			break // one violation per family
		}
	}
}

// omSampleNames lists the sample names family f's type may write.
func omSampleNames(f *family) []string {
	out := []string{f.name}
	for _, suf := range omSuffixes {
		if role, ok := omRole(f, f.name+suf); ok && role != roleInvalid {
			out = append(out, f.name+suf)
		}
	}
	return out
}

func (sc *scanner) finishHistogram(f *family, se *series) {
	countName, sumName := "_count", "_sum"
	if f.typ == "gaugehistogram" {
		countName, sumName = "_gcount", "_gsum"
	}
	hasInf := false
	var inf bucket
	for i, b := range se.buckets {
		if math.IsInf(b.bound, 1) {
			hasInf, inf = true, b
		}
		if i == 0 {
			continue
		}
		p := se.buckets[i-1]
		switch {
		case !(b.bound > p.bound):
			sc.addAt(b.line, RuleBuckets, `le="`+b.raw+`"`, f.name, "buckets in increasing le order, each le once",
				fmt.Sprintf(`le="%s" after le="%s" (line %d)`, b.raw, p.raw, p.line))
		case b.value < p.value:
			sc.addAt(b.line, RuleBuckets, b.token, f.name, "cumulative buckets (never below the previous one)",
				fmt.Sprintf(`%s below le="%s" (%s, line %d)`, formatFloat(b.value), p.raw, formatFloat(p.value), p.line))
		}
	}
	where := se.firstLine
	if n := len(se.buckets); n > 0 {
		where = se.buckets[n-1].line
	}
	if !hasInf {
		obs := `no le="+Inf" bucket`
		if len(se.buckets) == 0 {
			obs = "no buckets"
		}
		sc.addAt(where, RuleBuckets, seriesToken(f.name, se.key), f.name, `a bucket with le="+Inf"`, obs)
	}
	// OpenMetrics wants a _count only with a _sum; text 0.0.4 always,
	// except for the gauge histogram Python's client writes as a histogram
	// with its _gcount and _gsum as separate gauge families.
	pythonGaugeHistogram := sc.families[f.name+"_gcount"] != nil
	needCount := se.sum != nil || (!sc.om && !pythonGaugeHistogram)
	switch {
	case se.count == nil && needCount:
		want := "a " + f.name + countName + " sample"
		if sc.om {
			want += " (required with " + sumName + ")"
		}
		sc.addAt(where, RuleCount, seriesToken(f.name, se.key), f.name, want, "no "+countName)
	case se.count != nil && hasInf && se.count.value != inf.value && !math.IsNaN(se.count.value):
		sc.addAt(se.count.line, RuleCount, se.count.token, f.name,
			fmt.Sprintf(`%s equal to the le="+Inf" bucket (%s, line %d)`, countName, formatFloat(inf.value), inf.line),
			countName+" "+formatFloat(se.count.value))
	}
	if sc.om {
		sc.omSum(f, se, countName, sumName)
	}
}

// omSum checks a histogram's sum by the OpenMetrics rules: _count and _sum
// come together or not at all; a histogram's sum counts like a counter, so
// it is not negative and absent when a bucket has a negative le; a gauge
// histogram's sum may be negative only when a bucket is.
func (sc *scanner) omSum(f *family, se *series, countName, sumName string) {
	if se.count != nil && se.sum == nil {
		sc.addAt(se.count.line, RuleCount, se.count.token, f.name,
			"a "+f.name+sumName+" sample with "+countName+" (both or neither)", "no "+sumName)
	}
	if se.sum == nil || math.IsNaN(se.sum.value) {
		return
	}
	sum := formatFloat(se.sum.value)
	switch {
	case f.typ == "histogram" && se.negativeBuckets:
		sc.addAt(se.sum.line, RuleCount, se.sum.token, f.name, "no "+sumName+" when a bucket has a negative le",
			sumName+" "+sum+" with a negative bucket")
	case f.typ == "histogram" && se.sum.value < 0:
		sc.addAt(se.sum.line, RuleCount, se.sum.token, f.name, "a sum that is not negative", "sum "+sum)
	case se.sum.value < 0 && !se.negativeBuckets:
		sc.addAt(se.sum.line, RuleCount, se.sum.token, f.name, "a "+sumName+" that is not negative (no bucket has a negative le)",
			sumName+" "+sum)
	}
}

func seriesToken(name, key string) string {
	return name + "{" + key + "}"
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// labelKey is a canonical form of a label set (sorted by name), without
// the label named exclude.
func labelKey(labels []labelPair, exclude string) string {
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		if l.name != exclude {
			parts = append(parts, l.name+"="+strconv.Quote(l.value))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func labelValue(labels []labelPair, name string) (string, bool) {
	for _, l := range labels {
		if l.name == name {
			return l.value, true
		}
	}
	return "", false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ----- the line cursor -----

type cursor struct {
	s string
	i int
}

func (c *cursor) done() bool { return c.i >= len(c.s) }

func (c *cursor) peek() byte {
	if c.done() {
		return 0
	}
	return c.s[c.i]
}

func (c *cursor) skipBlanks() {
	for !c.done() && isBlank(c.s[c.i]) {
		c.i++
	}
}

// until returns the bytes up to the first of stop (or the end).
func (c *cursor) until(stop string) string {
	start := c.i
	for !c.done() && !strings.ContainsRune(stop, rune(c.s[c.i])) {
		c.i++
	}
	return c.s[start:c.i]
}

func (c *cursor) rest() string {
	s := c.s[c.i:]
	c.i = len(c.s)
	return s
}

func (c *cursor) metricName() string {
	start := c.i
	for !c.done() && isNameChar(c.s[c.i], c.i > start) {
		c.i++
	}
	return c.s[start:c.i]
}

func (c *cursor) labelName() string {
	start := c.i
	for !c.done() && c.s[c.i] != ':' && isNameChar(c.s[c.i], c.i > start) {
		c.i++
	}
	return c.s[start:c.i]
}

func isNameChar(b byte, notFirst bool) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_' || b == ':' || notFirst && b >= '0' && b <= '9'
}

func validMetricName(s string) bool {
	c := cursor{s: s}
	return s != "" && c.metricName() == s
}

func isBlank(b byte) bool { return b == ' ' || b == '\t' }
