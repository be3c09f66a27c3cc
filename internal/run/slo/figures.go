package slo

import (
	"math"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/spelling"
)

// kind says what a figure's limit is and which units it takes.
type kind int

const (
	kindTime  kind = iota // a duration: the limit needs a time unit
	kindPlain             // a plain number (RTF, count, throughput): no unit
	kindRate              // a fraction in [0, 1]: no unit, or "%"
)

// metricDef is a per-request distribution that takes a statistic suffix.
type metricDef struct {
	name    string   // grammar name, e.g. "audio_ttfp"
	aliases []string // other accepted spellings
	summary string   // summary.Metric name holding it, e.g. summary.MetricTTFP
	unit    string   // unit the summary stores it in: "ms", "s" or "" (plain)
	noData  string   // why it can have no values
	rate    bool     // a fraction (WER): limits take "%" or none, as kindRate
}

// metrics lists the distribution figures in documentation order. It is read
// only.
var metrics = [...]metricDef{
	{"audio_ttfp", []string{"ttfp"}, summary.MetricTTFP, "ms", "no completed response carried audio", false},
	{"ttft", nil, summary.MetricTTFT, "ms", "no completed response carried text", false},
	{"e2e", []string{"e2el"}, summary.MetricE2E, "ms", "no request completed", false},
	{"itl", nil, summary.MetricTextGap, "ms", "no completed response had two text events", false},
	{"rtf_last_chunk", nil, summary.MetricRTFLastChunk, "", "no completed response carried audio", false},
	{"rtf_e2e", nil, summary.MetricRTFE2E, "", "no completed response carried audio", false},
	{"rtf_server", nil, summary.MetricRTFServer, "", "the server reported no generation time", false},
	{"audio_rtf", nil, summary.MetricAudioRTF, "", "no completed response carried audio", false},
	{"audio_duration", nil, summary.MetricDuration, "s", "no completed response carried audio", false},
	{"audio_underrun", []string{"underrun"}, summary.MetricUnderrun, "s", "no completed response had an audio chunk timeline", false},
	{"schedule_lag", nil, summary.MetricLag, "ms", "no request was measured", false},
	{"stamp_delay", nil, summary.MetricStampDelay, "ms", "the server sent no send stamps (run's embedded simulator and omnibench serve --stamp send them)", false},
	{"audio_ttfp_first_event", nil, summary.MetricTTFPFirstEvent, "ms", "no completed response carried audio", false},
	{"ttfa_audible", []string{"ttfa"}, summary.MetricTTFAAudible, "ms", "no completed response carried audible audio", false},
	{"leading_silence", nil, summary.MetricLeadingSilence, "ms", "no completed response carried s16 audio", false},
	{name: "internal_gap", summary: summary.MetricInternalGap, unit: "ms", noData: "no completed response's audio was checked (--audio-checks)"},
	{name: "wer", summary: summary.MetricWER, noData: "no completed response was transcribed (--asr-url)", rate: true},
	{name: "cer", summary: summary.MetricCER, noData: "no completed response was transcribed (--asr-url)", rate: true},
}

// Scalar figures: one number per run.
const (
	figContinuity      = "continuity_ok_rate"
	figErrorRate       = "error_rate"
	figDropRate        = "drop_rate"
	figErrors          = "errors"
	figCompleted       = "completed"
	figRequestRate     = "request_throughput"
	figAudioThroughput = "audio_throughput"
	figGoodputRate     = "goodput_rate"
	figGoodputShare    = "goodput_share"
	figStallRate       = "stall_rate"
	figAudioDefectRate = "audio_defect_rate"
)

type scalarDef struct {
	name string
	kind kind
}

// scalars lists the scalar figures in documentation order (read only).
var scalars = [...]scalarDef{
	{figContinuity, kindRate},
	{figErrorRate, kindRate},
	{figDropRate, kindRate},
	{figErrors, kindPlain},
	{figCompleted, kindPlain},
	{figRequestRate, kindPlain},
	{figAudioThroughput, kindPlain},
	{figGoodputRate, kindPlain},
	{figGoodputShare, kindRate},
	{figStallRate, kindRate},
	{figAudioDefectRate, kindRate},
}

// statNames are the fixed statistics; "pNN" percentiles come on top.
var statNames = [...]string{"mean", "median", "std", "min", "max"}

// defaultContinuityMS is the threshold continuity_ok_rate means without a
// suffix: the server's and the vLLM-Omni benchmark's 100 ms.
const defaultContinuityMS = 100

// figure is a resolved figure name.
type figure struct {
	name   string // canonical, e.g. "audio_ttfp_p95"
	kind   kind
	unit   string // unit of the observed value and of SLO.Value
	metric int    // index into metrics; -1 for a scalar
	stat   string // mean, median, std, min, max or "p"
	p      float64
	scalar string // scalar figure name
	thMS   int    // continuity threshold in ms

	// A server figure (server.go): its base name, the family it belongs
	// to and the labels that select its rows.
	server    string
	serverDef *serverDef
	labels    labelSet
}

// Figures lists the canonical figure names: every scalar figure, and every
// distribution with the stat suffix written as <stat> (mean, median, std,
// min, max or pNN, e.g. audio_ttfp_<stat>). For help texts.
func Figures() []string {
	var out []string
	for _, s := range scalars {
		out = append(out, s.name)
	}
	out = append(out, figContinuity+"_<N>ms")
	for _, m := range metrics {
		out = append(out, m.name+"_<stat>")
	}
	for _, d := range serverDefs {
		switch {
		case !d.stats:
			out = append(out, d.name)
		default:
			out = append(out, d.name+"_<mean|p50|p95|p99>{"+strings.Join(d.labels, "|")+`="N"}`)
		}
	}
	return out
}

// lookupMetric finds a distribution by name or alias.
func lookupMetric(name string) int {
	for i, m := range metrics {
		if m.name == name {
			return i
		}
		for _, a := range m.aliases {
			if a == name {
				return i
			}
		}
	}
	return -1
}

// parseStat parses mean, median, std, min, max or pNN. ok is false when s is
// not of that shape; a percentile of the right shape but outside [0, 100]
// comes back with ok true and rangeErr true.
func parseStat(s string) (stat string, p float64, ok, rangeErr bool) {
	for _, n := range statNames {
		if s == n {
			return s, 0, true, false
		}
	}
	num, found := strings.CutPrefix(s, "p")
	if !found || !isDecimal(num) {
		return "", 0, false, false
	}
	p, err := strconv.ParseFloat(num, 64)
	if err != nil || p > 100 {
		return "p", p, true, true
	}
	return "p", p, true, false
}

// isDecimal reports whether s is digits with at most one inner '.'.
func isDecimal(s string) bool {
	if s == "" || s[0] == '.' || s[len(s)-1] == '.' {
		return false
	}
	dots := 0
	for _, c := range s {
		switch {
		case c == '.':
			dots++
		case c < '0' || c > '9':
			return false
		}
	}
	return dots <= 1
}

func formatP(p float64) string { return "p" + strconv.FormatFloat(p, 'f', -1, 64) }

// canonicalCandidates lists names for suggestions: scalars and every metric
// with the common statistics.
func canonicalCandidates() []string {
	out := make([]string, 0, len(scalars)+len(metrics)*9+1)
	for _, s := range scalars {
		out = append(out, s.name)
	}
	out = append(out, figContinuity+"_100ms")
	for _, m := range metrics {
		for _, st := range []string{"mean", "median", "std", "min", "max", "p50", "p90", "p95", "p99"} {
			out = append(out, m.name+"_"+st)
		}
	}
	for _, d := range serverDefs {
		if !d.stats {
			out = append(out, d.name)
			continue
		}
		for _, st := range serverStats {
			out = append(out, d.name+"_"+st)
		}
	}
	return out
}

// foreignStem maps a metric spelt as elsewhere (the vLLM-Omni benchmark's
// JSON keys, omnibench's summary metric names) or by an alias to its grammar
// name, for suggestions only: the grammar keeps few spellings per figure.
func foreignStem(stem string) (string, bool) {
	switch stem {
	case "audio_ttfp_ms", "ttfp_ms":
		return "audio_ttfp", true
	case "ttft_ms":
		return "ttft", true
	case "e2el_ms", "e2e_ms":
		return "e2e", true
	case "itl_ms":
		return "itl", true
	case "audio_duration_s":
		return "audio_duration", true
	case "audio_underrun_s":
		return "audio_underrun", true
	case "schedule_lag_ms":
		return "schedule_lag", true
	case "stamp_delay_ms":
		return "stamp_delay", true
	}
	if i := lookupMetric(stem); i >= 0 {
		return metrics[i].name, true
	}
	return "", false
}

// suggest returns the known figure name closest to an unknown one, or "".
func suggest(name string) string {
	if len(name) > 64 {
		return "" // nothing is that long; spare the quadratic edit distance
	}
	switch name {
	case "audio_continuity_ok_rate", "continuity_rate", "continuity":
		return figContinuity
	case "request_goodput", "goodput":
		return figGoodputRate
	case "failed", "failures", "error_count":
		return figErrors
	}
	// Benchmark keys put the statistic first: p99_audio_ttfp_ms.
	if st, rest, ok := strings.Cut(name, "_"); ok {
		if _, _, isStat, bad := parseStat(st); isStat && !bad {
			if m, ok := foreignStem(rest); ok {
				return m + "_" + st
			}
		}
	}
	// A known statistic after a misspelt or foreign metric: keep the
	// statistic the user asked for (p97 stays p97).
	if i := strings.LastIndexByte(name, '_'); i > 0 {
		stem, st := name[:i], name[i+1:]
		if _, _, isStat, bad := parseStat(st); isStat && !bad {
			if m, ok := foreignStem(stem); ok {
				return m + "_" + st
			}
			best, bestD := "", math.MaxInt
			for _, m := range metrics {
				for _, n := range append([]string{m.name}, m.aliases...) {
					if d := spelling.Distance(stem, n); d < bestD {
						best, bestD = m.name, d
					}
				}
			}
			if nearEnough(stem, bestD) {
				return best + "_" + st
			}
		}
	}
	best, bestD := "", math.MaxInt
	for _, c := range canonicalCandidates() {
		if d := spelling.Distance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	if nearEnough(name, bestD) {
		return best
	}
	return ""
}

// nearEnough says whether an edit distance d is small enough, for a name of that
// length, that the candidate is likely what was meant.
func nearEnough(name string, d int) bool {
	return d <= max(2, len([]rune(name))/3)
}
