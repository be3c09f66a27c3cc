package slo

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
)

// SLO is one parsed objective. Build it with Parse: the resolved figure it
// carries is not exported.
type SLO struct {
	Expr   string  `json:"expr"`   // as written
	Figure string  `json:"figure"` // canonical figure name, e.g. "e2e_p95" for "e2el_p95"
	Op     string  `json:"op"`     // <, <=, >, >= or ==
	Value  float64 `json:"value"`  // the limit, in Unit
	// Unit is the figure's unit, which Value and the observed value share:
	// "ms" or "s" for times (as the run summary stores them), "" for plain
	// numbers and fractions.
	Unit string `json:"unit,omitempty"`

	fig figure
}

// String returns the SLO in canonical form ("audio_ttfp_p95 < 500ms"),
// which Parse accepts and maps to the same SLO.
func (s SLO) String() string {
	return s.Figure + " " + s.Op + " " + strconv.FormatFloat(s.Value, 'g', -1, 64) + s.Unit
}

// ParseError is a syntax or meaning error in one expression, located at the
// character it is about.
type ParseError struct {
	Source string // where the expression came from: "--slo", or e.g. "ci.yaml: slos[2]"
	Expr   string
	// Column is the 0-based index, in characters (runes) of Expr, of the
	// offending character; len(Expr in runes) when the expression ended
	// early. Error() prints it 1-based, as editors and compilers count.
	Column int
	Msg    string
}

// Error shows the message, then the expression with a caret under the
// offending character:
//
//	--slo "audio_ttfp_p95<<500ms": column 16: expected a number
//	  audio_ttfp_p95<<500ms
//	                 ^
func (e *ParseError) Error() string {
	var line, pad strings.Builder
	for i, r := range []rune(e.Expr) {
		switch {
		case r == '\t':
			line.WriteRune(r)
		case !unicode.IsPrint(r):
			// A newline or other control character would break the
			// picture; one replacement rune keeps the columns aligned.
			line.WriteRune('\uFFFD')
		default:
			line.WriteRune(r)
		}
		if i < e.Column {
			if r == '\t' {
				pad.WriteRune('\t')
			} else {
				pad.WriteRune(' ')
			}
		}
	}
	src := e.Source
	if src == "" {
		src = "--slo"
	}
	return fmt.Sprintf("%s %q: column %d: %s\n  %s\n  %s^", src, e.Expr, e.Column+1, e.Msg, line.String(), pad.String())
}

// Parse parses one --slo expression.
func Parse(expr string) (SLO, error) { return ParseFrom("--slo", expr) }

// ParseFrom parses an expression that came from source (a flag name, or a
// file and field such as "ci.yaml: slos[2]"), which errors name.
func ParseFrom(source, expr string) (SLO, error) {
	p := &parser{source: source, expr: expr, rs: []rune(expr)}
	return p.parse()
}

// ParseAll parses --slo expressions and reports every bad one (joined with
// errors.Join; errors.As finds the first *ParseError).
func ParseAll(exprs []string) ([]SLO, error) {
	out := make([]SLO, 0, len(exprs))
	var errs []error
	for _, e := range exprs {
		s, err := Parse(e)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, s)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

type parser struct {
	source string
	expr   string
	rs     []rune
	pos    int
}

func (p *parser) errAt(col int, format string, args ...any) error {
	return &ParseError{Source: p.source, Expr: p.expr, Column: col, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) peek() rune {
	if p.pos < len(p.rs) {
		return p.rs[p.pos]
	}
	return -1
}

func (p *parser) skipSpace() {
	for p.pos < len(p.rs) && unicode.IsSpace(p.rs[p.pos]) {
		p.pos++
	}
}

func isIdentStart(r rune) bool { return r < 0x80 && (r == '_' || unicode.IsLetter(r)) }
func isIdent(r rune) bool      { return isIdentStart(r) || r == '.' || (r >= '0' && r <= '9') }
func isDigit(r rune) bool      { return r >= '0' && r <= '9' }
func isOpStart(r rune) bool    { return strings.ContainsRune("<>=!≤≥", r) }

func (p *parser) parse() (SLO, error) {
	p.skipSpace()
	if p.pos == len(p.rs) {
		return SLO{}, p.errAt(p.pos, "empty expression: want FIGURE OP VALUE, e.g. audio_ttfp_p95<500ms")
	}
	// Figure.
	if !isIdentStart(p.peek()) {
		return SLO{}, p.errAt(p.pos, "expected a figure name, e.g. audio_ttfp_p95")
	}
	figStart := p.pos
	for p.pos < len(p.rs) && isIdent(p.rs[p.pos]) {
		p.pos++
	}
	name := string(p.rs[figStart:p.pos])
	if r := p.peek(); r != -1 && r != '{' && !unicode.IsSpace(r) && !isOpStart(r) {
		return SLO{}, p.errAt(p.pos, "unexpected %q in a figure name (names use letters, digits, '_' and '.')", r)
	}
	fig, err := p.resolve(name, figStart)
	if err != nil {
		return SLO{}, err
	}
	if p.peek() == '{' {
		if err := p.labels(&fig); err != nil {
			return SLO{}, err
		}
	}

	// Operator.
	p.skipSpace()
	op, err := p.op(fig.name)
	if err != nil {
		return SLO{}, err
	}

	// Value.
	p.skipSpace()
	valStart := p.pos
	lexeme, err := p.number()
	if err != nil {
		return SLO{}, err
	}
	v, err := strconv.ParseFloat(lexeme, 64)
	if err != nil {
		// The lexer only passes well-formed numbers, so this is a range error.
		return SLO{}, p.errAt(valStart, "number %s is out of range", lexeme)
	}
	numEnd := p.pos

	// Unit.
	p.skipSpace()
	unitStart := p.pos
	for p.pos < len(p.rs) && (unicode.IsLetter(p.rs[p.pos]) || p.rs[p.pos] == '%') {
		p.pos++
	}
	unit := string(p.rs[unitStart:p.pos])
	if unit == "" {
		unitStart = numEnd // point just after the number, where the unit belongs
	}
	p.skipSpace()
	if r := p.peek(); r != -1 {
		return SLO{}, p.errAt(p.pos, "unexpected %q after the value", r)
	}

	v, err = p.applyUnit(fig, v, lexeme, unit, valStart, unitStart)
	if err != nil {
		return SLO{}, err
	}
	return SLO{Expr: p.expr, Figure: fig.name, Op: op, Value: v, Unit: fig.unit, fig: fig}, nil
}

// op reads a comparison operator.
func (p *parser) op(figName string) (string, error) {
	at := p.pos
	next := func(i int) rune {
		if at+i < len(p.rs) {
			return p.rs[at+i]
		}
		return -1
	}
	switch r := next(0); r {
	case '<', '>':
		if next(1) == '=' {
			p.pos += 2
			return string(r) + "=", nil
		}
		p.pos++
		return string(r), nil
	case '=':
		switch next(1) {
		case '=':
			p.pos += 2
			return "==", nil
		case '<', '>':
			return "", p.errAt(at, "%q is not an operator: did you mean %q?", string([]rune{r, next(1)}), string([]rune{next(1), r}))
		}
		return "", p.errAt(at, `a single "=" is not an operator: use "==" to compare for equality`)
	case '!':
		return "", p.errAt(at, `"!=" is not supported: use <, <=, >, >= or ==`)
	case '≤':
		return "", p.errAt(at, `write "≤" as "<="`)
	case '≥':
		return "", p.errAt(at, `write "≥" as ">="`)
	case -1:
		return "", p.errAt(at, "expected an operator (<, <=, >, >=, ==) after %s", figName)
	}
	return "", p.errAt(at, "expected an operator (<, <=, >, >=, ==)")
}

// number reads [+-] digits [. digits] [(e|E) [+-] digits] (or .digits) and
// returns its text.
func (p *parser) number() (string, error) {
	start := p.pos
	if r := p.peek(); r == '+' || r == '-' {
		p.pos++
	}
	digits := 0
	for isDigit(p.peek()) {
		p.pos++
		digits++
	}
	if p.peek() == '.' {
		p.pos++
		for isDigit(p.peek()) {
			p.pos++
			digits++
		}
	}
	if digits == 0 {
		p.pos = start
		return "", p.errAt(start, "expected a number")
	}
	if r := p.peek(); r == 'e' || r == 'E' {
		p.pos++
		if r := p.peek(); r == '+' || r == '-' {
			p.pos++
		}
		if !isDigit(p.peek()) {
			return "", p.errAt(p.pos, "expected the exponent's digits")
		}
		for isDigit(p.peek()) {
			p.pos++
		}
	}
	return string(p.rs[start:p.pos]), nil
}

// unitNS is the length of a time unit in nanoseconds (the units of Go's
// time.ParseDuration up to minutes). Both micro signs are accepted, as Go does.
func unitNS(u string) (float64, bool) {
	switch u {
	case "ns":
		return 1, true
	case "us", "µs", "μs":
		return 1e3, true
	case "ms":
		return 1e6, true
	case "s":
		return 1e9, true
	case "m":
		return 60e9, true
	}
	return 0, false
}

// convert changes v from a unit of fromNS nanoseconds to one of toNS. Both
// are whole numbers of nanoseconds, so the ratio taken in the direction where
// it is an integer is exact and the result is correctly rounded: 250us is
// exactly 0.25 ms.
func convert(v, fromNS, toNS float64) float64 {
	if fromNS >= toNS {
		return v * (fromNS / toNS)
	}
	return v / (toNS / fromNS)
}

// applyUnit checks unit against the figure's kind and returns the limit in the
// figure's unit.
func (p *parser) applyUnit(fig figure, v float64, lexeme, unit string, valStart, unitStart int) (float64, error) {
	ns, isTime := unitNS(unit)
	if unit != "" && unit != "%" && !isTime {
		return 0, p.errAt(unitStart, "unknown unit %q (want ns, us, ms, s or m; %% for rates)", unit)
	}
	switch fig.kind {
	case kindTime:
		if unit == "" {
			return 0, p.errAt(unitStart, "%s is a time: give a unit, e.g. %sms", fig.name, lexeme)
		}
		if unit == "%" {
			return 0, p.errAt(unitStart, "%s is a time: give a time unit (ns, us, ms, s or m), not %%", fig.name)
		}
		figNS, _ := unitNS(fig.unit)
		v = convert(v, ns, figNS)
	case kindPlain:
		if unit != "" {
			return 0, p.errAt(unitStart, "%s is a plain number: drop the unit %q", fig.name, unit)
		}
	case kindRate:
		switch unit {
		case "":
		case "%":
			v /= 100
		default:
			return 0, p.errAt(unitStart, "%s is a fraction (0.99 or 99%%): drop the unit %q", fig.name, unit)
		}
		if v < 0 || v > 1 {
			return 0, p.errAt(valStart, "%s is a fraction between 0 and 1 (or 0%% and 100%%), got %s%s", fig.name, lexeme, unit)
		}
	}
	if math.IsInf(v, 0) {
		return 0, p.errAt(valStart, "number %s%s is out of range", lexeme, unit)
	}
	return v, nil
}

// resolve maps a figure name, which starts at column start, to its figure.
func (p *parser) resolve(name string, start int) (figure, error) {
	lname := strings.ToLower(name)
	if f, ok, err := p.resolveServer(lname, start); ok {
		return f, err
	}
	for _, s := range scalars {
		if lname == s.name {
			f := figure{name: s.name, kind: s.kind, metric: -1, scalar: s.name}
			if s.name == figContinuity {
				f.thMS = defaultContinuityMS
			}
			return f, nil
		}
	}
	if rest, ok := strings.CutPrefix(lname, figContinuity+"_"); ok {
		digits, hasMS := strings.CutSuffix(rest, "ms")
		n, err := strconv.Atoi(digits)
		if !hasMS || !allDigits(digits) || err != nil {
			return figure{}, p.errAt(start+len(figContinuity)+1,
				"want %s_<N>ms with N the threshold in whole milliseconds, e.g. %s_200ms", figContinuity, figContinuity)
		}
		return figure{name: fmt.Sprintf("%s_%dms", figContinuity, n), kind: kindRate, metric: -1, scalar: figContinuity, thMS: n}, nil
	}
	if i := lookupMetric(lname); i >= 0 {
		m := metrics[i].name
		return figure{}, p.errAt(start+len(name), "%s is a distribution: add a statistic, e.g. %s_p95 or %s_mean", lname, m, m)
	}
	if i := strings.LastIndexByte(lname, '_'); i > 0 {
		if mi := lookupMetric(lname[:i]); mi >= 0 {
			m := metrics[mi]
			st, pct, ok, rangeErr := parseStat(lname[i+1:])
			switch {
			case rangeErr:
				return figure{}, p.errAt(start+i+1, "percentile %s is outside 0 to 100", lname[i+2:])
			case !ok:
				return figure{}, p.errAt(start+i+1, "unknown statistic %q (want mean, median, std, min, max or a percentile such as p95 or p99.9)", lname[i+1:])
			}
			f := figure{name: m.name + "_" + st, kind: kindPlain, unit: m.unit, metric: mi, stat: st, p: pct}
			if st == "p" {
				f.name = m.name + "_" + formatP(pct)
			}
			switch {
			case m.rate:
				f.kind = kindRate
			case m.unit != "":
				f.kind = kindTime
			}
			return f, nil
		}
	}
	if s := suggest(lname); s != "" {
		return figure{}, p.errAt(start, "unknown figure %q: did you mean %q?", name, s)
	}
	return figure{}, p.errAt(start, "unknown figure %q (want METRIC_STAT such as audio_ttfp_p95, or one of %s)",
		name, strings.Join(scalarNames(), ", "))
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !isDigit(c) {
			return false
		}
	}
	return true
}

func scalarNames() []string {
	out := make([]string, 0, len(scalars))
	for _, s := range scalars {
		out = append(out, s.name)
	}
	return out
}
