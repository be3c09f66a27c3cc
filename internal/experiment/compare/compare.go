package compare

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/stats"
)

// Run is one saved run: a label (usually the file path) and its contents.
type Run struct {
	Name    string
	Header  results.Header
	Records []results.Record
}

// Load reads a results JSONL file into a Run named after its path.
func Load(path string) (Run, error) {
	h, recs, err := results.ReadFile(path)
	if err != nil {
		return Run{}, fmt.Errorf("compare: %w", err)
	}
	return Run{Name: path, Header: h, Records: recs}, nil
}

// Options of a comparison. Zero values take the documented defaults.
type Options struct {
	Alpha       float64    // significance level after Holm correction; default 0.05
	Power       float64    // power of the minimum detectable effect; default 0.8
	Test        stats.Test // test deciding significance; default stats.TestWelch
	Percentiles []float64  // per-arm percentiles; nil means stats.DefaultPercentiles()
	// Gates are the regression gates, checked by Result.Err. When there is
	// any, the failure-rate gate (EvaluateFailures) is checked too.
	Gates []Gate
	// AllowSaturated lets the gates judge a run measured by a saturated
	// load generator; without it Result.Err refuses (ErrSaturated).
	AllowSaturated bool
	// IncludeRamp compares the requests of a load ramp (Record.Phase
	// "ramp") too; by default they are left out, as in the run's summary.
	IncludeRamp bool
}

// Arm describes one input run and which of its records were compared.
type Arm struct {
	Name     string
	Scenario string
	Target   string
	Records  int // request records in the file
	Used     int // successful, non-warm-up records compared
	Failed   int // non-warm-up records with an error class (left out)
	Warmup   int // warm-up records (left out)
	Ramp     int // ramp-phase records left out (Options.IncludeRamp)
	// Client is the run's load-generator verdict (nil: not in the file).
	Client *results.ClientHealth
}

// Saturated reports whether the arm's run was measured by a saturated load
// generator.
func (a Arm) Saturated() bool { return a.Client != nil && a.Client.Saturated }

// Row is the comparison of one metric.
type Row struct {
	Metric Metric
	// SamplesA and SamplesB are each arm's values of the metric in request
	// order (record units).
	SamplesA, SamplesB []float64
	// A and B summarise each arm (record units), whether tested or not.
	A, B stats.Summary
	// Tested is true when both arms have at least two values; Comparison,
	// HolmP and Significant are meaningful only then.
	Tested      bool
	Comparison  stats.Comparison
	HolmP       float64 // Comparison.P adjusted with Holm over the rows tested; NaN when not tested
	Significant bool    // Tested and HolmP < alpha
	Warnings    []string
}

// Result is a complete comparison of B against A.
type Result struct {
	A, B        Arm
	Alpha       float64
	Power       float64
	Test        stats.Test
	Percentiles []float64
	Rows        []Row // metrics with samples in at least one arm, in Metrics order
	// Failures compares the arms' failure rates over the measured
	// (non-warm-up) requests with Fisher's exact test.
	Failures stats.FailureRates
	Gates    []GateResult
	Warnings []string // about the runs as a whole
	// AllowSaturated is Options.AllowSaturated (see Err).
	AllowSaturated bool
	// Breakdown compares where the server spent each run's time, stage by
	// stage; nil unless both results files have scrape lines.
	Breakdown *breakdown.Diff
}

// ErrSaturated is wrapped by the error refusing a gated verdict on a run
// measured by a saturated load generator: its latencies include the
// client's own delay, so a regression (or its absence) may be the client's.
var ErrSaturated = errors.New("measured by a saturated load generator")

// ErrNothingMeasured is wrapped by Compare's error when a run's measured
// requests all failed: there is nothing to compare (exit status 1, unlike a
// file without measured records, which is unusable input).
var ErrNothingMeasured = errors.New("nothing was measured")

// Compare compares run b (candidate) against run a (baseline). It fails when
// either run has no successful non-warm-up record, since there is then
// nothing to compare, with one exception: with gates, a candidate whose
// measured requests all failed is compared, and fails its gates.
func Compare(a, b Run, opts Options) (*Result, error) {
	sopts := statsDefaults(stats.Options{Alpha: opts.Alpha, Power: opts.Power, Test: opts.Test, Percentiles: opts.Percentiles})
	if !(sopts.Alpha > 0 && sopts.Alpha < 1) {
		return nil, fmt.Errorf("compare: alpha %v is not in (0, 1)", sopts.Alpha)
	}
	if !(sopts.Power > 0 && sopts.Power < 1) {
		return nil, fmt.Errorf("compare: power %v is not in (0, 1)", sopts.Power)
	}
	for _, p := range sopts.Percentiles {
		if !(p >= 0 && p <= 100) {
			return nil, fmt.Errorf("compare: percentile %v is not in [0, 100]", p)
		}
	}
	armA, recsA := usable(a, opts.IncludeRamp)
	armB, recsB := usable(b, opts.IncludeRamp)
	for _, x := range []struct {
		arm  Arm
		role string
	}{{armA, "A"}, {armB, "B"}} {
		switch {
		case x.arm.Used > 0:
		case x.role == "B" && x.arm.Failed > 0 && len(opts.Gates) > 0:
			// A candidate that only failed is for the gates to judge: its
			// metrics cannot be checked and it fails more often than A.
		case x.arm.Failed > 0:
			return nil, fmt.Errorf("compare: %s (%s): %w: all %d measured requests failed (%d warm-up)",
				x.arm.Name, x.role, ErrNothingMeasured, x.arm.Failed, x.arm.Warmup)
		default:
			ramp := ""
			if x.arm.Ramp > 0 {
				ramp = fmt.Sprintf(", %d ramp-phase left out (--include-ramp keeps them)", x.arm.Ramp)
			}
			return nil, fmt.Errorf("compare: %s (%s): no measured request records (%d records, %d warm-up%s)",
				x.arm.Name, x.role, x.arm.Records, x.arm.Warmup, ramp)
		}
	}
	rows, err := Analyze(Metrics(), recsA, recsB, sopts)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	res := &Result{A: armA, B: armB, Alpha: sopts.Alpha, Power: sopts.Power, Test: sopts.Test, Percentiles: sopts.Percentiles, Rows: rows,
		AllowSaturated: opts.AllowSaturated}
	res.Warnings = runWarnings(a.Header, b.Header)
	res.Breakdown = breakdownDiff(a, b)
	if ka, kb := kindsOf(a.Records), kindsOf(b.Records); ka != kb {
		res.Warnings = append(res.Warnings, fmt.Sprintf("runs sent different request kinds (A %s, B %s): their latencies measure different work", ka, kb))
	}
	for _, x := range []struct {
		role string
		arm  Arm
	}{{"A", armA}, {"B", armB}} {
		if x.arm.Saturated() {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s (%s): %s", x.role, x.arm.Name, x.arm.Client.Text()))
		}
	}
	res.Failures, err = stats.CompareFailures(armA.Failed, armA.Used+armA.Failed, armB.Failed, armB.Used+armB.Failed)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	for _, g := range opts.Gates {
		res.Gates = append(res.Gates, EvaluateGate(g, res.Rows, sopts.Alpha))
	}
	if len(opts.Gates) > 0 {
		res.Gates = append(res.Gates, EvaluateFailures(res.Failures, sopts.Alpha))
	}
	return res, nil
}

// breakdownDiff compares the runs' breakdowns, rebuilt from their scrape
// lines as report does; nil unless both files have them.
func breakdownDiff(a, b Run) *breakdown.Diff {
	if len(a.Header.Scrapes) == 0 || len(b.Header.Scrapes) == 0 {
		return nil
	}
	ba, _ := runner.BreakdownOfScrapes(a.Header.Scrapes, summary.SetOf(a.Records))
	bb, _ := runner.BreakdownOfScrapes(b.Header.Scrapes, summary.SetOf(b.Records))
	d := breakdown.Compare(*ba, *bb)
	return &d
}

// statsDefaults fills the zero fields of o with stats' documented defaults,
// so that Analyze judges significance at the alpha stats tests at.
func statsDefaults(o stats.Options) stats.Options {
	if o.Alpha == 0 {
		o.Alpha = 0.05
	}
	if o.Power == 0 {
		o.Power = 0.8
	}
	if o.Percentiles == nil {
		o.Percentiles = stats.DefaultPercentiles()
	}
	return o
}

// Analyze compares every metric between the records a (baseline) and b
// (candidate), normally the used records of Usable: it is the one analysis
// of both `omnibench compare` and `omnibench ab`. Rows come in the order of
// metrics; a metric with no value in either arm has none. Every row
// summarises both arms; a metric with at least two values in each arm is
// tested with opts (zero fields take stats' defaults), and the p-values of
// the tested rows are adjusted together with Holm's method: HolmP, and
// Significant when HolmP < opts.Alpha.
//
// A metric whose test fails for another reason than too few samples (a
// non-finite value, say) is left untested with the error among its
// warnings, and Analyze returns the first such error together with all the
// rows: the caller decides whether it is fatal.
func Analyze(metrics []Metric, a, b []*results.Record, opts stats.Options) ([]Row, error) {
	var samples []Samples
	for _, m := range metrics {
		xa, xb := values(m, a), values(m, b)
		if len(xa) == 0 && len(xb) == 0 {
			continue // the metric does not apply to these runs (no text, no audio)
		}
		samples = append(samples, Samples{Metric: m, A: xa, B: xb})
	}
	return AnalyzeSamples(samples, opts)
}

// Samples are one metric's values in each arm, in measurement order: the
// values of records (Analyze), or of anything else measured repeatedly,
// such as the throughput of each round of an A/B run.
type Samples struct {
	Metric Metric
	A, B   []float64
}

// AnalyzeSamples is Analyze on values already taken: every metric is
// summarised and, with at least two values in each arm, tested, and the
// p-values of the tested rows are adjusted together with Holm's method.
func AnalyzeSamples(samples []Samples, opts stats.Options) ([]Row, error) {
	opts = statsDefaults(opts)
	var rows []Row
	var first error
	for _, s := range samples {
		m, xa, xb := s.Metric, s.A, s.B
		row := Row{Metric: m, SamplesA: xa, SamplesB: xb,
			A: stats.Summarize(xa, opts.Percentiles), B: stats.Summarize(xb, opts.Percentiles), HolmP: math.NaN()}
		c, err := stats.CompareWith(xa, xb, opts)
		switch {
		case errors.Is(err, stats.ErrTooFewSamples):
			row.Warnings = append(row.Warnings, fmt.Sprintf("not tested: A has %d and B %d samples, need at least 2 each", len(xa), len(xb)))
		case err != nil:
			row.Warnings = append(row.Warnings, fmt.Sprintf("not tested: %v", err))
			if first == nil {
				first = fmt.Errorf("metric %s (%s): %w", m.Name, m.Field, err)
			}
		default:
			row.Tested, row.Comparison = true, c
			row.Warnings = append(row.Warnings, c.Warnings...)
		}
		rows = append(rows, row)
	}

	ps := make([]float64, len(rows))
	for i, r := range rows {
		ps[i] = math.NaN()
		if r.Tested {
			ps[i] = r.Comparison.P
		}
	}
	for i, adj := range stats.Holm(ps) {
		r := &rows[i]
		r.HolmP = adj
		r.Significant = r.Tested && adj < opts.Alpha
	}
	return rows, first
}

// Tested returns how many metrics were tested (the size of the Holm family).
func (r *Result) Tested() int {
	n := 0
	for _, row := range r.Rows {
		if row.Tested {
			n++
		}
	}
	return n
}

// Err returns a *RegressionError when any gate failed, nil otherwise; with
// gates, a run measured by a saturated load generator is refused first (the
// error of Refusal) unless AllowSaturated.
func (r *Result) Err() error {
	if err := r.Refusal(); err != nil {
		return err
	}
	var failed []GateResult
	for _, g := range r.Gates {
		if g.Failed {
			failed = append(failed, g)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return &RegressionError{Failed: failed}
}

// Refusal is why the gates give no verdict (an error wrapping the reason,
// which wraps ErrSaturated), nil when they give one: with gates, a run measured by a
// saturated load generator, unless AllowSaturated. Every output then shows
// the refusal instead of the gates' verdicts.
func (r *Result) Refusal() error {
	if len(r.Gates) == 0 || r.AllowSaturated {
		return nil
	}
	for _, x := range []struct {
		role string
		arm  Arm
	}{{"A", r.A}, {"B", r.B}} {
		if x.arm.Saturated() {
			reason := fmt.Errorf("%s (%s) was %w (%s): its latencies include up to %.1f ms of the client's own delay, "+
				"so a regression may be the client's; rerun with fewer streams per process or shards, or pass --allow-saturated",
				x.role, x.arm.Name, ErrSaturated, strings.Join(x.arm.Client.Reasons, "; "), x.arm.Client.ClientDelayMS)
			return fmt.Errorf("compare: no gate verdict: %w", reason)
		}
	}
	return nil
}

// usable counts the records of run and returns the ones compared.
func usable(run Run, includeRamp bool) (Arm, []*results.Record) {
	used, failed, warmup, ramp := Usable(run.Records, includeRamp)
	arm := Arm{Name: run.Name, Scenario: run.Header.Scenario, Target: run.Header.Target, Records: len(run.Records),
		Used: len(used), Failed: len(failed), Warmup: warmup, Ramp: ramp, Client: run.Header.Client}
	return arm, used
}

// Usable sorts the records of one run as a comparison takes them: used are
// the successful, non-warm-up records in request order (Seq), so that the
// lag-1 autocorrelation stats warns about sees the run as it happened;
// failed are the non-warm-up records with an error class, in the order of
// recs; warmup counts the warm-up records and ramp the records of a load
// ramp (Record.Phase "ramp", unless includeRamp), as the run's summary
// leaves them out. Both are left out.
func Usable(recs []results.Record, includeRamp bool) (used, failed []*results.Record, warmup, ramp int) {
	for i := range recs {
		rec := &recs[i]
		switch {
		case rec.Warmup:
			warmup++
		case rec.Phase == "ramp" && !includeRamp:
			ramp++
		case !rec.OK():
			failed = append(failed, rec)
		default:
			used = append(used, rec)
		}
	}
	sort.SliceStable(used, func(i, j int) bool { return used[i].Seq < used[j].Seq })
	return used, failed, warmup, ramp
}

func values(m Metric, recs []*results.Record) []float64 {
	var xs []float64
	for _, r := range recs {
		if v, ok := m.Value(r); ok {
			xs = append(xs, v)
		}
	}
	return xs
}

// runWarnings flags runs whose set-ups differ: their difference may then be
// the set-up's, not the server's.
// kindsOf lists the request kinds of recs, sorted: "chat", "chat, speech".
func kindsOf(recs []results.Record) string {
	var kinds []string
	for i := range recs {
		if k := recs[i].Kind; k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	slices.Sort(kinds)
	return strings.Join(kinds, ", ")
}

func runWarnings(a, b results.Header) []string {
	var ws []string
	differ := func(what string, x, y any) {
		if x != y {
			ws = append(ws, fmt.Sprintf("runs differ in %s (A %v, B %v)", what, x, y))
		}
	}
	differ("scenario", a.Scenario, b.Scenario)
	differ("mode", a.Mode, b.Mode)
	differ("concurrency", a.Concurrency, b.Concurrency)
	differ("rate", a.Rate, b.Rate)
	differ("arrival", a.Arrival, b.Arrival)
	return ws
}
