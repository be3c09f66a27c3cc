package abtest

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/report"
)

// Formats returns the output formats Write accepts.
func Formats() []string {
	return []string{report.FormatTable, report.FormatMarkdown, report.FormatJSON}
}

// Write renders the result: "table" and "markdown" through package report
// (Tables), "json" as documented at WriteJSON.
func (r *Result) Write(w io.Writer, format string) error {
	if err := report.CheckFormat(format, Formats()...); err != nil {
		return fmt.Errorf("abtest: %w", err)
	}
	if format == report.FormatJSON {
		return r.WriteJSON(w)
	}
	return report.Render(w, format, r.Tables()...)
}

// Tables returns four tables, each fitting in 100 columns: the verdict (per
// metric n, both means, the delta, the Holm-adjusted p and the verdict, and
// a row of each arm's failed requests with Fisher's exact p); the tests
// (Welch's t, df and p, the Mann–Whitney p, the confidence interval of
// B - A, Hedges' g, the minimum detectable effect); the percentiles of both
// arms; and the /metrics size of each arm. Times are in milliseconds, RTFs
// ratios; the unit is in the metric's label. Explanations are the notes
// beneath each table. In throughput mode the two tables of
// throughputTables come first.
func (r *Result) Tables() []report.Table {
	sum := report.Table{
		Title:  "A/B verdict: B against A",
		Header: []string{"metric", "n (A/B)", "A mean", "B mean", "delta", "holm p", "verdict"},
		Notes:  r.summaryNotes(),
	}
	conf := 100 * (1 - r.Alpha)
	tests := report.Table{
		Title:  "Tests",
		Header: []string{"metric", "welch t", "df", "welch p", "utest p", fmt.Sprintf("%g%% CI of B-A", conf), "hedges g", "MDE"},
		Notes:  r.testNotes(),
	}
	var rows []compare.Row
	for _, mr := range r.Metrics {
		m := mr.Metric
		rows = append(rows, mr.Row)
		row := []string{m.Label(), fmt.Sprintf("%d/%d", mr.A.N, mr.B.N),
			report.FormatValue(mr.A.Mean * m.Scale), report.FormatValue(mr.B.Mean * m.Scale)}
		if !mr.Tested {
			sum.Rows = append(sum.Rows, append(row, "-", "-", r.shortVerdict(mr)))
			tests.Rows = append(tests.Rows, []string{m.Label(), "-", "-", "-", "-", "-", "-", "-"})
			continue
		}
		c := mr.Comparison
		sum.Rows = append(sum.Rows, append(row, compare.FormatDelta(c.DeltaPct), report.FormatP(mr.HolmP), r.shortVerdict(mr)))
		lo, hi := compare.CIBMinusA(c.Welch)
		tests.Rows = append(tests.Rows, []string{
			m.Label(),
			formatStat(c.Welch.T), formatStat(c.Welch.DF), report.FormatP(c.Welch.P), report.FormatP(c.MannWhitneyP),
			"[" + report.FormatValue(lo*m.Scale) + ", " + report.FormatValue(hi*m.Scale) + "]",
			formatStat(c.HedgesG), report.FormatPct(c.MDEPct),
		})
	}
	sum.Rows = append(sum.Rows, r.failuresRow())
	tables := []report.Table{sum, tests, compare.PercentileTable(rows, r.Percentiles), r.metricsTable()}
	return append(r.throughputTables(), tables...)
}

// failuresRow is the verdict table's row of failed requests: count and rate
// of each arm, the change in percentage points, Fisher's exact p (not in
// the Holm family) and which arm fails more often, if beyond chance.
func (r *Result) failuresRow() []string {
	f := r.Failures
	verdict := "~"
	switch {
	case r.Refused != "":
		verdict = noVerdict
	case f.Differ(r.Alpha):
		verdict = "A fails more"
		if f.RateB > f.RateA {
			verdict = "B fails more"
		}
	}
	delta := "-"
	if !math.IsNaN(f.RateA) && !math.IsNaN(f.RateB) {
		delta = "0 pp"
		if d := 100 * (f.RateB - f.RateA); math.Abs(d) >= 0.05 {
			delta = fmt.Sprintf("%+.1f pp", d)
		}
	}
	return []string{"failed", fmt.Sprintf("%d/%d", f.TotalA, f.TotalB), compare.FormatFailures(f.FailedA, f.TotalA),
		compare.FormatFailures(f.FailedB, f.TotalB), delta, report.FormatP(f.P) + " (fisher)", verdict}
}

// shortVerdict is a metric's verdict in a word or two; the sentence is in
// MetricResult.Verdict and the JSON.
func (r *Result) shortVerdict(mr MetricResult) string {
	switch {
	case r.Refused != "":
		return noVerdict
	case !mr.Tested:
		return "not tested"
	case !mr.Significant:
		return "~"
	case mr.Comparison.DeltaPct > 0:
		return "B slower"
	case mr.Comparison.DeltaPct < 0:
		return "B faster"
	}
	return "B differs"
}

func (r *Result) summaryNotes() []string {
	notes := []string{
		"verdict: " + r.Verdict,
		fmt.Sprintf("delta = 100*(mean B - mean A)/mean A; ~ = not significant at alpha %g", r.Alpha),
		fmt.Sprintf("holm p = p of the %s test adjusted by Holm over the %d metrics tested", r.Test, r.tested()),
		"failed: measured requests that failed, Fisher's exact test of the two rates (not Holm-adjusted)",
	}
	for _, a := range []*ArmResult{r.A, r.B} {
		notes = append(notes, armNotes(a)...)
	}
	order := strings.Join(r.Order, " ")
	notes = append(notes, fmt.Sprintf("method: %d rounds per arm (%s), %d warm-up per round, %s",
		r.Rounds, order, r.Warmup, loadText(r)))
	workload := fmt.Sprintf("workload: seed %d, the same in both arms", r.Seed)
	if r.Scenario != "" {
		workload = fmt.Sprintf("workload: scenario %s, seed %d, the same in both arms", r.Scenario, r.Seed)
	}
	notes = append(notes, workload)
	for _, g := range r.Gates {
		verdict := "ok"
		if g.Failed {
			verdict = "FAIL"
		}
		notes = append(notes, fmt.Sprintf("gate %s: %s: %s", g.Gate, verdict, g.Reason))
	}
	if r.Interrupted {
		notes = append(notes, "INTERRUPTED: figures cover the requests measured before the interruption")
	}
	return notes
}

func loadText(r *Result) string {
	if r.Rate > 0 {
		return fmt.Sprintf("open loop at %g/s", r.Rate)
	}
	if r.Concurrency == 1 {
		return "sequential requests"
	}
	return fmt.Sprintf("%d concurrent requests", r.Concurrency)
}

// armNotes describe one arm, a line per fact.
func armNotes(a *ArmResult) []string {
	first := fmt.Sprintf("%s = %s", a.Name, a.Label)
	if a.Target != "" {
		first += " at " + a.Target
	}
	notes := []string{first,
		fmt.Sprintf("%s: %d of %d measured requests used (%d failed, %d warm-up left out)", a.Name, a.Used, a.Requests, a.Failed, a.Warmup)}
	if a.Stats != "" {
		notes = append(notes, fmt.Sprintf("%s: stats %s", a.Name, a.Stats))
	}
	if a.ServerStarts > 0 {
		notes = append(notes, fmt.Sprintf("%s: server started %d time(s), log %s", a.Name, a.ServerStarts, a.ServerLog))
	}
	if a.ResultsFile != "" {
		notes = append(notes, fmt.Sprintf("%s: records in %s", a.Name, a.ResultsFile))
	}
	return notes
}

func (r *Result) testNotes() []string {
	notes := []string{
		"welch t and CI follow scipy's ttest_ind(a, b, equal_var=False); hedges g is B relative to A",
		fmt.Sprintf("MDE = smallest change in the mean detectable with %g%% power at alpha %g, in %% of mean A", 100*r.Power, r.Alpha),
	}
	var rows []compare.Row
	for _, mr := range r.Metrics {
		rows = append(rows, mr.Row)
	}
	notes = append(notes, compare.MethodNotes(rows)...)
	for _, w := range r.Warnings {
		notes = append(notes, "warning: "+w)
	}
	for _, mr := range r.Metrics {
		for _, w := range mr.Warnings {
			notes = append(notes, fmt.Sprintf("warning: %s: %s", mr.Metric.Name, w))
		}
	}
	return notes
}

func (r *Result) tested() int {
	n := 0
	for _, mr := range r.Metrics {
		if mr.Tested {
			n++
		}
	}
	return n
}

// metricsTable compares the /metrics size of the arms.
func (r *Result) metricsTable() report.Table {
	t := report.Table{Title: "/metrics size (text format, after each arm's last round)", Header: []string{"", "A", "B", "B - A"}}
	ma, mb := r.A.Metrics, r.B.Metrics
	cell := func(m *MetricsSize, f func(*MetricsSize) int) (string, int, bool) {
		if m == nil || (m.Error != "" && m.Lines == 0) {
			return "-", 0, false
		}
		v := f(m)
		return strconv.Itoa(v), v, true
	}
	rows := []struct {
		name string
		f    func(*MetricsSize) int
	}{
		{"lines", func(m *MetricsSize) int { return m.Lines }},
		{"bytes", func(m *MetricsSize) int { return m.Bytes }},
		{"families", func(m *MetricsSize) int { return m.Families }},
		{"series", func(m *MetricsSize) int { return m.Series }},
		{"empty families", func(m *MetricsSize) int { return len(m.EmptyFamilies) }},
		{"pipeline families", func(m *MetricsSize) int { return m.PipelineFamilies }},
		{"upstream vllm: families", func(m *MetricsSize) int { return m.UpstreamFamilies }},
	}
	for _, row := range rows {
		sa, va, oka := cell(ma, row.f)
		sb, vb, okb := cell(mb, row.f)
		d := "-"
		if oka && okb {
			d = fmt.Sprintf("%+d", vb-va)
		}
		t.Rows = append(t.Rows, []string{row.name, sa, sb, d})
	}
	for _, a := range []*ArmResult{r.A, r.B} {
		m := a.Metrics
		switch {
		case m == nil:
			t.Notes = append(t.Notes, a.Name+": not scraped (the run ended before the arm's last round)")
			continue
		case m.Error != "":
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %s: %s", a.Name, m.URL, m.Error))
		}
		if len(m.EmptyFamilies) > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s: %d empty families:", a.Name, len(m.EmptyFamilies)))
			t.Notes = append(t.Notes, listLines(m.EmptyFamilies, "  ", 96)...)
		}
		if m.Snapshot != "" {
			t.Notes = append(t.Notes, fmt.Sprintf("%s snapshot: %s", a.Name, m.Snapshot))
		}
	}
	return t
}

// listLines joins names with ", " into lines of at most width characters
// (a longer name stands alone), each starting with indent.
func listLines(names []string, indent string, width int) []string {
	var lines []string
	cur := ""
	for _, n := range names {
		switch {
		case cur == "":
			cur = indent + n
		case len(cur)+2+len(n) > width:
			lines = append(lines, cur+",")
			cur = indent + n
		default:
			cur += ", " + n
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// formatStat prints a test statistic or df with three decimals.
func formatStat(v float64) string {
	switch {
	case math.IsNaN(v):
		return "-"
	case math.IsInf(v, 0):
		return fmt.Sprint(v)
	case math.Abs(v) < 0.0005:
		return "0.000" // rounds to zero: no sign (residue such as -8.88e-16)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

// JSON output, schema version 1. Field names are stable; new fields may be
// added. Values are in record units ("s" or "ratio"); undefined statistics
// are null.
type jsonResult struct {
	SchemaVersion int                  `json:"schema_version"` // 1
	A             jsonArm              `json:"a"`
	B             jsonArm              `json:"b"`
	Rounds        int                  `json:"rounds"`
	Order         []string             `json:"order"`
	Seed          int64                `json:"seed"`
	Scenario      string               `json:"scenario,omitempty"`
	Concurrency   int                  `json:"concurrency,omitempty"`
	Rate          float64              `json:"rate,omitempty"`
	WarmupRound   int                  `json:"warmup_per_round"`
	Requests      int                  `json:"requests_per_arm,omitempty"`
	DurationS     float64              `json:"duration_per_arm_s,omitempty"`
	Alpha         float64              `json:"alpha"`
	Power         float64              `json:"power"`
	Test          string               `json:"test"`
	Correction    string               `json:"correction"` // "holm" over the metrics tested
	Metrics       []jsonMetric         `json:"metrics"`
	Throughput    *jsonThroughput      `json:"throughput,omitempty"` // throughput mode only
	Failures      compare.FailuresJSON `json:"failures"`
	Broken        string               `json:"broken,omitempty"` // why there is no latency verdict
	Gates         []jsonGate           `json:"gates,omitempty"`
	Regression    bool                 `json:"regression"` // a gate failed (exit status 3)
	Verdict       string               `json:"verdict"`
	Refused       string               `json:"refused,omitempty"` // why there is no verdict at all
	Significant   bool                 `json:"significant"`
	MetricsSize   *jsonSize            `json:"metrics_size,omitempty"` // B - A, when both arms were scraped
	Interrupted   bool                 `json:"interrupted"`
	Warnings      []string             `json:"warnings,omitempty"`
	LogDir        string               `json:"log_dir,omitempty"`
}

type jsonGate struct {
	Gate   string `json:"gate"` // "e2e:5", "failure_rate"
	Failed bool   `json:"failed"`
	Reason string `json:"reason"`
}

type jsonArm struct {
	Name         string       `json:"name"`
	Label        string       `json:"label"`
	Kind         string       `json:"kind"`
	Target       string       `json:"target,omitempty"`
	Command      []string     `json:"command,omitempty"`
	ServerPIDs   []int        `json:"server_pids,omitempty"`
	ServerStarts int          `json:"server_starts,omitempty"`
	ServerLog    string       `json:"server_log,omitempty"`
	ResultsFile  string       `json:"results_file,omitempty"`
	Rounds       int          `json:"rounds"`
	Requests     int          `json:"requests"`
	Used         int          `json:"used"`
	Failed       int          `json:"failed"`
	Warmup       int          `json:"warmup"`
	FirstError   string       `json:"first_error,omitempty"`
	Metrics      *MetricsSize `json:"metrics,omitempty"`
	StatsClaim   string       `json:"stats_claim,omitempty"` // "on" or "off": verified from /metrics
	Stats        string       `json:"stats,omitempty"`       // what /metrics showed, "on (detected: ...)"
}

type jsonSize struct {
	LinesDelta    int     `json:"lines_delta"`
	LinesRatio    float64 `json:"lines_ratio"` // lines B / lines A
	FamiliesDelta int     `json:"families_delta"`
	SeriesDelta   int     `json:"series_delta"`
}

// jsonMetric is package compare's metric (the same schema as `omnibench
// compare`) with the verdict.
type jsonMetric struct {
	compare.MetricJSON
	Verdict string `json:"verdict"`
}

// MarshalJSON writes the result in the documented form (see WriteJSON).
// It has a value receiver so that a Result marshals the same way whether
// passed by value or by pointer (never as its raw fields and records).
func (r Result) MarshalJSON() ([]byte, error) {
	out := jsonResult{
		SchemaVersion: 1, A: toJSONArm(r.A), B: toJSONArm(r.B),
		Rounds: r.Rounds, Order: r.Order, Seed: r.Seed, Scenario: r.Scenario,
		Concurrency: r.Concurrency, Rate: r.Rate, WarmupRound: r.Warmup, Requests: r.Requests, DurationS: r.Duration.Seconds(),
		Alpha: r.Alpha, Power: r.Power, Test: r.Test.String(), Correction: "holm",
		Metrics: make([]jsonMetric, 0, len(r.Metrics)), Verdict: r.Verdict, Significant: r.Significant,
		Interrupted: r.Interrupted, Warnings: r.Warnings, LogDir: r.LogDir,
		Failures: compare.NewFailuresJSON(r.Failures), Broken: r.Broken, Refused: r.Refused,
		Throughput: r.Throughput.toJSON(),
	}
	for _, g := range r.Gates {
		out.Gates = append(out.Gates, jsonGate{Gate: g.Gate.String(), Failed: g.Failed, Reason: g.Reason})
		out.Regression = out.Regression || g.Failed
	}
	if ma, mb := r.A.Metrics, r.B.Metrics; ma != nil && mb != nil && ma.Error == "" && mb.Error == "" {
		s := &jsonSize{LinesDelta: mb.Lines - ma.Lines, FamiliesDelta: mb.Families - ma.Families, SeriesDelta: mb.Series - ma.Series}
		if ma.Lines > 0 {
			s.LinesRatio = float64(mb.Lines) / float64(ma.Lines)
		}
		out.MetricsSize = s
	}
	for _, mr := range r.Metrics {
		out.Metrics = append(out.Metrics, jsonMetric{MetricJSON: mr.JSON(), Verdict: mr.Verdict})
	}
	return json.Marshal(out)
}

func toJSONArm(a *ArmResult) jsonArm {
	return jsonArm{
		Name: a.Name, Label: a.Label, Kind: a.Kind, Target: a.Target, Command: a.Command,
		ServerPIDs: a.ServerPIDs, ServerStarts: a.ServerStarts, ServerLog: a.ServerLog, ResultsFile: a.ResultsFile,
		Rounds: a.Rounds, Requests: a.Requests, Used: a.Used, Failed: a.Failed, Warmup: a.Warmup, FirstError: a.FirstError,
		Metrics: a.Metrics, StatsClaim: a.StatsClaim, Stats: a.Stats,
	}
}

// WriteJSON writes the result as one indented JSON object, schema_version
// 1: a and b (name, label, kind, target, command, server_pids,
// server_starts, server_log, results_file, rounds, requests, used, failed,
// warmup, first_error, metrics {URL, Lines, Families, Series,
// EmptyFamilies, ...}, stats_claim, stats); rounds, order, seed, scenario, concurrency, rate,
// warmup_per_round, requests_per_arm, duration_per_arm_s; alpha, power,
// test, correction; metrics[] (metric, field, unit, a and b summaries,
// tested, delta_pct, welch {t, df, p, diff, se, confidence, ci_low,
// ci_high, ci_b_minus_a_low, ci_b_minus_a_high}, mann_whitney_p, p, holm_p,
// significant, cohens_d, hedges_g, mde, mde_pct, lag1_a, lag1_b, n_eff_a,
// n_eff_b, verdict, warnings); throughput, in throughput mode only
// (rounds_a and rounds_b [round, completed, window_s, requests_per_s,
// audio_s_per_s], correction, metrics[] as above, verdict); failures
// (failed_a, total_a, rate_a, failed_b, total_b, rate_b, fisher_p);
// broken; gates[] (gate, failed, reason); regression; verdict, significant; metrics_size
// (lines_delta, lines_ratio, families_delta, series_delta); interrupted;
// warnings; log_dir.
func (r *Result) WriteJSON(w io.Writer) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("abtest: write json: %w", err)
	}
	if _, err := w.Write(append(data, '\n')); err != nil {
		return fmt.Errorf("abtest: write json: %w", err)
	}
	return nil
}

// writeJSONFile writes the result atomically: a reader never sees a
// half-written file.
func writeJSONFile(path string, r *Result) error {
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
