package check

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/scrape"
)

func (ev *evaluator) builtin(r *Rule, base Result) []Result {
	switch r.Check {
	case CheckLint:
		return []Result{ev.lint(r, base)}
	case CheckNaming:
		return []Result{ev.naming(r, base)}
	case CheckHistogramInvariants:
		return []Result{ev.histogramInvariants(r, base)}
	case CheckIntegerLabels:
		return []Result{ev.integerLabels(r, base)}
	case CheckStatsGating:
		return ev.statsGating(r, base)
	case CheckFormat:
		return ev.format(r, base)
	case CheckBreakdown:
		return ev.breakdownConsistency(r, base)
	}
	base.Status, base.Detail = Fail, "unknown check "+r.Check
	return []Result{base}
}

// families returns the families a built-in check covers: the rule's family,
// or every family that is not a `_created` companion.
func (ev *evaluator) families(r *Rule) []*scrape.Family {
	if r.Family != "" {
		if f, ok := ev.in.After.Lookup(r.Family); ok {
			return []*scrape.Family{f}
		}
		return nil
	}
	var out []*scrape.Family
	for _, n := range ev.in.After.Names() {
		if f := ev.in.After[n]; f.CreatedFor == "" {
			out = append(out, f)
		}
	}
	return out
}

// problems fills a result from a list of problems found in `checked` items.
func problems(res Result, checked int, what string, list []string) Result {
	res.Expected = "no problems"
	if len(list) == 0 {
		res.Status = Pass
		res.Observed = fmt.Sprintf("%d %s checked, no problems", checked, what)
		return res
	}
	res.Status = Fail
	res.Observed = fmt.Sprintf("%d problems", len(list))
	res.Problems = list
	return res
}

// lint runs promlint, minus the two warnings the design mandates: colons in
// names (vllm:omni_*) and the `_s` seconds suffix (flagged as an abbreviated
// unit). Other abbreviations such as `_ms` are still reported.
func (ev *evaluator) lint(r *Rule, res Result) Result {
	fams := ev.families(r)
	mfs := make([]*dto.MetricFamily, 0, len(fams))
	for _, f := range fams {
		mf := f.Raw
		if mf == nil {
			// Declared without samples: lint its name, type and help.
			name, help := f.Original, f.Help
			typ := protoType(f.Type)
			mf = &dto.MetricFamily{Name: &name, Help: &help, Type: &typ}
		}
		mfs = append(mfs, mf)
	}
	found, err := promlint.NewWithMetricFamilies(mfs).Lint()
	if err != nil {
		res.Status, res.Detail = Fail, "promlint: "+err.Error()
		return res
	}
	var list []string
	for _, p := range found {
		if ignoredLint(p) {
			continue
		}
		list = append(list, fmt.Sprintf("%s: %s", p.Metric, p.Text))
	}
	return problems(res, len(mfs), "families", list)
}

func protoType(t string) dto.MetricType {
	switch t {
	case scrape.TypeCounter:
		return dto.MetricType_COUNTER
	case scrape.TypeGauge:
		return dto.MetricType_GAUGE
	case scrape.TypeHistogram:
		return dto.MetricType_HISTOGRAM
	case scrape.TypeSummary:
		return dto.MetricType_SUMMARY
	case scrape.TypeGaugeHistogram:
		return dto.MetricType_GAUGE_HISTOGRAM
	}
	return dto.MetricType_UNTYPED
}

// ignoredLint drops the promlint findings the vLLM-Omni design mandates.
func ignoredLint(p promlint.Problem) bool {
	switch p.Text {
	case "metric names should not contain ':'":
		return true
	case "metric names should not contain abbreviated units":
		// Ignore only when `_s` is the sole abbreviation in the name.
		n := strings.ToLower(p.Metric)
		for _, a := range []string{"ms", "us", "ns", "sec", "b", "kb", "mb", "gb", "tb", "pb", "m", "h", "d"} {
			if strings.Contains(n, "_"+a+"_") || strings.HasSuffix(n, "_"+a) {
				return false
			}
		}
		return strings.Contains(n, "_s_") || strings.HasSuffix(n, "_s")
	}
	return false
}

// naming checks the naming conventions (docs/reference/metric-families.md,
// section 1) on every pipeline family in the scrape: the vllm:omni_ / vllm_omni: prefix, `_total` on
// counters and only on counters, `_s` for seconds (never `_seconds` or
// `_ms`), `_bytes` for sizes; known families with the unit their buckets
// imply; no family exposed under both prefixes.
func (ev *evaluator) naming(r *Rule, res Result) Result {
	specs := map[string]omnimetrics.FamilySpec{}
	for _, s := range omnimetrics.PipelineFamilies() {
		specs[omnimetrics.PrefixDesign+s.Name] = s
	}
	var (
		list    []string
		checked int
	)
	for _, f := range ev.families(r) {
		name := f.Original
		if !scrape.IsPipeline(name) {
			if strings.Contains(strings.ToLower(name), "omni") && strings.HasPrefix(name, "vllm") {
				list = append(list, fmt.Sprintf("%s: pipeline families are prefixed vllm:omni_ or vllm_omni:", name))
			}
			continue
		}
		checked++
		add := func(format string, args ...any) {
			list = append(list, name+": "+fmt.Sprintf(format, args...))
		}
		if f.AlsoExposedAs != "" {
			add("also exposed as %s (one prefix per family)", f.AlsoExposedAs)
		}
		switch total := strings.HasSuffix(name, "_total"); {
		case f.Type == scrape.TypeCounter && !total:
			add("counters end in _total")
		case f.Type != scrape.TypeCounter && f.Type != scrape.TypeUntyped && total:
			add("only counters end in _total (this is a %s)", f.Type)
		}
		stem := strings.TrimSuffix(name, "_total")
		for _, bad := range []string{"_seconds", "_ms", "_milliseconds", "_sec", "_secs"} {
			if strings.HasSuffix(stem, bad) || strings.Contains(stem, bad+"_") {
				add("times are in seconds with the _s suffix, not %s", bad)
			}
		}
		if (strings.Contains(stem, "size") || strings.Contains(stem, "bytes")) && !strings.HasSuffix(stem, "_bytes") {
			add("sizes end in _bytes")
		}
		if spec, ok := specs[f.Name]; ok && f.Type == scrape.TypeHistogram {
			switch unitOf(spec.Buckets) {
			case "s":
				if !strings.HasSuffix(name, "_s") {
					add("a histogram of seconds ends in _s")
				}
			case "bytes":
				if !strings.HasSuffix(name, "_bytes") {
					add("a histogram of sizes ends in _bytes")
				}
			}
		}
	}
	return problems(res, checked, "pipeline families", list)
}

// unitOf tells the unit of a family from its bucket layout.
func unitOf(b []float64) string {
	switch {
	case sameBounds(b, omnimetrics.SecondsBuckets()), sameBounds(b, omnimetrics.SecondsFastBuckets()):
		return "s"
	case sameBounds(b, omnimetrics.BytesBuckets()):
		return "bytes"
	}
	return ""
}

// histogramInvariants checks every series of every histogram: cumulative
// buckets never decrease, the +Inf bucket exists and equals _count, counts
// are not negative, and (with NonNegative) sums are not negative.
func (ev *evaluator) histogramInvariants(r *Rule, res Result) Result {
	var (
		list    []string
		checked int
	)
	for _, f := range ev.families(r) {
		if f.Type != scrape.TypeHistogram && f.Type != scrape.TypeGaugeHistogram {
			continue
		}
		for _, s := range f.Series {
			checked++
			h := s.Histogram
			where := f.Original + "{" + s.Key + "}"
			if h.InfMissing {
				list = append(list, where+`: no le="+Inf" bucket`)
			} else if inf := h.InfCount(); inf != h.Count {
				list = append(list, fmt.Sprintf(`%s: le="+Inf" is %s but _count is %s`, where, scrape.FormatValue(inf), scrape.FormatValue(h.Count)))
			}
			for i := 1; i < len(h.Buckets); i++ {
				if h.Buckets[i].Count < h.Buckets[i-1].Count {
					list = append(list, fmt.Sprintf(`%s: bucket le="%s" (%s) is below le="%s" (%s): buckets are cumulative`,
						where, scrape.FormatBound(h.Buckets[i].UpperBound), scrape.FormatValue(h.Buckets[i].Count),
						scrape.FormatBound(h.Buckets[i-1].UpperBound), scrape.FormatValue(h.Buckets[i-1].Count)))
					break
				}
			}
			if h.Count < 0 || math.IsNaN(h.Count) {
				list = append(list, fmt.Sprintf("%s: _count is %s", where, scrape.FormatValue(h.Count)))
			}
			if r.NonNegative && (h.Sum < 0 || math.IsNaN(h.Sum)) {
				list = append(list, fmt.Sprintf("%s: _sum is %s, but it adds non-negative quantities", where, scrape.FormatValue(h.Sum)))
			}
		}
	}
	return problems(res, checked, "histogram series", list)
}

// integerLabels checks that every value of a label parses as an integer.
func (ev *evaluator) integerLabels(r *Rule, res Result) Result {
	var (
		list    []string
		checked int
	)
	for _, f := range ev.families(r) {
		for _, s := range f.Series {
			v, ok := s.Labels[r.Label]
			if !ok {
				continue
			}
			checked++
			if _, err := strconv.ParseInt(v, 10, 64); err != nil {
				list = append(list, fmt.Sprintf("%s{%s}: %s=%q is not an integer", f.Original, s.Key, r.Label, v))
			}
		}
	}
	res = problems(res, checked, r.Label+" values", list)
	if checked == 0 && len(list) == 0 {
		res.Status = Skip
		res.Detail = "no series carries " + r.Label
	}
	return res
}

// statsGating checks the gating of docs/reference/metric-families.md,
// section 2. Stats off: every pipeline family
// is present (HELP/TYPE) and holds no data, and no upstream vllm:* family
// exists. Stats on: the long-standing upstream vllm:* stage/replica
// families exist, unless the server is diffusion-only (statsOnUpstream).
// Families the profile tolerates without checking go to the notes.
func (ev *evaluator) statsGating(r *Rule, base Result) []Result {
	on, how := ev.statsOn, ""
	if r.Stats != "" {
		mode, _ := ParseStatsMode(r.Stats)
		on, how = resolveStats(mode, ev.in.After)
	} else {
		_, how = resolveStats(ev.in.Stats, ev.in.After)
	}
	fs := ev.in.After
	ev.noteUnknownSpeech(fs)
	if !on {
		a := base
		a.Rule = "stats off: pipeline families present and empty"
		var missing, withData []string
		specs := omnimetrics.PipelineFamilies()
		for _, s := range specs {
			f, ok := fs.Lookup(s.Name)
			switch {
			case !ok:
				missing = append(missing, omnimetrics.PrefixDesign+s.Name)
			case nonZeroSeries(f) > 0:
				withData = append(withData, f.Original)
			}
		}
		var list []string
		for _, m := range missing {
			list = append(list, m+": absent (families are registered at start-up even with stats off)")
		}
		for _, d := range withData {
			list = append(list, d+": has data although stats are off")
		}
		a = problems(a, len(specs), "pipeline families", list)
		a.Expected = "all present, none with data"
		a.Detail = joinNote("stats "+how, a.Detail)

		b := base
		b.Rule = "stats off: no upstream vllm:* families"
		up := upstreamPresent(fs)
		b.Expected = "none"
		b.Observed = fmt.Sprintf("%d", len(up))
		b.Status = pass(len(up) == 0)
		if len(up) > 0 {
			b.Detail = "present (listed below)"
			b.Problems = up
		}
		return []Result{a, b}
	}
	ev.noteUnknownUpstream(fs)
	return []Result{statsOnUpstream(base, fs, how)}
}

// statsOnUpstream judges the upstream vllm:* families of a server with
// stats on. Only the long-standing ones are required: which others a vLLM
// release registers changes from release to release. A diffusion-only
// server registers none at all (its stages have no LLM engine), and is
// told from its families (diffusionOnly).
func statsOnUpstream(res Result, fs scrape.Families, how string) Result {
	res.Rule = "stats on: upstream vllm:* stage/replica families present"
	res.Detail = "stats " + how
	if stages, ok := diffusionOnly(fs); ok {
		res.Expected = "none (diffusion-only server)"
		res.Observed = "0 present"
		res.Status = Pass
		res.Detail = joinNote(res.Detail, fmt.Sprintf("diffusion-only server: diffusion families with data on stage %s "+
			"and no LLM stage series; such a server registers no upstream families", strings.Join(stages, ", ")))
		return res
	}
	specs := omnimetrics.LongStandingUpstreamFamilies()
	var missing []string
	for _, s := range specs {
		if _, ok := fs.Lookup(s.Name); !ok {
			missing = append(missing, s.Name)
		}
	}
	res.Expected = fmt.Sprintf("the %d long-standing ones present", len(specs))
	res.Observed = fmt.Sprintf("%d present", len(specs)-len(missing))
	res.Status = pass(len(missing) == 0)
	if len(missing) > 0 {
		res.Detail = joinNote(res.Detail, "missing (listed below)")
		res.Problems = missing
	}
	return res
}

// noteUnknownUpstream lists, in the report's notes, the upstream vllm:*
// families the profile does not know and tolerates without checking: newer
// vLLM releases register lists nobody here has seen.
func (ev *evaluator) noteUnknownUpstream(fs scrape.Families) {
	known := map[string]bool{}
	for _, s := range omnimetrics.UpstreamFamilies() {
		known[s.Name] = true
	}
	var upstream []string
	for _, name := range upstreamPresent(fs) {
		if !known[name] {
			upstream = append(upstream, name)
		}
	}
	if len(upstream) > 0 {
		ev.notes = append(ev.notes, "unknown upstream families, tolerated: "+strings.Join(upstream, ", "))
	}
}

// noteUnknownSpeech lists, in the report's notes, the speech-stream
// families under names other than the simulator's guess (the servers' names
// were never published): tolerated, never checked.
func (ev *evaluator) noteUnknownSpeech(fs scrape.Families) {
	if speech := unknownSpeechStreamFamilies(fs); len(speech) > 0 {
		ev.notes = append(ev.notes, "unknown speech-stream families, tolerated: "+strings.Join(speech, ", "))
	}
}

// diffusionOnly tells a server whose stages are all diffusion stages, and
// returns those stages: a diffusion family has data, no upstream vllm:*
// family exists (they are registered only for stages with an LLM engine),
// and no pipeline series names a stage that is not one of them.
func diffusionOnly(fs scrape.Families) (stages []string, ok bool) {
	if len(upstreamPresent(fs)) > 0 {
		return nil, false
	}
	diffusion := map[string]bool{}
	for _, spec := range omnimetrics.DiffusionFamilies() {
		if f, present := fs.Lookup(spec.Name); present {
			for _, s := range f.Series {
				if st, labelled := s.Labels[omnimetrics.LabelStage]; labelled && hasData(s) && !diffusion[st] {
					diffusion[st] = true
					stages = append(stages, st)
				}
			}
		}
	}
	if len(stages) == 0 {
		return nil, false
	}
	for _, n := range fs.Names() {
		f := fs[n]
		if !scrape.IsPipeline(n) || f.CreatedFor != "" {
			continue
		}
		for _, s := range f.Series {
			if st, labelled := s.Labels[omnimetrics.LabelStage]; labelled && !diffusion[st] {
				return nil, false
			}
		}
	}
	sort.Strings(stages)
	return stages, true
}
