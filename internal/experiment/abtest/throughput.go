package abtest

import (
	"errors"
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// Throughput mode (Config.Throughput) compares what the arms serve, not
// only how fast they answer: every round is a closed loop at a concurrency
// that saturates the server, and yields one value per metric (requests
// completed per second and audio seconds per second over the round's
// measured window). A round is one sample: the requests of a round share
// the server's load, so they are not independent measurements of it, but
// rounds are. The samples are compared across rounds with Welch's test
// (package compare's analysis, Holm over the two metrics), beside the
// per-request latency comparison, which is the same as without it.

// MinThroughputRounds is the fewest rounds per arm of a throughput
// comparison: Welch's test needs two samples per arm.
const MinThroughputRounds = 2

// ErrTooFewRounds is wrapped by the refusal of a throughput verdict when an
// arm has fewer than MinThroughputRounds measured rounds.
var ErrTooFewRounds = errors.New("too few rounds for a throughput verdict")

// RoundThroughput is what one round of one arm served.
type RoundThroughput struct {
	Round     int     `json:"round"`     // 1-based
	Completed int     `json:"completed"` // measured requests that succeeded
	WindowS   float64 `json:"window_s"`  // first measured send to last measured response end
	// RequestsPerS is Completed / WindowS; AudioSPerS the audio seconds of
	// the completed requests per second of the window.
	RequestsPerS float64 `json:"requests_per_s"`
	AudioSPerS   float64 `json:"audio_s_per_s"`
}

// ThroughputResult is the throughput comparison of an A/B run.
type ThroughputResult struct {
	// A and B are each arm's rounds in the order run; a round that ended in
	// an error or an interruption, or measured nothing, is left out.
	A, B []RoundThroughput
	// Metrics compares requests/s and audio s/s across the rounds, in that
	// order (audio s/s only when there was audio); HolmP is adjusted over
	// these two, apart from the latency metrics.
	Metrics []MetricResult
	Verdict string
}

// ThroughputMetrics returns the metrics of throughput mode. Larger is better
// for both.
func ThroughputMetrics() []compare.Metric {
	return []compare.Metric{
		{Name: "requests_per_s", Field: "completed measured requests / window", Unit: "1/s", Display: "req/s", Scale: 1},
		{Name: "audio_s_per_s", Field: "audio seconds / window", Unit: "ratio", Display: "audio s/s", Scale: 1},
	}
}

// observe keeps the throughput of one finished round of arm name.
func (t *ThroughputResult) observe(name string, round int, s *summary.Summary) {
	if t == nil || s == nil || s.DurationS <= 0 {
		return
	}
	rt := RoundThroughput{Round: round + 1, Completed: s.Requests.Completed, WindowS: s.DurationS,
		RequestsPerS: s.RequestRate, AudioSPerS: s.Audio.Throughput}
	if name == "A" {
		t.A = append(t.A, rt)
	} else {
		t.B = append(t.B, rt)
	}
}

// analyse compares the arms' rounds and states the verdict.
func (t *ThroughputResult) analyse(opts stats.Options) {
	ms := ThroughputMetrics()
	pick := func(rs []RoundThroughput, audio bool) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.RequestsPerS
			if audio {
				out[i] = r.AudioSPerS
			}
		}
		return out
	}
	samples := []compare.Samples{{Metric: ms[0], A: pick(t.A, false), B: pick(t.B, false)}}
	if hasAudio(t.A) || hasAudio(t.B) {
		samples = append(samples, compare.Samples{Metric: ms[1], A: pick(t.A, true), B: pick(t.B, true)})
	}
	// As in the latency comparison, a metric whose test failed is left
	// untested with the reason among its warnings.
	rows, _ := compare.AnalyzeSamples(samples, opts)
	t.Metrics = t.Metrics[:0]
	var sig, tested []string
	for _, row := range rows {
		mr := MetricResult{Row: row, Verdict: throughputVerdict(row)}
		t.Metrics = append(t.Metrics, mr)
		if row.Tested {
			tested = append(tested, row.Metric.Name)
		}
		if row.Significant {
			sig = append(sig, row.Metric.Name+": "+mr.Verdict)
		}
	}
	switch {
	case len(tested) == 0:
		t.Verdict = fmt.Sprintf("not tested: want at least %d measured rounds per arm", MinThroughputRounds)
	case len(sig) == 0:
		t.Verdict = fmt.Sprintf("no significant difference at alpha %g (%s)", opts.Alpha, strings.Join(tested, ", "))
	default:
		t.Verdict = strings.Join(sig, "; ")
	}
}

func hasAudio(rs []RoundThroughput) bool {
	for _, r := range rs {
		if r.AudioSPerS > 0 {
			return true
		}
	}
	return false
}

// throughputVerdict states one throughput metric's outcome: larger is
// better, so a smaller B is a regression ("B lower").
func throughputVerdict(row compare.Row) string {
	switch {
	case !row.Tested:
		return "not tested"
	case !row.Significant:
		return "no significant difference"
	}
	d := row.Comparison.DeltaPct
	p := "holm p=" + report.FormatP(row.HolmP)
	switch {
	case d < 0:
		return fmt.Sprintf("B lower by %.1f%%, a regression (%s)", -d, p)
	case d > 0:
		return fmt.Sprintf("B higher by %.1f%%, an improvement (%s)", d, p)
	}
	return fmt.Sprintf("B differs (%s)", p)
}

// Significant reports whether any throughput metric differs significantly.
func (t *ThroughputResult) Significant() bool {
	for _, mr := range t.Metrics {
		if mr.Significant {
			return true
		}
	}
	return false
}

// refusal says why the rounds allow no throughput verdict (nil when they do).
func (t *ThroughputResult) refusal() error {
	if len(t.A) < MinThroughputRounds || len(t.B) < MinThroughputRounds {
		return fmt.Errorf("%w: A has %d and B %d measured rounds, Welch's test needs at least %d per arm",
			ErrTooFewRounds, len(t.A), len(t.B), MinThroughputRounds)
	}
	return nil
}

// refuse withholds every throughput verdict (see Result.refuse).
func (t *ThroughputResult) refuse() {
	if t == nil {
		return
	}
	t.Verdict = noVerdict
	for i := range t.Metrics {
		t.Metrics[i].Verdict = noVerdict
	}
}

// analyseThroughput adds the throughput comparison to an analysed result:
// its verdict comes first in Result.Verdict, and it counts in Significant.
func analyseThroughput(res *Result, opts stats.Options) {
	t := res.Throughput
	if t == nil {
		return
	}
	t.analyse(opts)
	res.Significant = res.Significant || t.Significant()
	res.Verdict = "throughput: " + t.Verdict + "; latency: " + res.Verdict
}

// throughputTables are the tables of throughput mode (none without it):
// the verdict per metric across the rounds, and every round's figures in
// the order run.
func (r *Result) throughputTables() []report.Table {
	t := r.Throughput
	if t == nil {
		return nil
	}
	sum := report.Table{
		Title:  "Throughput: B against A, one sample per round",
		Header: []string{"metric", "rounds (A/B)", "A mean", "B mean", "delta", "welch p", "holm p", "MDE", "verdict"},
		Notes: []string{
			"throughput: " + t.Verdict,
			"per round: completed measured requests and their audio seconds over the window from the first",
			"  measured send to the last measured response end; welch p across the rounds of each arm,",
			"  holm p adjusted over the throughput metrics (apart from the latency ones); larger is better",
		},
	}
	for _, mr := range t.Metrics {
		m := mr.Metric
		row := []string{m.Label(), fmt.Sprintf("%d/%d", mr.A.N, mr.B.N), report.FormatValue(mr.A.Mean), report.FormatValue(mr.B.Mean)}
		if !mr.Tested {
			sum.Rows = append(sum.Rows, append(row, "-", "-", "-", "-", r.throughputShort(mr)))
			continue
		}
		c := mr.Comparison
		sum.Rows = append(sum.Rows, append(row, compare.FormatDelta(c.DeltaPct), report.FormatP(c.Welch.P),
			report.FormatP(mr.HolmP), report.FormatPct(c.MDEPct), r.throughputShort(mr)))
		for _, w := range mr.Warnings {
			sum.Notes = append(sum.Notes, fmt.Sprintf("warning: %s: %s", m.Name, w))
		}
	}
	return []report.Table{sum, r.roundsTable()}
}

// throughputShort is a throughput metric's verdict in a word or two.
func (r *Result) throughputShort(mr MetricResult) string {
	switch {
	case r.Refused != "":
		return noVerdict
	case !mr.Tested:
		return "not tested"
	case !mr.Significant:
		return "~"
	case mr.Comparison.DeltaPct < 0:
		return "B lower"
	case mr.Comparison.DeltaPct > 0:
		return "B higher"
	}
	return "B differs"
}

// roundsTable lists every measured round in the order run.
func (r *Result) roundsTable() report.Table {
	t := report.Table{
		Title:  "Throughput per round",
		Header: []string{"round", "arm", "completed", "window (s)", "requests/s", "audio s/s"},
	}
	next := map[string]int{}
	for slot, name := range r.Order {
		rs := r.Throughput.A
		if name == "B" {
			rs = r.Throughput.B
		}
		i := next[name]
		if i >= len(rs) || rs[i].Round != slot/2+1 {
			continue // not measured (an error or an interruption)
		}
		next[name]++
		rt := rs[i]
		t.Rows = append(t.Rows, []string{fmt.Sprint(rt.Round), name, fmt.Sprint(rt.Completed),
			report.FormatValue(rt.WindowS), report.FormatValue(rt.RequestsPerS), report.FormatValue(rt.AudioSPerS)})
	}
	return t
}

// jsonThroughput is the "throughput" object of the JSON output.
type jsonThroughput struct {
	RoundsA    []RoundThroughput `json:"rounds_a"`
	RoundsB    []RoundThroughput `json:"rounds_b"`
	Correction string            `json:"correction"` // "holm" over the throughput metrics tested
	Metrics    []jsonMetric      `json:"metrics"`
	Verdict    string            `json:"verdict"`
}

func (t *ThroughputResult) toJSON() *jsonThroughput {
	if t == nil {
		return nil
	}
	out := &jsonThroughput{RoundsA: t.A, RoundsB: t.B, Correction: "holm", Metrics: make([]jsonMetric, 0, len(t.Metrics)), Verdict: t.Verdict}
	for _, mr := range t.Metrics {
		out.Metrics = append(out.Metrics, jsonMetric{MetricJSON: mr.JSON(), Verdict: mr.Verdict})
	}
	return out
}
