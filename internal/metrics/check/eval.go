package check

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/scrape"
)

// StatsMode says whether the server runs with stats on (--log-stats), off,
// or whether check should tell from the scrape.
type StatsMode int

// Stats modes.
const (
	StatsAuto StatsMode = iota
	StatsOn
	StatsOff
)

// ParseStatsMode reads "auto", "on" or "off".
func ParseStatsMode(s string) (StatsMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return StatsAuto, nil
	case "on", "true":
		return StatsOn, nil
	case "off", "false":
		return StatsOff, nil
	}
	return StatsAuto, fmt.Errorf("%q: want auto, on or off", s)
}

func (m StatsMode) String() string {
	switch m {
	case StatsOn:
		return "on"
	case StatsOff:
		return "off"
	}
	return "auto"
}

// Input is what rules are checked against.
type Input struct {
	// Before is the scrape taken before the run; nil when there is only
	// one scrape, whose counters then count from the server's start.
	Before scrape.Families
	After  scrape.Families // the scrape checked (required)
	// Run holds the client's figures for rules that compare with them; nil
	// skips those rules.
	Run *RunFigures
	// Stats is the server's stats setting. StatsAuto tells it from the
	// scrape: on when an upstream vllm:* family exists or a pipeline family
	// has data.
	Stats StatsMode
	// Exposition and BeforeExposition are After's and Before's bodies as
	// received, for the format check (skipped without them). When one has
	// a ParseErr, only the format check is evaluated.
	Exposition, BeforeExposition *Exposition
}

// Status is a rule's outcome.
type Status string

// Outcomes. A skipped rule could not be decided (no run figures, an absent
// family whose absence another rule reports, an empty family) and does not
// fail the check.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	Skip Status = "skip"
)

// Result is one rule's outcome with the numbers behind it.
type Result struct {
	Rule       string `json:"rule"`
	Family     string `json:"family,omitempty"`
	Status     Status `json:"status"`
	Expected   string `json:"expected,omitempty"`
	Observed   string `json:"observed,omitempty"`
	Difference string `json:"difference,omitempty"` // observed - expected
	Tolerance  string `json:"tolerance,omitempty"`
	Detail     string `json:"detail,omitempty"`
	// Problems lists, in full, what a check over many families found.
	Problems []string `json:"problems,omitempty"`
	// Line and Token point into the exposition (format rules), when known.
	Line   int    `json:"line,omitempty"`
	Token  string `json:"token,omitempty"`
	Source string `json:"source,omitempty"`
}

// Report is the outcome of a check.
type Report struct {
	Results []Result `json:"results"`
	// Stats is the stats setting used, and how it was known ("off
	// (detected: no upstream vllm:* family, no pipeline data)"); "" when
	// no rule needs it or the exposition did not parse.
	Stats   string `json:"stats"`
	Passed  int    `json:"passed"`
	Failed  int    `json:"failed"`
	Skipped int    `json:"skipped"`
	// Notes are remarks every output shows, such as rules that did not
	// apply to the input.
	Notes []string `json:"notes,omitempty"`
}

// OK reports whether no rule failed.
func (r *Report) OK() bool { return r.Failed == 0 }

// evaluator holds what every rule needs.
type evaluator struct {
	in      Input
	delta   *scrape.Delta
	statsOn bool
	// unparsed is why the scrape has no families to check: a body the
	// parser rejected (only the format check runs then).
	unparsed error
	notes    []string
	// speech says whether the server records speech streams (with run
	// figures only).
	speech SpeechVerdict
}

// Evaluate checks the rules against the input. Results keep rule order.
func Evaluate(in Input, rules []Rule) *Report {
	if in.After == nil {
		in.After = scrape.Families{}
	}
	ev := &evaluator{in: in, delta: scrape.Diff(in.Before, in.After)}
	if in.Run != nil {
		run := *in.Run
		ev.speech = JudgeSpeechStreams(in.After, ev.delta, &run)
		run.ServerCountsSpeech = ev.speech.Counted
		ev.in.Run = &run
	}
	for _, x := range []*Exposition{in.BeforeExposition, in.Exposition} {
		if x != nil && x.ParseErr != nil && ev.unparsed == nil {
			ev.unparsed = fmt.Errorf("%s does not parse", x.Source)
		}
	}
	rep := &Report{}
	ev.statsOn, rep.Stats = resolveStats(in.Stats, in.After)
	if ev.unparsed != nil || onlyFormat(rules) {
		rep.Stats = "" // nothing to tell it from, or no rule that needs it
	}
	for i := range rules {
		for _, res := range ev.rule(&rules[i]) {
			if res.Source == "" {
				res.Source = rules[i].Source
			}
			switch res.Status {
			case Pass:
				rep.Passed++
			case Fail:
				rep.Failed++
			default:
				rep.Skipped++
			}
			rep.Results = append(rep.Results, res)
		}
	}
	rep.Notes = ev.notes
	return rep
}

// DetectStats tells from one scrape whether the server runs with stats on,
// the way `check --stats auto` does (an upstream vllm:* family, or a
// pipeline family with data), and says how it knew. `ab --log-stats`
// verifies its arms with it.
func DetectStats(fs scrape.Families) (on bool, how string) { return resolveStats(StatsAuto, fs) }

// resolveStats decides the stats setting, saying how.
func resolveStats(mode StatsMode, fs scrape.Families) (bool, string) {
	switch mode {
	case StatsOn:
		return true, "on (given)"
	case StatsOff:
		return false, "off (given)"
	}
	upstream := upstreamPresent(fs)
	data := pipelineWithData(fs)
	switch {
	case len(upstream) > 0:
		return true, fmt.Sprintf("on (detected: %d upstream vllm:* families)", len(upstream))
	case len(data) > 0:
		return true, fmt.Sprintf("on (detected: %d pipeline families with data)", len(data))
	}
	return false, "off (detected: no upstream vllm:* family, no pipeline data)"
}

// upstreamPresent lists the upstream vllm:* families (not pipeline ones)
// in the scrape.
func upstreamPresent(fs scrape.Families) []string {
	var out []string
	for _, n := range fs.Names() {
		f := fs[n]
		if strings.HasPrefix(f.Original, "vllm:") && !scrape.IsPipeline(f.Original) && f.CreatedFor == "" {
			out = append(out, f.Original)
		}
	}
	return out
}

// pipelineWithData lists pipeline families with a non-zero series.
func pipelineWithData(fs scrape.Families) []string {
	var out []string
	for _, n := range fs.Names() {
		f := fs[n]
		if scrape.IsPipeline(f.Original) && f.CreatedFor == "" && nonZeroSeries(f) > 0 {
			out = append(out, f.Original)
		}
	}
	return out
}

func nonZeroSeries(f *scrape.Family) int {
	n := 0
	for _, s := range f.Series {
		if hasData(s) {
			n++
		}
	}
	return n
}

// hasData reports whether a series holds anything but zeros.
func hasData(s scrape.Series) bool {
	switch {
	case s.Histogram != nil:
		return s.Histogram.Count != 0 || s.Histogram.Sum != 0
	case s.Summary != nil:
		return s.Summary.Count != 0 || s.Summary.Sum != 0
	}
	return s.Value != 0
}

// display names a family the way the scrape spells it, else the rule does.
func (ev *evaluator) display(name string) string {
	if f, ok := ev.in.After.Lookup(name); ok {
		return f.Original
	}
	if !strings.Contains(name, ":") {
		return omnimetrics.PrefixDesign + name
	}
	return name
}

func (ev *evaluator) rule(r *Rule) []Result {
	base := Result{Rule: r.DisplayName()}
	if r.Family != "" {
		base.Family = ev.display(r.Family)
	}
	if ev.unparsed != nil && r.Check != CheckFormat {
		base.Status = Skip
		base.Detail = "not evaluated: " + ev.unparsed.Error() + " (the format rules say where)"
		return []Result{base}
	}
	switch r.kind() {
	case "check":
		return ev.builtin(r, base)
	case "expect":
		return ev.expect(r, base)
	}
	return []Result{ev.structure(r, base)}
}

// structure evaluates exists, empty, type, labels and buckets.
func (ev *evaluator) structure(r *Rule, res Result) Result {
	f, present := ev.in.After.Lookup(r.Family)
	absent := func() Result {
		res.Status, res.Observed = Skip, "absent"
		res.Detail = "the family is not in the scrape (an exists rule reports that)"
		if strings.HasPrefix(r.Family, "vllm:") && !scrape.IsPipeline(r.Family) {
			res.Detail = "upstream family absent: registered only with stats on (the stats gating rule judges that)"
		}
		return res
	}
	switch r.kind() {
	case "exists":
		res.Expected = map[bool]string{true: "present", false: "absent"}[*r.Exists]
		res.Observed = "absent"
		if present {
			res.Observed = "present"
			if f.AlsoExposedAs != "" {
				res.Detail = "also exposed as " + f.AlsoExposedAs
			}
		}
		res.Status = pass(present == *r.Exists)
		if !present && r.Optional {
			res.Status = Skip
			res.Detail = "optional: not every server version exposes this family"
		}
	case "empty":
		res.Expected = map[bool]string{true: "present, no data", false: "present, with data"}[*r.Empty]
		if !present {
			res.Status, res.Observed = Fail, "absent"
			return res
		}
		n := nonZeroSeries(f)
		res.Observed = fmt.Sprintf("%d series, %d with data", len(f.Series), n)
		res.Status = pass((n == 0) == *r.Empty)
	case "type":
		res.Expected = r.Type
		if !present {
			return absent()
		}
		res.Observed = f.Type
		res.Status = pass(f.Type == r.Type)
	case "labels":
		res.Expected = strings.Join(sortedCopy(r.Labels), ", ")
		if !present {
			return absent()
		}
		return labelsResult(r, f, res)
	case "buckets":
		res.Expected = formatBounds(r.Buckets) + ", +Inf"
		if !present {
			return absent()
		}
		return bucketsResult(r, f, res)
	}
	return res
}

// labelsResult judges a labels rule on a family that is present (res
// already says what is expected).
func labelsResult(r *Rule, f *scrape.Family, res Result) Result {
	if len(f.Series) == 0 {
		res.Status, res.Observed = Skip, "no series"
		res.Detail = "the family has no series to read label names from"
		return res
	}
	want := sortedCopy(r.Labels)
	got := f.LabelNames()
	res.Observed = strings.Join(got, ", ")
	missing, extra := setDiff(want, got), setDiff(got, want)
	res.Status = pass(len(missing) == 0 && len(extra) == 0)
	var d []string
	if len(missing) > 0 {
		d = append(d, "missing "+strings.Join(missing, ", "))
	}
	if len(extra) > 0 {
		d = append(d, "unexpected "+strings.Join(extra, ", "))
	}
	res.Detail = strings.Join(d, "; ")
	return res
}

// bucketsResult judges a buckets rule on a family that is present (res
// already says what is expected).
func bucketsResult(r *Rule, f *scrape.Family, res Result) Result {
	if f.Type != scrape.TypeHistogram && f.Type != scrape.TypeGaugeHistogram {
		res.Status, res.Observed = Fail, f.Type
		res.Detail = "not a histogram"
		return res
	}
	if len(f.Series) == 0 {
		res.Status, res.Observed = Skip, "no series"
		res.Detail = "the family has no series to read buckets from"
		return res
	}
	res.Status, res.Observed = Pass, res.Expected
	bad := 0
	for _, s := range f.Series {
		got := s.Histogram.FiniteBounds()
		problem := ""
		switch {
		case !sameBounds(got, r.Buckets):
			problem = "bounds " + formatBounds(got)
		case s.Histogram.InfMissing:
			problem = `no le="+Inf" bucket`
		}
		if problem == "" {
			continue
		}
		if bad == 0 {
			res.Status = Fail
			res.Observed = formatBounds(got)
			if !s.Histogram.InfMissing {
				res.Observed += ", +Inf"
			}
		}
		res.Problems = append(res.Problems, fmt.Sprintf("series {%s}: %s", s.Key, problem))
		bad++
	}
	return res
}

func pass(ok bool) Status {
	if ok {
		return Pass
	}
	return Fail
}

func setDiff(a, b []string) []string {
	in := map[string]bool{}
	for _, x := range b {
		in[x] = true
	}
	var out []string
	for _, x := range a {
		if !in[x] {
			out = append(out, x)
		}
	}
	return out
}

func sameBounds(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-9*math.Max(1, math.Abs(want[i])) {
			return false
		}
	}
	return true
}

func formatBounds(b []float64) string {
	parts := make([]string, len(b))
	for i, v := range b {
		parts[i] = scrape.FormatBound(v)
	}
	return strings.Join(parts, ", ")
}

// expect evaluates a comparison, expanding a "*" match label.
func (ev *evaluator) expect(r *Rule, base Result) []Result {
	fig := r.Expect.Figure
	if fig != "" {
		if ev.in.Run == nil {
			base.Status, base.Expected = Skip, r.Expect.String()
			base.Detail = "compares with the run: give the run's results (--run FILE)"
			return []Result{base}
		}
		if !ev.statsOn {
			base.Status, base.Expected = Skip, r.Expect.String()
			base.Detail = "server stats are off: its families stay empty, nothing to compare with the run"
			return []Result{base}
		}
	}
	if _, present := ev.in.After.Lookup(r.Family); !present && r.Optional {
		base.Status, base.Expected, base.Observed = Skip, r.Expect.String(), "absent"
		base.Detail = "optional: not every server version exposes this family"
		return []Result{base}
	}
	wildLabel := ""
	for k, v := range r.Match {
		if v == "*" {
			wildLabel = k
		}
	}
	if wildLabel == "" {
		return []Result{ev.compare(r, base, r.Match, fig)}
	}
	var values []string
	if strings.HasSuffix(fig, ".*") {
		values = ev.in.Run.keys(strings.TrimSuffix(fig, ".*"))
	} else if fd, ok := ev.delta.Family(r.Family); ok {
		seen := map[string]bool{}
		for _, s := range fd.Series {
			if v, ok := s.Labels[wildLabel]; ok && !seen[v] {
				seen[v] = true
				values = append(values, v)
			}
		}
		sort.Strings(values)
	}
	if len(values) == 0 {
		base.Status, base.Expected = Skip, r.Expect.String()
		base.Detail = fmt.Sprintf("no values of %s to check", wildLabel)
		return []Result{base}
	}
	var out []Result
	for _, v := range values {
		match := map[string]string{}
		for k, mv := range r.Match {
			match[k] = mv
		}
		match[wildLabel] = v
		res := base
		if r.Name != "" {
			res.Rule = fmt.Sprintf("%s (%s=%s)", r.Name, wildLabel, v)
		} else {
			res.Rule = strings.Replace(res.Rule, strconv.Quote("*"), strconv.Quote(v), 1)
			res.Rule = strings.Replace(res.Rule, "run."+fig, "run."+strings.Replace(fig, "*", v, 1), 1)
		}
		out = append(out, ev.compare(r, res, match, strings.Replace(fig, "*", v, 1)))
	}
	return out
}

// compare evaluates one (expanded) comparison, with what it must say about
// speech streams (speechCaveat).
func (ev *evaluator) compare(r *Rule, res Result, match map[string]string, fig string) Result {
	caveat, undecided := ev.speechCaveat(fig)
	if undecided {
		res.Status, res.Expected, res.Detail = Skip, r.Expect.String(), caveat
		return res
	}
	res = ev.compareWith(r, res, match, fig)
	res.Detail = joinNote(res.Detail, caveat)
	return res
}

// compareWith evaluates one (expanded) comparison.
func (ev *evaluator) compareWith(r *Rule, res Result, match map[string]string, fig string) Result {
	res.Tolerance = r.Tolerance.String()
	expected := r.Expect.Value
	res.Expected = r.Expect.Op + " " + scrape.FormatValue(expected)
	if fig != "" {
		v, ok := ev.in.Run.Lookup(fig)
		if !ok {
			res.Status, res.Detail = Fail, "unknown run figure run."+fig
			return res
		}
		expected = v
		res.Expected = fmt.Sprintf("%s %s (run.%s)", r.Expect.Op, scrape.FormatValue(v), fig)
	}
	observed, note, err := ev.measure(r, match)
	if err != nil {
		res.Status, res.Detail = Fail, err.Error()
		return res
	}
	res.Observed = scrape.FormatValue(observed)
	res.Detail = note
	if math.IsNaN(observed) {
		res.Status = Fail
		res.Detail = joinNote("no observations to estimate from", note)
		return res
	}
	diff := observed - expected
	res.Difference = signed(diff)
	if diff != 0 && expected != 0 && !math.IsInf(expected, 0) {
		res.Difference += fmt.Sprintf(" (%s%%)", signed(100*diff/math.Abs(expected)))
	}
	res.Status = pass(r.Expect.holds(observed, expected, r.Tolerance.Allowed(expected)))
	return res
}

// signed prints a difference with its sign: integers exactly, other values
// with 4 significant digits.
func signed(v float64) string {
	s := scrape.FormatValue(v)
	if v != math.Trunc(v) {
		s = strconv.FormatFloat(v, 'g', 4, 64)
	}
	if v > 0 {
		return "+" + s
	}
	return s
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	if b == "" {
		return a
	}
	return a + "; " + b
}

// measure computes the rule's measure over the series matching match.
func (ev *evaluator) measure(r *Rule, match map[string]string) (float64, string, error) {
	fd, ok := ev.delta.Family(r.Family)
	if !ok || !fd.InAfter {
		return 0, "", fmt.Errorf("family %s is not in the scrape", ev.display(r.Family))
	}
	var (
		matched int
		reset   bool
	)
	for _, s := range fd.Series {
		if seriesMatches(s.Labels, match) {
			matched++
			reset = reset || s.Reset
		}
	}
	var notes []string
	if matched == 0 {
		notes = append(notes, "no series match"+matchString(match))
	}
	measure := r.Measure
	if r.Quantile != nil {
		measure = MeasureQuantile
	}
	isHist := fd.Type == scrape.TypeHistogram || fd.Type == scrape.TypeGaugeHistogram || fd.Type == scrape.TypeSummary
	if measure == "" {
		switch {
		case isHist:
			measure = MeasureCount
		case fd.Type == scrape.TypeCounter:
			measure = MeasureDelta
		default:
			measure = MeasureValue
		}
	}
	if measure != MeasureValue {
		if ev.in.Before == nil {
			notes = append(notes, "one scrape: counted since the server started")
		} else if reset {
			notes = append(notes, "the server restarted between the scrapes: counted from the restart")
		}
	}
	note := strings.Join(notes, "; ")
	switch measure {
	case MeasureValue, MeasureDelta:
		if isHist && measure == MeasureValue {
			return 0, note, fmt.Errorf("measure value applies to counters and gauges; %s is a %s (use count, sum, mean or quantile)", fd.Original, fd.Type)
		}
		var v float64
		for _, s := range fd.Series {
			if !seriesMatches(s.Labels, match) {
				continue
			}
			if measure == MeasureValue {
				v += s.After
			} else {
				v += s.Delta
			}
		}
		return v, note, nil
	}
	if !isHist {
		return 0, note, fmt.Errorf("measure %s applies to histograms; %s is a %s", measure, fd.Original, fd.Type)
	}
	var h scrape.HistogramDelta
	if fd.Type == scrape.TypeSummary {
		if measure == MeasureQuantile {
			return 0, note, fmt.Errorf("quantile estimates need a histogram; %s is a summary", fd.Original)
		}
		for _, s := range fd.Series {
			if seriesMatches(s.Labels, match) && s.Histogram != nil {
				h.Count += s.Histogram.Count
				h.Sum += s.Histogram.Sum
			}
		}
	} else {
		h, _ = ev.delta.HistogramDelta(r.Family, match)
	}
	switch measure {
	case MeasureCount:
		return h.Count, note, nil
	case MeasureSum:
		return h.Sum, note, nil
	case MeasureMean:
		return h.Mean(), note, nil
	}
	return h.Quantile(*r.Quantile), note, nil
}

func seriesMatches(labels, match map[string]string) bool {
	for k, v := range match {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
