package abtest

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// Result is a finished (or interrupted) A/B run.
type Result struct {
	A, B *ArmResult

	Rounds      int      // per arm
	Order       []string // arm of every round slot: A B B A ...
	Seed        int64
	Scenario    string
	Concurrency int
	Rate        float64
	Warmup      int // per round
	Requests    int // per arm, measured
	Duration    time.Duration

	Alpha       float64
	Power       float64
	Test        stats.Test
	Percentiles []float64

	// Metrics are the comparisons of e2e, TTFP and audio RTF, in that order.
	Metrics []MetricResult
	// Throughput is the comparison of throughput mode (Config.Throughput);
	// nil without it.
	Throughput *ThroughputResult
	// Failures compares the arms' failure rates over the measured requests
	// (Fisher's exact test). When they differ beyond chance (P < Alpha) an
	// arm broke: Broken says how, and there is no latency verdict.
	Failures stats.FailureRates
	Broken   string
	// Gates are the verdicts of Config.Gates and, with any, of the
	// failure-rate gate.
	Gates []compare.GateResult
	// Verdict states the outcome at Alpha in words; Significant is true
	// when any metric differs significantly after Holm's correction, or the
	// failure rates do.
	Verdict     string
	Significant bool
	// Refused says why there is no verdict at all ("" when there is one):
	// the figures stand, but Verdict, every metric's verdict and the gates
	// say only that none was given.
	Refused string

	// IncludeRamp counts ramp-phase records as samples (run --include-ramp).
	IncludeRamp bool

	Interrupted bool
	Warnings    []string
	OutDir      string
	LogDir      string // where the server logs are ("" when no server command ran)
}

// ArmResult is what one arm measured.
type ArmResult struct {
	Name    string   // "A" or "B"
	Label   string   // the description given, or the URL, command or "embedded simulator"
	Kind    string   // "url", "command" or "simulator"
	Target  string   // base URL (of the last server start), without credentials
	Command []string // server command as given ({port} unreplaced), secrets redacted

	ServerPIDs   []int  // pid of every start of the server command
	ServerStarts int    // how often abtest started the arm's server
	ServerLog    string // the server command's output
	ResultsFile  string // a.jsonl / b.jsonl, when written
	Rounds       int    // rounds run

	// kept holds every finished request of the arm in compact form,
	// numbered across the rounds in the order they were sent. The records
	// themselves are in ResultsFile.
	kept armSamples

	Requests   int    // measured (non-warm-up) records
	Used       int    // successful measured records: the samples
	Failed     int    // measured records with an error class
	Warmup     int    // warm-up records
	FirstError string // class and message of the first failure

	// Metrics is the arm's /metrics after its last round; nil when the run
	// ended before.
	Metrics *MetricsSize

	// StatsClaim is what the arm claims about the server's stats ("on",
	// "off", "" for no claim) and Stats what its /metrics showed after its
	// first round, as check.DetectStats says it ("off (detected: ...)").
	StatsClaim string
	Stats      string

	// Client is the load generator's verdict over the arm's rounds:
	// saturated when any round was (reasons named by round); its warning
	// is the one of the round with the most delay.
	Client *results.ClientHealth `json:",omitempty"`
}

// observeHealth folds one round's load-generator verdict into the arm's.
func (a *ArmResult) observeHealth(round int, h *selfmon.Report) {
	if a.Client == nil {
		a.Client = &results.ClientHealth{}
	}
	// The arm's warning is the first round's that saturated the client,
	// else the one of the round with the most delay (a busy host, the
	// server on the client's cores: figures to read, not a refusal).
	if w := h.Warning(); w != "" {
		first := h.Saturated && !a.Client.Saturated
		worse := !a.Client.Saturated && (a.Client.Warning == "" || h.ClientDelayMS >= a.Client.ClientDelayMS)
		if first || worse {
			a.Client.Cause, a.Client.Warning = string(h.Cause), fmt.Sprintf("%s (round %d)", w, round+1)
		}
	}
	a.Client.ClientDelayMS = max(a.Client.ClientDelayMS, h.ClientDelayMS)
	if h.Saturated {
		a.Client.Saturated = true
		for _, r := range h.Reasons {
			a.Client.Reasons = append(a.Client.Reasons, fmt.Sprintf("round %d: %s", round+1, r))
		}
	}
}

// MetricResult compares one metric between the arms: package compare's
// analysis (compare.Analyze; SamplesA and SamplesB are each arm's values in
// the order sent, HolmP is adjusted across the metrics tested) and its
// verdict in words.
type MetricResult struct {
	compare.Row
	Verdict string // "no significant difference", "B slower by 3.1% (holm p=0.004)", ...
}

// Metrics returns the metrics an A/B run compares, in report order: e2e
// (the latency of the original metrics design's A/B test), TTFP, and the audio RTF of the vLLM-Omni
// benchmark (last audio chunk for chat, whole response for speech). Larger
// is worse for every one. e2e and TTFP are package compare's definitions, so
// `omnibench compare a.jsonl b.jsonl` reports the same numbers for them.
func Metrics() []compare.Metric {
	e2e, _ := compare.LookupMetric("e2e")
	ttfp, _ := compare.LookupMetric("ttfp")
	rtf := compare.Metric{
		Name: "audio_rtf", Field: "rtf_last_chunk (chat) or rtf_e2e (speech)", Unit: "ratio", Display: "x", Scale: 1,
		Value: func(r *results.Record) (float64, bool) {
			if !r.HasAudio() || r.AudioDurationS <= 0 {
				return 0, false
			}
			if r.ChatPath() {
				return r.RTFLastChunk, true
			}
			return r.RTFE2E, true
		},
	}
	return []compare.Metric{e2e, ttfp, rtf}
}

// ErrArmBroken is wrapped by Result.Err when the arms' failure rates differ
// beyond chance: one arm broke, and its latencies, measured on the requests
// that survived, are not comparable with the other's.
var ErrArmBroken = errors.New("an arm broke: the failure rates differ beyond chance")

// Err returns the outcome as an error: a *compare.RegressionError when a gate
// failed, an error wrapping ErrArmBroken when the failure rates differ
// beyond chance (without a failed gate), nil otherwise.
func (r *Result) Err() error {
	var failed []compare.GateResult
	for _, g := range r.Gates {
		if g.Failed {
			failed = append(failed, g)
		}
	}
	if len(failed) > 0 {
		return &compare.RegressionError{Failed: failed}
	}
	if r.Broken != "" {
		return fmt.Errorf("abtest: %w: %s", ErrArmBroken, r.Broken)
	}
	return nil
}

// refuse withholds every verdict of r for reason: the overall verdict
// states the refusal, each metric's says there is none, and the gates are
// not judged, so no output shows the comparison that was refused.
func (r *Result) refuse(reason string) {
	r.Refused = reason
	r.Verdict = "no verdict: " + reason
	r.Significant = false
	r.Gates = nil
	for i := range r.Metrics {
		r.Metrics[i].Verdict = noVerdict
	}
	r.Throughput.refuse()
}

// noVerdict is a metric's verdict when the whole result is refused.
const noVerdict = "no verdict"

// analyse fills the per-arm counts, the metric comparisons, the gates and
// the verdict.
func analyse(res *Result, opts stats.Options, gates []compare.Gate) {
	valuesA := countArm(res.A, res.IncludeRamp)
	valuesB := countArm(res.B, res.IncludeRamp)
	// The counts come from compare.Usable, so they are consistent.
	res.Failures, _ = stats.CompareFailures(res.A.Failed, res.A.Requests, res.B.Failed, res.B.Requests)
	if f := res.Failures; f.Differ(res.Alpha) {
		more, less := "A", "B"
		if f.RateB > f.RateA {
			more, less = "B", "A"
		}
		res.Broken = fmt.Sprintf("%s fails more often than %s beyond chance: A %s vs B %s failed, fisher p %s",
			more, less, compare.FormatFailures(f.FailedA, f.TotalA), compare.FormatFailures(f.FailedB, f.TotalB),
			strconv.FormatFloat(f.P, 'g', 3, 64))
		res.Significant = true
	}
	for _, a := range []*ArmResult{res.A, res.B} {
		if a.Client != nil && (a.Client.Saturated || a.Client.Warning != "") {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s", a.Name, a.Client.Text()))
		}
		if a.Failed > 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d of %d measured requests failed and are left out%s",
				a.Name, a.Failed, a.Requests, firstErrorText(a)))
		}
	}
	// A metric whose test failed is left untested with the error among its
	// warnings: after minutes of measuring, an A/B run reports rather than
	// fails, so the error itself is not needed.
	var samples []compare.Samples
	for i, m := range Metrics() {
		if len(valuesA[i]) > 0 || len(valuesB[i]) > 0 { // as compare.Analyze: a metric these runs lack
			samples = append(samples, compare.Samples{Metric: m, A: valuesA[i], B: valuesB[i]})
		}
	}
	rows, _ := compare.AnalyzeSamples(samples, opts)
	for _, row := range rows {
		mr := MetricResult{Row: row}
		mr.Verdict = metricVerdict(mr)
		res.Significant = res.Significant || mr.Significant
		res.Metrics = append(res.Metrics, mr)
	}
	for _, g := range gates {
		res.Gates = append(res.Gates, compare.EvaluateGate(g, rows, res.Alpha))
	}
	if len(gates) > 0 {
		res.Gates = append(res.Gates, compare.EvaluateFailures(res.Failures, res.Alpha))
	}
	res.Verdict = overallVerdict(res)
}

// metricVerdict states one metric's outcome. Larger is worse for every
// compared metric, so a larger B is "slower".
func metricVerdict(mr MetricResult) string {
	switch {
	case !mr.Tested:
		return "not tested"
	case !mr.Significant:
		return "no significant difference"
	}
	d := mr.Comparison.DeltaPct
	p := "holm p=" + report.FormatP(mr.HolmP)
	switch {
	case math.IsNaN(d):
		return fmt.Sprintf("B differs (%s)", p)
	case d > 0:
		return fmt.Sprintf("B slower by %.1f%% (%s)", d, p)
	case d < 0:
		return fmt.Sprintf("B faster by %.1f%% (%s)", -d, p)
	}
	return fmt.Sprintf("B differs (%s)", p)
}

// overallVerdict joins the metric verdicts into one sentence.
func overallVerdict(res *Result) string {
	var sig, tested []string
	for _, mr := range res.Metrics {
		if mr.Tested {
			tested = append(tested, mr.Metric.Name)
		}
		if mr.Significant {
			sig = append(sig, mr.Metric.Name+": "+mr.Verdict)
		}
	}
	switch {
	case res.Broken != "":
		return "no latency verdict: " + res.Broken
	case len(tested) == 0:
		return "not tested: too few successful requests"
	case len(sig) == 0:
		return fmt.Sprintf("no significant difference at alpha %g (%s)", res.Alpha, strings.Join(tested, ", "))
	}
	return strings.Join(sig, "; ")
}
