package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/stats"
)

// Gate is a regression limit: the run fails when Metric got significantly
// larger (worse) in B than in A by more than MaxPct percent of A's mean.
type Gate struct {
	Metric string
	MaxPct float64
}

// String returns the flag form, "ttfp:5" ("failure_rate" for the
// failure-rate gate, which has no limit).
func (g Gate) String() string {
	if g.Metric == FailureRateGate {
		return g.Metric
	}
	return g.Metric + ":" + strconv.FormatFloat(g.MaxPct, 'g', -1, 64)
}

// FailureRateGate names the gate every regression check adds to the metric
// gates: B must not fail more often than A beyond chance (see
// EvaluateFailures).
const FailureRateGate = "failure_rate"

// ParseGate parses "METRIC:PCT" (for example "ttfp:5" or "e2e:10", an
// optional trailing "%" is accepted) for a metric of Metrics. PCT must be a
// finite number >= 0.
func ParseGate(s string) (Gate, error) { return ParseGateFor(s, Metrics()) }

// ParseGateFor parses "METRIC:PCT" for one of metrics (`omnibench ab`
// compares other metrics than `omnibench compare`).
func ParseGateFor(s string, metrics []Metric) (Gate, error) {
	name, pct, ok := strings.Cut(s, ":")
	if !ok {
		return Gate{}, fmt.Errorf("regression gate %q: want METRIC:PCT, for example ttfp:5", s)
	}
	m, err := lookupMetric(name, metrics)
	if err != nil {
		return Gate{}, fmt.Errorf("regression gate %q: %w", s, err)
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(pct), "%"), 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return Gate{}, fmt.Errorf("regression gate %q: percentage %q is not a number >= 0", s, pct)
	}
	return Gate{Metric: m.Name, MaxPct: v}, nil
}

// GateResult is the verdict of one gate.
type GateResult struct {
	Gate
	DeltaPct    float64 // B relative to A, percent (NaN when not tested)
	HolmP       float64 // NaN when not tested
	Significant bool
	Failed      bool
	Reason      string // why it failed or passed, for people
}

// RegressionError is returned by Result.Err when at least one gate failed.
// The command maps it to exit status 3 (a gate missed).
type RegressionError struct {
	Failed []GateResult
}

func (e *RegressionError) Error() string {
	parts := make([]string, len(e.Failed))
	for i, g := range e.Failed {
		parts[i] = g.Metric + ": " + g.Reason
	}
	return "regression: " + strings.Join(parts, "; ")
}

// EvaluateGate judges gate g against the rows of Analyze at level alpha. A
// gate on a metric that could not be tested fails: a CI gate that cannot
// see its metric must not pass quietly.
func EvaluateGate(g Gate, rows []Row, alpha float64) GateResult {
	gr := GateResult{Gate: g, DeltaPct: math.NaN(), HolmP: math.NaN()}
	var row *Row
	for i := range rows {
		if rows[i].Metric.Name == g.Metric {
			row = &rows[i]
		}
	}
	switch {
	case row == nil:
		gr.Failed, gr.Reason = true, "no samples in either run: cannot check"
		return gr
	case !row.Tested:
		gr.Failed = true
		gr.Reason = fmt.Sprintf("not tested (A %d, B %d samples; need 2 each): cannot check", row.A.N, row.B.N)
		return gr
	}
	gr.DeltaPct, gr.HolmP, gr.Significant = row.Comparison.DeltaPct, row.HolmP, row.Significant
	switch {
	case !row.Significant:
		gr.Reason = fmt.Sprintf("no significant change (holm p %.3g >= alpha %g)", row.HolmP, alpha)
	case math.IsNaN(gr.DeltaPct):
		gr.Failed = true
		gr.Reason = "significant change but mean of A is 0: relative change undefined"
	case gr.DeltaPct > g.MaxPct:
		gr.Failed = true
		gr.Reason = fmt.Sprintf("%+.2f%% worse, limit %g%% (holm p %.3g)", gr.DeltaPct, g.MaxPct, row.HolmP)
	default:
		gr.Reason = fmt.Sprintf("%+.2f%% within limit %g%% (holm p %.3g)", gr.DeltaPct, g.MaxPct, row.HolmP)
	}
	return gr
}

// EvaluateFailures is the failure-rate gate: it fails when B's failure rate
// is higher than A's beyond chance, Fisher's exact test (two-sided) giving
// p < alpha. There is no tolerance: a gate that lets a server fail more
// often "by a little" would pass a server that fails under load. Fewer
// failures in B, or a difference within chance, passes. DeltaPct is the
// change of the failure rate in percentage points; HolmP is NaN (the test is
// not in the Holm family of the metrics).
func EvaluateFailures(f stats.FailureRates, alpha float64) GateResult {
	gr := GateResult{Gate: Gate{Metric: FailureRateGate}, DeltaPct: 100 * (f.RateB - f.RateA), HolmP: math.NaN()}
	gr.Significant = f.Differ(alpha)
	counts := fmt.Sprintf("%s vs A %s, fisher p %s", FormatFailures(f.FailedB, f.TotalB), FormatFailures(f.FailedA, f.TotalA), formatP(f.P))
	switch {
	case f.BWorse(alpha):
		gr.Failed = true
		gr.Reason = "B fails more often: " + counts
	case gr.Significant:
		gr.Reason = "B fails less often: " + counts
	default:
		gr.Reason = "no significant change: " + counts
	}
	return gr
}

// FormatFailures prints failed of total requests with the rate: "70.0%
// (21/30)", "0/0" when there were none.
func FormatFailures(failed, total int) string {
	if total == 0 {
		return fmt.Sprintf("%d/%d", failed, total)
	}
	return fmt.Sprintf("%.1f%% (%d/%d)", 100*float64(failed)/float64(total), failed, total)
}

// formatP prints a p-value in a sentence: three significant digits.
func formatP(p float64) string { return strconv.FormatFloat(p, 'g', 3, 64) }
