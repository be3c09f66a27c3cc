package compare

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/omnibench/omnibench/results"
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
	Gates       []Gate     // regression gates, checked by Result.Err
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
}

// Row is the comparison of one metric.
type Row struct {
	Metric Metric
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
	Gates       []GateResult
	Warnings    []string // about the runs as a whole
}

// Compare compares run b (candidate) against run a (baseline). It fails when
// either run has no successful non-warm-up record, since there is then
// nothing to compare.
func Compare(a, b Run, opts Options) (*Result, error) {
	if opts.Alpha == 0 {
		opts.Alpha = 0.05
	}
	if opts.Power == 0 {
		opts.Power = 0.8
	}
	if opts.Percentiles == nil {
		opts.Percentiles = stats.DefaultPercentiles()
	}
	if !(opts.Alpha > 0 && opts.Alpha < 1) {
		return nil, fmt.Errorf("compare: alpha %v is not in (0, 1)", opts.Alpha)
	}
	if !(opts.Power > 0 && opts.Power < 1) {
		return nil, fmt.Errorf("compare: power %v is not in (0, 1)", opts.Power)
	}
	for _, p := range opts.Percentiles {
		if !(p >= 0 && p <= 100) {
			return nil, fmt.Errorf("compare: percentile %v is not in [0, 100]", p)
		}
	}
	armA, recsA := usable(a)
	armB, recsB := usable(b)
	for _, x := range []struct {
		arm  Arm
		role string
	}{{armA, "A"}, {armB, "B"}} {
		if x.arm.Used == 0 {
			return nil, fmt.Errorf("compare: %s (%s): no successful non-warm-up request records (%d records, %d failed, %d warm-up)",
				x.arm.Name, x.role, x.arm.Records, x.arm.Failed, x.arm.Warmup)
		}
	}
	res := &Result{A: armA, B: armB, Alpha: opts.Alpha, Power: opts.Power, Test: opts.Test, Percentiles: opts.Percentiles}
	res.Warnings = runWarnings(a.Header, b.Header)

	sopts := stats.Options{Alpha: opts.Alpha, Power: opts.Power, Test: opts.Test, Percentiles: opts.Percentiles}
	for _, m := range Metrics() {
		xa, xb := values(m, recsA), values(m, recsB)
		if len(xa) == 0 && len(xb) == 0 {
			continue // the metric does not apply to these runs (no text, no audio)
		}
		row := Row{Metric: m, A: stats.Summarize(xa, opts.Percentiles), B: stats.Summarize(xb, opts.Percentiles), HolmP: math.NaN()}
		c, err := stats.CompareWith(xa, xb, sopts)
		switch {
		case errors.Is(err, stats.ErrTooFewSamples):
			row.Warnings = append(row.Warnings, fmt.Sprintf("not tested: A has %d and B %d samples, need at least 2 each", len(xa), len(xb)))
		case err != nil:
			return nil, fmt.Errorf("compare: metric %s (%s): %w", m.Name, m.Field, err)
		default:
			row.Tested, row.Comparison = true, c
			row.Warnings = append(row.Warnings, c.Warnings...)
		}
		res.Rows = append(res.Rows, row)
	}

	ps := make([]float64, len(res.Rows))
	for i, r := range res.Rows {
		ps[i] = math.NaN()
		if r.Tested {
			ps[i] = r.Comparison.P
		}
	}
	for i, adj := range stats.Holm(ps) {
		r := &res.Rows[i]
		r.HolmP = adj
		r.Significant = r.Tested && adj < opts.Alpha
	}
	for _, g := range opts.Gates {
		res.Gates = append(res.Gates, evaluate(g, res.Rows, opts.Alpha))
	}
	return res, nil
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

// Err returns a *RegressionError when any gate failed, nil otherwise.
func (r *Result) Err() error {
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

// usable returns the successful, non-warm-up records of run in request
// order (Seq), and counts what was left out.
func usable(run Run) (Arm, []*results.Record) {
	arm := Arm{Name: run.Name, Scenario: run.Header.Scenario, Target: run.Header.Target, Records: len(run.Records)}
	var recs []*results.Record
	for i := range run.Records {
		rec := &run.Records[i]
		switch {
		case rec.Warmup:
			arm.Warmup++
		case !rec.OK():
			arm.Failed++
		default:
			recs = append(recs, rec)
		}
	}
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Seq < recs[j].Seq })
	arm.Used = len(recs)
	return arm, recs
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
