package check

import (
	"errors"
	"fmt"

	expo "github.com/omnibench/omnibench/internal/metrics/check/exposition"
	"github.com/omnibench/omnibench/scrape"
)

// Exposition is a scrape's body as received, which the format check
// validates byte for byte.
type Exposition struct {
	Source string // file or URL, for messages
	// Format is scrape.FormatText, scrape.FormatOpenMetrics or
	// scrape.FormatProtobuf: what the Content-Type said, else what the body
	// looks like.
	Format     string
	Body       []byte
	LineOffset int // lines before Body in Source (a snapshot's header line)
	// ParseErr is the error of omnibench's own parser (expfmt) on Body, nil
	// when it parsed. A body that does not parse leaves the other rules
	// nothing to check: they are skipped, and the format check says why.
	ParseErr error
}

// formatPrefix starts the name of every result of the format check.
const formatPrefix = "format: "

// ruleParser is the result of expfmt's parser on the body, next to the
// scanner's rules: a body the scanner missed something in still fails.
const ruleParser = "parser"

// format validates each exposition of the input: every violation is one
// failed result naming its line and token; a rule without violations is
// one passed result.
func (ev *evaluator) format(r *Rule, base Result) []Result {
	var expos []*Exposition
	if ev.in.BeforeExposition != nil {
		expos = append(expos, ev.in.BeforeExposition)
	}
	if ev.in.Exposition != nil {
		expos = append(expos, ev.in.Exposition)
	}
	if len(expos) == 0 {
		base.Status = Skip
		base.Detail = "no exposition bytes to validate (the input was not a scrape or a file)"
		return []Result{base}
	}
	var out []Result
	for _, x := range expos {
		prefix := formatPrefix
		if len(expos) > 1 {
			prefix = "format (" + x.Source + "): "
		}
		out = append(out, ev.formatOne(x, prefix, base)...)
	}
	return out
}

func (ev *evaluator) formatOne(x *Exposition, prefix string, base Result) []Result {
	parser := base
	parser.Rule = prefix + ruleParser
	parser.Expected = "the Prometheus parser (expfmt) reads the exposition"
	if x.ParseErr != nil {
		parser.Status, parser.Observed = Fail, "it does not"
		parser.Detail = x.ParseErr.Error()
		var pe *scrape.ParseError
		if errors.As(x.ParseErr, &pe) {
			parser.Line, parser.Detail = pe.Line, pe.Msg
		}
	} else {
		parser.Status, parser.Observed = Pass, "it does"
	}

	var f expo.Format
	switch x.Format {
	case scrape.FormatText:
		f = expo.Text
	case scrape.FormatOpenMetrics:
		f = expo.OpenMetrics
	default:
		na := base
		na.Rule = prefix + "text and OpenMetrics rules"
		na.Status, na.Observed = Skip, "not applicable"
		na.Detail = x.Format + " exposition: the rules of the text formats do not apply; " +
			"ask for text (--accept text or openmetrics) to validate what the server writes"
		ev.notes = append(ev.notes, fmt.Sprintf("format rules not applicable to the %s exposition of %s (use --accept text or openmetrics)", x.Format, x.Source))
		return []Result{parser, na}
	}
	res := expo.Validate(x.Body, f)
	byRule := map[string][]expo.Violation{}
	for _, v := range res.Violations {
		byRule[v.Rule] = append(byRule[v.Rule], v)
	}
	out := []Result{parser}
	for _, info := range expo.Rules(f) {
		vs := byRule[info.ID]
		if len(vs) == 0 {
			ok := base
			ok.Rule = prefix + info.ID
			ok.Status, ok.Expected = Pass, info.Title
			ok.Observed = fmt.Sprintf("no violation in %d lines (%s)", res.Lines, f)
			out = append(out, ok)
			continue
		}
		for _, v := range vs {
			bad := base
			bad.Rule = prefix + info.ID
			bad.Status = Fail
			bad.Family = v.Family
			bad.Expected, bad.Observed = v.Expected, v.Observed
			bad.Line, bad.Token = v.Line+x.LineOffset, v.Token
			out = append(out, bad)
		}
	}
	if res.Stopped {
		last := res.Violations[len(res.Violations)-1]
		stop := base
		stop.Rule = prefix + "stopped"
		stop.Status, stop.Line = Fail, last.Line+x.LineOffset
		stop.Expected = fmt.Sprintf("at most %d violations", expo.MaxViolations)
		stop.Observed = fmt.Sprintf("%d violations: the lines after line %d were not checked", expo.MaxViolations, stop.Line)
		out = append(out, stop)
	}
	return out
}

// onlyFormat reports whether every rule is a format rule (which need no
// stats setting).
func onlyFormat(rules []Rule) bool {
	for _, r := range rules {
		if r.Check != CheckFormat {
			return false
		}
	}
	return true
}
