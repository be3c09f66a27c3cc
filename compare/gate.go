package compare

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Gate is a regression limit: the run fails when Metric got significantly
// larger (worse) in B than in A by more than MaxPct percent of A's mean.
type Gate struct {
	Metric string
	MaxPct float64
}

// String returns the flag form, "ttfp:5".
func (g Gate) String() string { return g.Metric + ":" + strconv.FormatFloat(g.MaxPct, 'g', -1, 64) }

// ParseGate parses "METRIC:PCT" (for example "ttfp:5" or "e2e:10", an
// optional trailing "%" is accepted). PCT must be a finite number >= 0.
func ParseGate(s string) (Gate, error) {
	name, pct, ok := strings.Cut(s, ":")
	if !ok {
		return Gate{}, fmt.Errorf("regression gate %q: want METRIC:PCT, for example ttfp:5", s)
	}
	m, err := LookupMetric(name)
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
// The command maps it to exit status 1.
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

// evaluate judges gate g against the rows. A gate on a metric that could not
// be tested fails: a CI gate that cannot see its metric must not pass quietly.
func evaluate(g Gate, rows []Row, alpha float64) GateResult {
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
