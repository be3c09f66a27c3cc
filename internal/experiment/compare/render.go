package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// Formats returns the output formats Write accepts.
func Formats() []string {
	return []string{report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV}
}

// Write renders the result in format: "table" and "markdown" through
// package report (Tables), "csv" as CSVTable, "json" as documented at
// WriteJSON. The CSV format has no room for notes; callers print Notes
// elsewhere (stderr).
func (r *Result) Write(w io.Writer, format string) error {
	if format == report.FormatJSON {
		return r.WriteJSON(w)
	}
	if err := report.CheckFormat(format, Formats()...); err != nil {
		return fmt.Errorf("compare: %w", err)
	}
	if format == report.FormatCSV {
		return report.Render(w, format, r.CSVTable())
	}
	return report.Render(w, format, r.Tables()...)
}

// CSVTable is the comparison for programs: one header row and one row per
// metric, every figure a plain number in the metric's display unit (empty
// when undefined): metric, unit, n_a, n_b, mean_a, mean_b, delta_pct,
// significant, welch_p, utest_p, utest_method, holm_p, mde_pct, then
// p<P>_a and p<P>_b for each requested percentile.
func (r *Result) CSVTable() report.Table {
	t := report.Table{Header: []string{"metric", "unit", "n_a", "n_b", "mean_a", "mean_b", "delta_pct", "significant",
		"welch_p", "utest_p", "utest_method", "holm_p", "mde_pct"}}
	for _, p := range r.Percentiles {
		label := "p" + strconv.FormatFloat(p, 'g', -1, 64)
		t.Header = append(t.Header, label+"_a", label+"_b")
	}
	num := func(v float64) string {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	for _, row := range r.Rows {
		m := row.Metric
		c := row.Comparison
		nan := math.NaN()
		delta, welchP, utestP, mde, method := nan, nan, nan, nan, ""
		if row.Tested {
			delta, welchP, utestP, mde, method = c.DeltaPct, c.Welch.P, c.MannWhitneyP, c.MDEPct, string(c.MannWhitneyMethod)
		}
		cells := []string{m.Name, m.Display, strconv.Itoa(row.A.N), strconv.Itoa(row.B.N),
			num(row.A.Mean * m.Scale), num(row.B.Mean * m.Scale), num(delta), strconv.FormatBool(row.Significant),
			num(welchP), num(utestP), method, num(row.HolmP), num(mde)}
		for _, p := range r.Percentiles {
			va, _ := row.A.Percentile(p)
			vb, _ := row.B.Percentile(p)
			cells = append(cells, num(va*m.Scale), num(vb*m.Scale))
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// Tables returns the comparison table and, when percentiles were requested,
// a per-arm percentile table (PercentileTable), then, when both results
// files have scrape lines, the per-stage comparison of the runs'
// breakdowns (breakdown.Diff.Table). Times are shown in
// milliseconds (audio duration in seconds), RTFs as ratios; the unit is in
// the metric's label. The text table fits in 100 columns: explanations,
// warnings and gate verdicts are the notes beneath it.
//
// Comparison columns: metric, n (A/B), A mean, B mean, delta, welch p,
// utest p, holm p, MDE. Delta is 100*(mean B - mean A)/mean A, or "~" when
// the change is not significant (holm p >= alpha), or "-" when the metric
// was not tested. MDE is the change of the mean these samples could detect
// with Power at alpha, in percent of mean A. Medians are the p50 of the
// percentile table.
func (r *Result) Tables() []report.Table {
	cmp := report.Table{
		Title:  fmt.Sprintf("A: %s  vs  B: %s", r.A.Name, r.B.Name),
		Header: []string{"metric", "n (A/B)", "A mean", "B mean", "delta", "welch p", "utest p", "holm p", "MDE"},
		Notes:  r.Notes(),
	}
	for _, row := range r.Rows {
		m := row.Metric
		cells := []string{m.Label(), fmt.Sprintf("%d/%d", row.A.N, row.B.N),
			report.FormatValue(row.A.Mean * m.Scale), report.FormatValue(row.B.Mean * m.Scale)}
		if !row.Tested {
			cells = append(cells, "-", "-", "-", "-", "-")
		} else {
			c := row.Comparison
			cells = append(cells, deltaCell(row), report.FormatP(c.Welch.P), report.FormatP(c.MannWhitneyP), report.FormatP(row.HolmP), report.FormatPct(c.MDEPct))
		}
		cmp.Rows = append(cmp.Rows, cells)
	}
	tables := []report.Table{cmp}
	if len(r.Percentiles) > 0 {
		tables = append(tables, PercentileTable(r.Rows, r.Percentiles))
	}
	if r.Breakdown != nil {
		tables = append(tables, r.Breakdown.Table())
	}
	return tables
}

// PercentileTable shows the requested percentiles of both arms side by side
// for every row (A p50, B p50, A p95, ...), in the metric's display unit.
// `omnibench compare` and `omnibench ab` print it under their comparison.
func PercentileTable(rows []Row, percentiles []float64) report.Table {
	pct := report.Table{Title: "Percentiles", Header: []string{"metric"}}
	for _, p := range percentiles {
		label := "p" + strconv.FormatFloat(p, 'g', -1, 64)
		pct.Header = append(pct.Header, "A "+label, "B "+label)
	}
	for _, row := range rows {
		cells := []string{row.Metric.Label()}
		for _, p := range percentiles {
			va, _ := row.A.Percentile(p)
			vb, _ := row.B.Percentile(p)
			cells = append(cells, report.FormatValue(va*row.Metric.Scale), report.FormatValue(vb*row.Metric.Scale))
		}
		pct.Rows = append(pct.Rows, cells)
	}
	return pct
}

// Notes returns the lines printed under the comparison table: what was
// compared, how to read it, the failures, the warnings and the gate
// verdicts.
func (r *Result) Notes() []string {
	notes := []string{
		armNote("A", r.A), armNote("B", r.B),
		fmt.Sprintf("delta = 100*(mean B - mean A)/mean A; ~ = not significant (holm p >= alpha %g)", r.Alpha),
		fmt.Sprintf("%s decides; holm = its p adjusted by Holm over the %d metrics tested", r.Test, r.Tested()),
	}
	notes = append(notes, MethodNotes(r.Rows)...)
	notes = append(notes,
		fmt.Sprintf("MDE = smallest change in the mean detectable with %g%% power at alpha %g, in %% of mean A", 100*r.Power, r.Alpha),
		r.failuresNote())
	for _, w := range r.Warnings {
		notes = append(notes, "warning: "+w)
	}
	for _, row := range r.Rows {
		for _, w := range row.Warnings {
			notes = append(notes, fmt.Sprintf("warning: %s: %s", row.Metric.Name, w))
		}
	}
	if err := r.Refusal(); err != nil {
		return append(notes, "gates: "+err.Error()) // not judged: no gate shows a verdict
	}
	for _, g := range r.Gates {
		verdict := "ok"
		if g.Failed {
			verdict = "FAIL"
		}
		notes = append(notes, fmt.Sprintf("gate %s: %s: %s", g.Gate, verdict, g.Reason))
	}
	return notes
}

// MethodNotes say how the Mann–Whitney p-values of the tested rows were
// computed: one line when one method served every row ("utest =
// Mann-Whitney U test, p exact"), else one line per method naming its rows.
func MethodNotes(rows []Row) []string {
	var order []stats.MannWhitneyMethod
	byMethod := map[stats.MannWhitneyMethod][]string{}
	for _, row := range rows {
		if !row.Tested {
			continue
		}
		m := row.Comparison.MannWhitneyMethod
		if _, seen := byMethod[m]; !seen {
			order = append(order, m)
		}
		byMethod[m] = append(byMethod[m], row.Metric.Name)
	}
	switch len(order) {
	case 0:
		return nil
	case 1:
		return []string{"utest = Mann-Whitney U test, p " + string(order[0])}
	}
	notes := []string{"utest = Mann-Whitney U test, p by method:"}
	for _, m := range order {
		notes = append(notes, fmt.Sprintf("  %s: %s", m, strings.Join(byMethod[m], ", ")))
	}
	return notes
}

// failuresNote states both arms' failures and Fisher's exact test of them.
func (r *Result) failuresNote() string {
	f := r.Failures
	return fmt.Sprintf("failed requests: A %s, B %s; fisher exact p %s", FormatFailures(f.FailedA, f.TotalA), FormatFailures(f.FailedB, f.TotalB), formatP(f.P))
}

// armNote counts what was compared of one run (the title names the file).
func armNote(role string, a Arm) string {
	s := fmt.Sprintf("%s: %d of %d requests compared (%d failed, %d warm-up left out)", role, a.Used, a.Records, a.Failed, a.Warmup)
	if a.Ramp > 0 {
		s += fmt.Sprintf("; %d ramp-phase left out (--include-ramp keeps them)", a.Ramp)
	}
	if a.Saturated() {
		s += "; SATURATED load generator"
	}
	if a.Scenario != "" {
		s += "; scenario " + a.Scenario
	}
	return s
}

// deltaCell is the delta column of a tested row: "~" when the change is
// not significant.
func deltaCell(row Row) string {
	if !row.Significant {
		return "~"
	}
	return FormatDelta(row.Comparison.DeltaPct)
}

// FormatDelta prints a relative change in percent with its sign and two
// decimals ("+3.14%"), "n/a" when undefined (mean of A is 0), and "0.00%"
// without a sign for a change that rounds to zero (floating residue such
// as -8.88e-16 is no change). It is the delta of the tables of `omnibench
// compare` and `omnibench ab`.
func FormatDelta(d float64) string {
	switch {
	case math.IsNaN(d):
		return "n/a"
	case math.IsInf(d, 0):
		return fmt.Sprint(d)
	case math.Abs(d) < 0.005:
		return "0.00%"
	}
	return fmt.Sprintf("%+.2f%%", d)
}

// JSON output, schema version 1. Field names are stable; new fields may be
// added. Values are in record units (unit "s" or "ratio"), not the table's
// milliseconds. Statistics that are undefined (NaN) or infinite are null.
type jsonResult struct {
	SchemaVersion int          `json:"schema_version"` // 1
	A             jsonArm      `json:"a"`
	B             jsonArm      `json:"b"`
	Alpha         float64      `json:"alpha"`
	Power         float64      `json:"power"`
	Test          string       `json:"test"`       // "welch" or "utest": decides p and significant
	Correction    string       `json:"correction"` // "holm" over the metrics tested
	Metrics       []MetricJSON `json:"metrics"`
	Failures      FailuresJSON `json:"failures"`
	Gates         []jsonGate   `json:"gates,omitempty"`
	Regression    bool         `json:"regression"` // any gate failed (exit status 3)
	// Refused says why the gates gave no verdict (then gates is empty).
	Refused  string   `json:"refused,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
	// Breakdown compares the servers' breakdowns stage by stage, when both
	// files have scrape lines.
	Breakdown *breakdown.Diff `json:"breakdown,omitempty"`
}

// FailuresJSON is the failure-rate comparison of the JSON output of
// `omnibench compare` and `omnibench ab`: failed and measured requests of
// each arm, the rates (null without requests) and Fisher's exact p.
type FailuresJSON struct {
	FailedA int         `json:"failed_a"`
	TotalA  int         `json:"total_a"`
	RateA   stats.Float `json:"rate_a"`
	FailedB int         `json:"failed_b"`
	TotalB  int         `json:"total_b"`
	RateB   stats.Float `json:"rate_b"`
	FisherP stats.Float `json:"fisher_p"` // two-sided
}

// NewFailuresJSON converts a failure-rate comparison.
func NewFailuresJSON(f stats.FailureRates) FailuresJSON {
	return FailuresJSON{FailedA: f.FailedA, TotalA: f.TotalA, RateA: stats.Float(f.RateA),
		FailedB: f.FailedB, TotalB: f.TotalB, RateB: stats.Float(f.RateB), FisherP: stats.Float(f.P)}
}

type jsonArm struct {
	Path     string `json:"path"`
	Scenario string `json:"scenario,omitempty"`
	Target   string `json:"target,omitempty"`
	Records  int    `json:"records"`
	Used     int    `json:"used"`
	Failed   int    `json:"failed"`
	Warmup   int    `json:"warmup"`
	Ramp     int    `json:"ramp,omitempty"`
	// ClientSaturated is the run's load-generator verdict; absent when the
	// results file does not carry it.
	ClientSaturated *bool `json:"client_saturated,omitempty"`
}

// MetricJSON is one metric of the JSON output of `omnibench compare` and
// `omnibench ab` (schema version 1); Row.JSON builds it. Values are in
// record units; undefined or infinite statistics are null.
type MetricJSON struct {
	Metric      string        `json:"metric"`
	Field       string        `json:"field"`
	Unit        string        `json:"unit"`
	A           stats.Summary `json:"a"`
	B           stats.Summary `json:"b"`
	Tested      bool          `json:"tested"`
	DeltaPct    stats.Float   `json:"delta_pct"` // 100*(mean B - mean A)/|mean A|
	Welch       *WelchJSON    `json:"welch,omitempty"`
	MannWhitney stats.Float   `json:"mann_whitney_p"`
	// MannWhitneyMethod is "exact", "exact with ties" or "normal
	// approximation with tie and continuity corrections".
	MannWhitneyMethod string      `json:"mann_whitney_method,omitempty"`
	P                 stats.Float `json:"p"`      // of the chosen test, unadjusted
	HolmP             stats.Float `json:"holm_p"` // adjusted
	Significant       bool        `json:"significant"`
	CohensD           stats.Float `json:"cohens_d"` // B relative to A
	HedgesG           stats.Float `json:"hedges_g"`
	MDE               stats.Float `json:"mde"`
	MDEPct            stats.Float `json:"mde_pct"`
	Lag1A             stats.Float `json:"lag1_a"`
	Lag1B             stats.Float `json:"lag1_b"`
	NEffA             stats.Float `json:"n_eff_a"`
	NEffB             stats.Float `json:"n_eff_b"`
	Warnings          []string    `json:"warnings,omitempty"`
}

// WelchJSON is Welch's test of a MetricJSON.
type WelchJSON struct {
	T          stats.Float `json:"t"`
	DF         stats.Float `json:"df"`
	P          stats.Float `json:"p"`
	Diff       stats.Float `json:"diff"` // mean A - mean B
	SE         stats.Float `json:"se"`
	Confidence float64     `json:"confidence"`
	CILow      stats.Float `json:"ci_low"`  // of mean A - mean B
	CIHigh     stats.Float `json:"ci_high"` // of mean A - mean B
	// The same interval for mean B - mean A, the direction of delta_pct.
	CIBMinusALow  stats.Float `json:"ci_b_minus_a_low"`
	CIBMinusAHigh stats.Float `json:"ci_b_minus_a_high"`
}

// JSON returns the row as it stands in the JSON output.
func (row Row) JSON() MetricJSON {
	nan := stats.Float(math.NaN())
	jm := MetricJSON{
		Metric: row.Metric.Name, Field: row.Metric.Field, Unit: row.Metric.Unit,
		A: row.A, B: row.B, Tested: row.Tested, HolmP: stats.Float(row.HolmP), Significant: row.Significant,
		DeltaPct: nan, MannWhitney: nan, P: nan, CohensD: nan, HedgesG: nan, MDE: nan, MDEPct: nan,
		Lag1A: nan, Lag1B: nan, NEffA: nan, NEffB: nan, Warnings: row.Warnings,
	}
	if !row.Tested {
		return jm
	}
	c := row.Comparison
	jm.DeltaPct, jm.MannWhitney, jm.P = stats.Float(c.DeltaPct), stats.Float(c.MannWhitneyP), stats.Float(c.P)
	jm.MannWhitneyMethod = string(c.MannWhitneyMethod)
	jm.CohensD, jm.HedgesG = stats.Float(c.CohensD), stats.Float(c.HedgesG)
	jm.MDE, jm.MDEPct = stats.Float(c.MDE), stats.Float(c.MDEPct)
	jm.Lag1A, jm.Lag1B, jm.NEffA, jm.NEffB = stats.Float(c.Lag1A), stats.Float(c.Lag1B), stats.Float(c.NEffA), stats.Float(c.NEffB)
	lo, hi := CIBMinusA(c.Welch)
	jm.Welch = &WelchJSON{
		T: stats.Float(c.Welch.T), DF: stats.Float(c.Welch.DF), P: stats.Float(c.Welch.P),
		Diff: stats.Float(c.Welch.Diff), SE: stats.Float(c.Welch.SE), Confidence: c.Welch.Confidence,
		CILow: stats.Float(c.Welch.CILow), CIHigh: stats.Float(c.Welch.CIHigh),
		CIBMinusALow: stats.Float(lo), CIBMinusAHigh: stats.Float(hi),
	}
	return jm
}

// CIBMinusA turns Welch's interval for mean(A)-mean(B) into one for
// mean(B)-mean(A), the direction of the reported delta.
func CIBMinusA(w stats.WelchResult) (lo, hi float64) { return -w.CIHigh, -w.CILow }

type jsonGate struct {
	Metric      string      `json:"metric"`
	MaxPct      float64     `json:"max_pct"`
	DeltaPct    stats.Float `json:"delta_pct"`
	HolmP       stats.Float `json:"holm_p"`
	Significant bool        `json:"significant"`
	Failed      bool        `json:"failed"`
	Reason      string      `json:"reason"`
}

// WriteJSON writes the result as one indented JSON object (schema_version 1):
// a, b (path, scenario, target, records, used, failed, warmup); alpha, power,
// test, correction; metrics[] (metric, field, unit, a and b summaries, tested,
// delta_pct, welch{t, df, p, diff, se, confidence, ci_low, ci_high,
// ci_b_minus_a_low, ci_b_minus_a_high},
// mann_whitney_p, mann_whitney_method, p, holm_p, significant, cohens_d, hedges_g, mde, mde_pct,
// lag1_a, lag1_b, n_eff_a, n_eff_b, warnings); failures (failed_a, total_a,
// rate_a, failed_b, total_b, rate_b, fisher_p); gates[] (metric, max_pct,
// delta_pct, holm_p, significant, failed, reason); regression; warnings;
// breakdown (pipeline and stages[], each stage, replica and a and b means:
// requests, queue_s, prefill_s, decode_s, e2e_s; or reasons) when both
// files have scrape lines.
func (r *Result) WriteJSON(w io.Writer) error {
	out := jsonResult{
		SchemaVersion: 1,
		A:             toJSONArm(r.A), B: toJSONArm(r.B),
		Alpha: r.Alpha, Power: r.Power, Test: r.Test.String(), Correction: "holm",
		Metrics:   make([]MetricJSON, 0, len(r.Rows)),
		Failures:  NewFailuresJSON(r.Failures),
		Warnings:  r.Warnings,
		Breakdown: r.Breakdown,
	}
	for _, row := range r.Rows {
		out.Metrics = append(out.Metrics, row.JSON())
	}
	gates := r.Gates
	if err := r.Refusal(); err != nil {
		out.Refused, gates = err.Error(), nil // not judged: no gate shows a verdict
	}
	for _, g := range gates {
		out.Regression = out.Regression || g.Failed
		out.Gates = append(out.Gates, jsonGate{
			Metric: g.Metric, MaxPct: g.MaxPct, DeltaPct: stats.Float(g.DeltaPct), HolmP: stats.Float(g.HolmP),
			Significant: g.Significant, Failed: g.Failed, Reason: g.Reason,
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("compare: write json: %w", err)
	}
	return nil
}

func toJSONArm(a Arm) jsonArm {
	j := jsonArm{Path: a.Name, Scenario: a.Scenario, Target: a.Target, Records: a.Records, Used: a.Used, Failed: a.Failed, Warmup: a.Warmup, Ramp: a.Ramp}
	if a.Client != nil {
		j.ClientSaturated = &a.Client.Saturated
	}
	return j
}
