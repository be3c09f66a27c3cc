package slo

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/stats"
)

// Result is the verdict on one SLO.
type Result struct {
	SLO SLO `json:"slo"`
	// Observed is the run's value of the figure, in SLO.Unit; NaN (null in
	// JSON) when the figure has no data.
	Observed float64 `json:"observed"`
	Pass     bool    `json:"pass"`
	// Margin is the distance from the limit in SLO.Unit, signed so that
	// positive is on the passing side: limit - observed for < and <=,
	// observed - limit for > and >=, -|observed - limit| for ==. 0 is exactly
	// at the limit (a pass for <=, >= and ==, a miss for < and >). NaN when
	// the figure has no data.
	Margin float64 `json:"margin"`
	// NoData is set when the figure could not be observed (for example TTFP
	// when no response carried audio). Such an SLO always fails.
	NoData  bool   `json:"no_data,omitempty"`
	Message string `json:"message"` // one line, e.g. "audio_ttfp_p95 = 612.3 ms, limit < 500 ms: missed by 112.3 ms (22.5%)"
}

// MarshalJSON writes NaN figures as null, which encoding/json cannot do by
// itself.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		SLO      SLO         `json:"slo"`
		Observed stats.Float `json:"observed"`
		Pass     bool        `json:"pass"`
		Margin   stats.Float `json:"margin"`
		NoData   bool        `json:"no_data,omitempty"`
		Message  string      `json:"message"`
	}{r.SLO, stats.Float(r.Observed), r.Pass, stats.Float(r.Margin), r.NoData, r.Message})
}

// AllPass reports whether every result passed (true for none).
func AllPass(rs []Result) bool {
	for _, r := range rs {
		if !r.Pass {
			return false
		}
	}
	return true
}

// Evaluate checks each SLO against the run summary s. recs are the records s
// was computed from; Evaluate uses them only for figures s does not hold: a
// percentile not among s.Percentiles or a continuity threshold not among
// those summarised, which it computes with summary.Compute (same filters,
// same latency origin, stats.Percentile's interpolation). Without records
// such figures fail with a message naming the flag that would add them.
//
// A figure with no data never passes: it fails with NoData set and says why.
// A run that measured no requests fails every SLO.
func Evaluate(slos []SLO, s *summary.Summary, recs []results.Record) []Result {
	var set *summary.Set
	if len(recs) > 0 {
		set = summary.SetOf(recs)
	}
	return EvaluateSet(slos, s, set)
}

// EvaluateSet is Evaluate with the run's requests as a summary.Set (what the
// runner keeps); set may be nil.
func EvaluateSet(slos []SLO, s *summary.Summary, set *summary.Set) []Result {
	return EvaluateServer(slos, s, set, nil)
}

// EvaluateServer is EvaluateSet with the server figures of the run's
// breakdown (server.go); server may be nil, and the SLOs on server figures
// then have no data.
func EvaluateServer(slos []SLO, s *summary.Summary, set *summary.Set, server ServerFigures) []Result {
	var extra *summary.Summary
	if s != nil && set != nil && set.Len() > 0 {
		extra = recompute(slos, s, set)
	}
	out := make([]Result, 0, len(slos))
	for _, o := range slos {
		v, why := observe(o.fig, s, extra)
		if o.fig.server != "" && why == "" {
			v, why = observeServer(o.fig, server)
		}
		out = append(out, judge(o, v, why))
	}
	return out
}

// recompute summarises recs again for the percentiles and continuity
// thresholds the SLOs need and s lacks; nil when s has them all.
func recompute(slos []SLO, s *summary.Summary, set *summary.Set) *summary.Summary {
	var ps, ths []float64
	for _, o := range slos {
		f := o.fig
		switch {
		case f.metric >= 0 && f.stat == "p":
			ms, ok := s.Metric(metrics[f.metric].summary)
			if !ok {
				continue // no values at all: nothing to compute
			}
			if _, ok := ms.Percentile(f.p); !ok && !slices.Contains(ps, f.p) {
				ps = append(ps, f.p)
			}
		case f.scalar == figContinuity:
			th := float64(f.thMS) / 1000
			if findContinuity(s, f.thMS) == nil && !slices.Contains(ths, th) {
				ths = append(ths, th)
			}
		}
	}
	if len(ps) == 0 && len(ths) == 0 {
		return nil
	}
	return summary.ComputeSet(set, summary.Options{Percentiles: ps, Thresholds: ths})
}

func findContinuity(s *summary.Summary, thMS int) *summary.Continuity {
	label := strconv.Itoa(thMS)
	for i := range s.Continuity {
		if s.Continuity[i].ThresholdMS == label {
			return &s.Continuity[i]
		}
	}
	return nil
}

// observe returns the figure's value in its unit, or NaN and why there is
// none.
func observe(f figure, s, extra *summary.Summary) (float64, string) {
	nan := math.NaN()
	switch {
	case f.name == "":
		return nan, "not a parsed SLO (build SLOs with slo.Parse)"
	case s == nil:
		return nan, "no run summary"
	case s.Requests.Total == 0:
		return nan, "the run measured no requests"
	}
	if f.server != "" {
		return nan, "" // observeServer reads it
	}
	if f.metric >= 0 {
		return observeMetric(f, s, extra)
	}
	return observeScalar(f, s, extra)
}

// observeMetric is a distribution's statistic (a mean, a percentile) in
// its unit, or NaN and why there is none.
func observeMetric(f figure, s, extra *summary.Summary) (float64, string) {
	nan := math.NaN()
	m := metrics[f.metric]
	ms, ok := s.Metric(m.summary)
	if !ok || ms.N == 0 {
		return nan, m.noData
	}
	var v float64
	switch f.stat {
	case "mean":
		v = ms.Mean
	case "median":
		v = ms.Median
	case "std":
		if ms.N < 2 {
			return nan, "a standard deviation needs two values and the run has one"
		}
		v = ms.Std
	case "min":
		v = ms.Min
	case "max":
		v = ms.Max
	case "p":
		if v, ok = ms.Percentile(f.p); !ok {
			if extra == nil {
				return nan, fmt.Sprintf("%s was not summarised and no records were given to compute it: add %s to --percentiles",
					formatP(f.p), strconv.FormatFloat(f.p, 'f', -1, 64))
			}
			em, _ := extra.Metric(m.summary)
			if v, ok = em.Percentile(f.p); !ok {
				return nan, m.noData
			}
		}
	}
	if math.IsNaN(v) {
		return nan, "the statistic is undefined for this run"
	}
	return v, ""
}

// observeScalar is a run-wide figure (a rate, a count, a share) in its
// unit, or NaN and why there is none.
func observeScalar(f figure, s, extra *summary.Summary) (float64, string) {
	nan := math.NaN()
	ratio := func(num, den int, why string) (float64, string) {
		if den == 0 {
			return nan, why
		}
		return float64(num) / float64(den), ""
	}
	switch f.scalar {
	case figContinuity:
		c := findContinuity(s, f.thMS)
		if c == nil && extra != nil {
			c = findContinuity(extra, f.thMS)
		}
		if c == nil {
			return nan, fmt.Sprintf("continuity at %d ms was not simulated and no records were given to compute it: add %gs to --threshold",
				f.thMS, float64(f.thMS)/1000)
		}
		return ratio(c.OK, c.Of, "no completed response had an audio chunk timeline")
	case figErrorRate:
		return ratio(s.Requests.Failed, s.Requests.Total, "the run measured no requests")
	case figDropRate:
		// Dropped arrivals were never sent: they are not in Total.
		return ratio(s.Requests.Dropped, s.Requests.Total+s.Requests.Dropped, "the run scheduled no requests")
	case figErrors:
		return float64(s.Requests.Failed), ""
	case figCompleted:
		return float64(s.Requests.Completed), ""
	case figRequestRate:
		if s.DurationS <= 0 {
			return nan, "the run has no duration"
		}
		return s.RequestRate, ""
	case figAudioThroughput:
		if s.DurationS <= 0 {
			return nan, "the run has no duration"
		}
		return s.Audio.Throughput, ""
	case figGoodputRate, figGoodputShare:
		g := s.Goodput
		if g == nil {
			return nan, "goodput was not computed: give --goodput"
		}
		if f.scalar == figGoodputShare {
			return ratio(g.Good, g.Of, "the run measured no requests")
		}
		if s.DurationS <= 0 {
			return nan, "the run has no duration"
		}
		return g.Rate, ""
	case figStallRate:
		return ratio(s.Players.StallResumeStalled, s.Players.Responses, "no response was played by the stall-and-resume player")
	case figAudioDefectRate:
		if s.Quality == nil {
			return nan, "no completed response's audio was checked (--audio-checks)"
		}
		return ratio(s.Quality.Defects, s.Quality.Checked, "no completed response's audio was checked (--audio-checks)")
	}
	return nan, fmt.Sprintf("unknown figure %q (build SLOs with slo.Parse)", f.name)
}

// judge compares v with the limit and words the verdict.
func judge(o SLO, v float64, why string) Result {
	r := Result{SLO: o, Observed: v}
	lim := o.Value
	limit := "limit " + o.Op + " " + quantity(lim, o.Unit)
	if why != "" {
		r.Observed, r.Margin, r.NoData = math.NaN(), math.NaN(), true
		r.Message = fmt.Sprintf("%s: no data (%s); %s: counts as a miss", o.Figure, why, limit)
		return r
	}
	switch o.Op {
	case "<":
		r.Pass, r.Margin = v < lim, lim-v
	case "<=":
		r.Pass, r.Margin = v <= lim, lim-v
	case ">":
		r.Pass, r.Margin = v > lim, v-lim
	case ">=":
		r.Pass, r.Margin = v >= lim, v-lim
	case "==":
		r.Pass, r.Margin = v == lim, -math.Abs(v-lim)
	default:
		r.Margin = math.NaN()
		r.Message = fmt.Sprintf("%s: unknown operator %q (build SLOs with slo.Parse)", o.Figure, o.Op)
		return r
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s = %s, %s: ", o.Figure, quantity(v, o.Unit), limit)
	dist := math.Abs(r.Margin)
	rel := ""
	if lim != 0 {
		rel = fmt.Sprintf(" (%.1f%%)", dist/math.Abs(lim)*100)
	}
	switch {
	case r.Pass && o.Op == "==":
		b.WriteString("ok")
	case r.Pass:
		fmt.Fprintf(&b, "ok, %s to spare%s", quantity(dist, o.Unit), rel)
	case o.Op == "==":
		fmt.Fprintf(&b, "off by %s%s", quantity(dist, o.Unit), rel)
	case dist == 0:
		b.WriteString("missed: exactly at the limit")
	default:
		fmt.Fprintf(&b, "missed by %s%s", quantity(dist, o.Unit), rel)
	}
	r.Message = b.String()
	return r
}

func quantity(v float64, unit string) string {
	if unit == "" {
		return formatNumber(v)
	}
	return formatNumber(v) + " " + unit
}

// formatNumber shows about four significant digits without exponents for
// everyday magnitudes: 612.3, 12346, 0.99, 0.0123, 3.
func formatNumber(x float64) string {
	ax := math.Abs(x)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 0):
		return strconv.FormatFloat(x, 'g', -1, 64)
	case x == math.Trunc(x) && ax < 1e15:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case ax >= 1 && ax < 1e15:
		digits := int(math.Floor(math.Log10(ax))) + 1
		s := strconv.FormatFloat(x, 'f', max(0, 4-digits), 64)
		if strings.Contains(s, ".") {
			s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		}
		return s
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}
