package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/stats"
)

// Comparison is one row of the server-vs-client section: a figure as the
// server's /metrics delta states it and as the client measured it.
type Comparison struct {
	Figure string   `json:"figure"`
	Server *float64 `json:"server"` // nil: the server does not export it
	Client *float64 `json:"client"`
	// Diff is server - client; nil when either side is missing, or when
	// the client's value lies in ServerBucket: the buckets cannot tell the
	// two apart.
	Diff      *float64 `json:"diff"`
	Unit      string   `json:"unit,omitempty"`
	Note      string   `json:"note,omitempty"`
	Tolerance string   `json:"tolerance,omitempty"`
	// ServerBucket is, for a server figure estimated from histogram
	// buckets, the bucket the estimate lies in (in Unit).
	ServerBucket *Bucket `json:"server_bucket,omitempty"`
}

// Bucket is a histogram bucket's bounds; a nil bound is unbounded (the
// +Inf bucket's upper one).
type Bucket struct {
	Low  *float64 `json:"low"`
	High *float64 `json:"high"`
}

// String is the bucket as "200-250", "≥1000" or "≤0".
func (b Bucket) String() string {
	switch {
	case b.Low != nil && b.High != nil:
		return fv(*b.Low) + "-" + fv(*b.High)
	case b.Low != nil:
		return "≥" + fv(*b.Low)
	case b.High != nil:
		return "≤" + fv(*b.High)
	}
	return "any"
}

// InBucket reports whether the comparison's client value lies in the
// server's bucket: a difference the server's histogram cannot resolve.
func (c Comparison) InBucket() bool {
	return c.ServerBucket != nil && c.Server != nil && c.Client != nil && c.Diff == nil
}

// serverCell is the server's value, with its bucket when it has one.
func (c Comparison) serverCell() string {
	if c.ServerBucket == nil || c.Server == nil {
		return fp(c.Server)
	}
	return fp(c.Server) + " (" + c.ServerBucket.String() + ")"
}

// diffCell is server - client, or "in bucket" when the buckets cannot
// resolve the difference.
func (c Comparison) diffCell() string {
	if c.InBucket() {
		return "in bucket"
	}
	return fp(c.Diff)
}

// RunReport is what the run report shows.
type RunReport struct {
	Header  results.Header
	Summary *summary.Summary
	Load    *load.Stats
	// Workload is what was sent (kind and model), read from the records.
	Workload       Workload
	ServerVsClient []Comparison
	// SLOs are the verdicts of the run's service-level objectives; they are
	// part of the report in every format.
	SLOs  []slo.Result
	Notes []string
	// Health is the load generator's own health (nil: not watched).
	Health *selfmon.Report
	// Breakdown is where the time went by the server's own metrics, as
	// the report shows it (nil: the run did not look at the server).
	Breakdown *BreakdownView
}

// Workload names the request kinds and models a run sent.
type Workload struct {
	Kinds  []string
	Models []string
}

// WorkloadOf collects the request kinds and models of recs, in order of
// first appearance.
func WorkloadOf(recs []results.Record) Workload { return WorkloadOfSet(summary.SetOf(recs)) }

// WorkloadOfSet is WorkloadOf of a run's requests in compact form.
func WorkloadOfSet(set *summary.Set) Workload {
	return Workload{Kinds: slices.Clone(set.Kinds()), Models: slices.Clone(set.Models())}
}

// RunTables builds the run report's tables: what ran, the SLO verdicts,
// requests, load, latency, continuity, server vs client and notes.
func RunTables(r RunReport) []Table {
	var out []Table
	res := resultTables(r)
	if len(res) > 0 && res[0].Title == warningTitle {
		out, res = append(out, res[0]), res[1:] // the warning first: it qualifies every figure
	}
	out = append(out, runTable(r))
	return append(out, res...)
}

// runTable says what ran: target, scenario, kind, model, load, requests,
// seed and the omnibench version.
func runTable(r RunReport) Table {
	h := r.Header
	s := r.Summary
	t := Table{Title: "Run", Header: []string{"what", "value"}}
	add := func(k, v string) {
		if v != "" {
			t.Rows = append(t.Rows, []string{k, v})
		}
	}
	target := h.Target
	if h.Simulator {
		target = "embedded simulator, " + h.Target
	}
	add("target", target)
	add("scenario", h.Scenario)
	add("kind", strings.Join(r.Workload.Kinds, ", "))
	add("model", strings.Join(r.Workload.Models, ", "))
	add("load", LoadText(h))
	if s != nil {
		req := strconv.Itoa(s.Requests.Total) + " measured"
		if s.Requests.Warmup > 0 {
			req += " + " + strconv.Itoa(s.Requests.Warmup) + " warm-up"
		}
		add("requests", req)
	}
	add("seed", strconv.FormatInt(h.Seed, 10))
	add("started", h.StartedAt)
	add("omnibench", h.Version)
	return t
}

// LoadText describes a run's load: "closed loop, c=4" or "open loop, 5
// req/s, poisson arrivals".
func LoadText(h results.Header) string {
	switch {
	case h.Mode == "open" || h.Rate > 0:
		s := "open loop, " + strconv.FormatFloat(h.Rate, 'g', -1, 64) + " req/s"
		if h.Arrival != "" {
			s += ", " + h.Arrival + " arrivals"
		}
		return s
	case h.Concurrency > 0:
		return "closed loop, c=" + strconv.Itoa(h.Concurrency)
	}
	return h.Mode
}

// resultTables are the report's tables after the run description; the
// HTML page shows the run description in its own header instead.
func resultTables(r RunReport) []Table {
	var out []Table
	if w := saturationWarning(r); w != nil {
		out = append(out, *w)
	}
	if len(r.SLOs) > 0 {
		out = append(out, SLOTable(r.SLOs))
	}
	out = append(out, requestsTable(r))
	if errs, ok := ErrorSetTable(r.Summary); ok {
		out = append(out, errs)
	}
	out = append(out, loadTable(r), latencyTable(r.Summary))
	if ct, ok := continuityTable(r.Summary); ok {
		dt, ok := stallTable(r.Summary)
		if !ok {
			ct.Notes = append(ct.Notes, "No response had an underrun or a stall.")
		}
		out = append(out, ct)
		if ok {
			out = append(out, dt)
		}
	}
	if h := healthTable(r.Health); h != nil {
		out = append(out, *h)
	} else if h := recordedHealthTable(r.Header.Client); h != nil {
		out = append(out, *h)
	}
	if len(r.ServerVsClient) > 0 {
		out = append(out, serverVsClientTable(r.ServerVsClient))
	}
	if r.Breakdown != nil {
		out = append(out, r.Breakdown.Tables...)
	}
	if notes := append(append([]string{}, r.Notes...), r.Summary.Warnings...); len(notes) > 0 {
		out = append(out, Table{Title: "Notes", Notes: notes})
	}
	return out
}

// SLOTable lists SLO verdicts: objective, verdict and the one-line detail.
func SLOTable(vs []slo.Result) Table {
	t := Table{Title: "Service-level objectives", Header: []string{"objective", "verdict", "detail"}}
	missed := 0
	for _, v := range vs {
		verdict := "pass"
		if !v.Pass {
			verdict = "MISS"
			missed++
		}
		t.Rows = append(t.Rows, []string{v.SLO.Expr, verdict, v.Message})
	}
	if missed > 0 {
		t.Title += fmt.Sprintf(": %d of %d missed", missed, len(vs))
	} else {
		t.Title += fmt.Sprintf(": all %d met", len(vs))
	}
	return t
}

func requestsTable(r RunReport) Table {
	s := r.Summary
	req := Table{Title: "Requests", Header: []string{"outcome", "count"}}
	req.Rows = append(req.Rows,
		[]string{"sent (measured)", strconv.Itoa(s.Requests.Total)},
		[]string{"completed", strconv.Itoa(s.Requests.Completed)},
		[]string{"failed", strconv.Itoa(s.Requests.Failed)},
	)
	for _, class := range results.ErrorClasses() {
		n := s.Requests.ByError[class]
		if n == 0 {
			continue
		}
		label := "  " + class
		if class == results.ErrHTTPStatus {
			var codes []string
			for code, c := range s.Requests.ByStatus {
				codes = append(codes, fmt.Sprintf("%s×%d", code, c))
			}
			sort.Strings(codes)
			label += " (" + strings.Join(codes, ", ") + ")"
		}
		req.Rows = append(req.Rows, []string{label, strconv.Itoa(n)})
	}
	qualityRows(&req, s.Quality)
	if s.Requests.Warmup > 0 {
		req.Rows = append(req.Rows, []string{"warm-up (excluded)", strconv.Itoa(s.Requests.Warmup)})
	}
	if s.Requests.Ramp > 0 {
		req.Rows = append(req.Rows, []string{"ramp phase (excluded; --include-ramp)", strconv.Itoa(s.Requests.Ramp)})
	}
	if r.Load != nil && r.Load.Dropped > 0 {
		req.Rows = append(req.Rows, []string{"dropped arrivals " + req.Footnote("arrivals beyond --max-inflight, never sent"), strconv.Itoa(r.Load.Dropped)})
	}
	if s.Requests.Total > 0 {
		req.Rows = append(req.Rows, []string{"error rate", FormatFixed(s.Requests.ErrorRate, 4)})
	}
	if s.Requests.Dropped > 0 {
		req.Rows = append(req.Rows, []string{"drop rate " + req.Footnote("dropped / (sent + dropped)"), FormatFixed(s.Requests.DropRate, 4)})
	}
	return req
}

// qualityRows adds the audio-quality counts: the responses flagged
// audio_defect (completed, so counted above too: a defect is no failure)
// with their reasons, and how many responses were transcribed.
func qualityRows(req *Table, q *summary.Quality) {
	if q == nil {
		return
	}
	if q.Checked > 0 {
		label := fmt.Sprintf("audio_defect (of %d checked) %s", q.Checked,
			req.Footnote("completed responses whose audio check flagged them (--audio-checks); they keep their latencies"))
		req.Rows = append(req.Rows, []string{label, strconv.Itoa(q.Defects)})
		reasons := make([]string, 0, len(q.ByDefect))
		for reason := range q.ByDefect {
			reasons = append(reasons, reason)
		}
		sort.Strings(reasons)
		for _, reason := range reasons {
			req.Rows = append(req.Rows, []string{"  " + reason, strconv.Itoa(q.ByDefect[reason])})
		}
	}
	if a := q.ASR; a != nil {
		label := "transcribed (scored)"
		if a.Offered > 0 {
			label = fmt.Sprintf("transcribed (scored of %d offered; %d skipped, %d failed)", a.Offered, a.Skipped, a.Failed)
		}
		req.Rows = append(req.Rows, []string{label, strconv.Itoa(a.Scored)})
		if a.Scored > 0 {
			req.Rows = append(req.Rows, []string{fmt.Sprintf("  WER above %s", FormatFixed(a.Threshold, 2)), strconv.Itoa(a.Above)})
		}
	}
}

func loadTable(r RunReport) Table {
	s := r.Summary
	rate := Table{Title: "Load", Header: []string{"figure", "value"}}
	add := func(k, v string) { rate.Rows = append(rate.Rows, []string{k, v}) }
	if r.Load != nil {
		l := r.Load
		if l.TargetRate > 0 {
			add("target rate (req/s)", FormatFixed(l.TargetRate, 3))
		}
		add("achieved start rate (req/s)", FormatFixed(l.AchievedRate, 3))
		if s.Mode == "open" {
			add(fmt.Sprintf("late starts (lag > %s)", l.LateThreshold), strconv.Itoa(l.Late))
			add("max scheduling lag (ms)", FormatFixed(float64(l.MaxLag)/float64(time.Millisecond), 3))
		}
	}
	add("duration (s)", FormatFixed(s.DurationS, 3))
	add("request throughput (req/s)", FormatFixed(s.RequestRate, 3))
	add("audio throughput (audio s/s)", FormatFixed(s.Audio.Throughput, 3))
	add("total audio (s)", FormatFixed(s.Audio.TotalDurationS, 3))
	add("total audio frames", strconv.FormatInt(s.Audio.TotalFrames, 10))
	if a := s.Audio; a.InputBytes > 0 {
		add("total input audio (s)", FormatFixed(a.InputDurationS, 3))
		add("total input audio (bytes)", strconv.FormatInt(a.InputBytes, 10))
	}
	if g := s.Goodput; g != nil {
		add("goodput (req/s) "+rate.Footnote(fmt.Sprintf("goodput: %d of %d requests met every per-request SLO (%s)", g.Good, g.Of, strings.Join(g.SLOs, ", "))),
			FormatFixed(g.Rate, 3))
	}
	return rate
}

// The metrics each table shows, in order. A metric not listed is not
// dropped: it lands in the latency table.
var (
	continuityMetrics = []string{summary.MetricUnderrun, summary.MetricStalls, summary.MetricStallTime}
	rtfMetrics        = []string{summary.MetricRTFLastChunk, summary.MetricRTFE2E, summary.MetricRTFServer, summary.MetricAudioRTF}
)

// rtfNotes explain the real-time factors; they print as footnotes.
var rtfNotes = map[string]string{
	summary.MetricRTFLastChunk: "rtf_last_chunk = (last audio chunk - send) / output audio duration",
	summary.MetricRTFE2E:       "rtf_e2e = end-to-end / output audio duration",
	summary.MetricRTFServer:    "rtf_server = generation time / audio duration, as the server reported it",
	summary.MetricAudioRTF:     "audio_rtf = the vLLM-Omni benchmark's RTF: last chunk for chat, end-to-end for speech",
}

// onsetNotes explain the TTFP variants and the audible onset; footnotes.
var onsetNotes = map[string]string{
	summary.MetricTTFPFirstEvent: "ttfp_first_event = the vLLM-Omni benchmark's TTFP: first audio event, even an empty one",
	summary.MetricTTFAAudible:    "ttfa_audible = first chunk holding audible audio (10 ms RMS above --audible-threshold)",
	summary.MetricLeadingSilence: "leading_silence = the audio before the first audible sample",
}

// statsHeader is the column set of a distribution table: median only when
// p50 is not among the percentiles.
// statsOptional are the columns of a distribution a narrow terminal does
// without, least telling first: the percentiles and n stay.
func statsOptional() []string { return []string{"std", "min", "mean", "median", "max"} }

func statsHeader(first string, s *summary.Summary) []string {
	h := []string{first, "n", "mean", "std", "min"}
	if !slices.Contains(s.Percentiles, 50) {
		h = append(h, "median")
	}
	h = append(h, percentileHeaders(s.Percentiles)...)
	return append(h, "max")
}

func statsRow(label string, ms stats.Summary, s *summary.Summary) []string {
	row := []string{label, strconv.Itoa(ms.N), fv(ms.Mean), fv(ms.Std), fv(ms.Min)}
	if !slices.Contains(s.Percentiles, 50) {
		row = append(row, fv(ms.Median))
	}
	for _, p := range ms.Percentiles {
		row = append(row, fv(p.Value))
	}
	return append(row, fv(ms.Max))
}

// metricLabel prints a metric with its unit in parentheses: "ttfp (ms)".
func metricLabel(m summary.Metric) string {
	name := m.Name
	if m.Unit == "" {
		return name
	}
	return strings.TrimSuffix(name, "_"+m.Unit) + " (" + m.Unit + ")"
}

// latencyTable holds latency and RTF distributions. Rows that say nothing
// for this run are left out: scheduling lag in a closed loop (always ~0),
// and an RTF whose figures are identical to one already shown (for chat
// audio_rtf is rtf_last_chunk; for speech it is rtf_e2e).
func latencyTable(s *summary.Summary) Table {
	t := Table{Title: "Latency and real-time factor", Header: statsHeader("metric", s), Optional: statsOptional()}
	var shownRTF []summary.Metric
	var plain []string // notes no cell refers to, after the numbered ones
	for _, m := range s.Metrics {
		if slices.Contains(continuityMetrics, m.Name) {
			continue
		}
		if m.Name == summary.MetricLag && s.Mode != "open" {
			continue
		}
		label := metricLabel(m)
		if m.Name == summary.MetricTTFPFirstEvent {
			if ttfp, ok := s.Metric(summary.MetricTTFP); ok && sameFigures(ttfp, m.Summary) {
				plain = append(plain, fmt.Sprintf("%s (the benchmark's TTFP) is identical to %s in this run and is not shown.", m.Name, summary.MetricTTFP))
				continue
			}
		}
		if note, ok := onsetNotes[m.Name]; ok {
			label += " " + t.Footnote(note)
		}
		if slices.Contains(rtfMetrics, m.Name) {
			if i := slices.IndexFunc(shownRTF, func(o summary.Metric) bool { return sameFigures(o.Summary, m.Summary) }); i >= 0 {
				plain = append(plain, fmt.Sprintf("%s is identical to %s in this run and is not shown.", m.Name, shownRTF[i].Name))
				continue
			}
			shownRTF = append(shownRTF, m)
			label += " " + t.Footnote(rtfNotes[m.Name])
		}
		t.Rows = append(t.Rows, statsRow(label, m.Summary, s))
	}
	if s.FromIntended {
		plain = append(plain, "Open loop: latencies are measured from each request's intended start (scheduling lag included).")
	}
	t.Notes = append(t.Notes, plain...)
	return t
}

// sameFigures reports whether two distributions print identically.
func sameFigures(a, b stats.Summary) bool {
	if a.N != b.N || fv(a.Mean) != fv(b.Mean) || fv(a.Std) != fv(b.Std) || fv(a.Min) != fv(b.Min) || fv(a.Max) != fv(b.Max) || len(a.Percentiles) != len(b.Percentiles) {
		return false
	}
	for i := range a.Percentiles {
		if fv(a.Percentiles[i].Value) != fv(b.Percentiles[i].Value) {
			return false
		}
	}
	return true
}

// continuityTable is the share of responses each player model plays
// without interruption, with the stall figures beside it.
func continuityTable(s *summary.Summary) (Table, bool) {
	if len(s.Continuity) == 0 || s.Continuity[0].Of == 0 {
		return Table{}, false
	}
	ct := Table{Title: "Playback continuity", Header: []string{"player", "continuous", "rate", "stalls", "stalled (s)", "longest (s)"}}
	ref := ct.Footnote("reference: the never-pausing player of the protocol; continuous = longest underrun within the threshold")
	for _, c := range s.Continuity {
		ct.Rows = append(ct.Rows, []string{"reference, " + c.ThresholdMS + " ms " + ref, fmt.Sprintf("%d/%d", c.OK, c.Of), FormatFixed(c.Rate, 4), "-", "-", "-"})
	}
	if p := s.Players; p.Responses > 0 {
		ct.Rows = append(ct.Rows,
			[]string{"stall-and-resume " + ct.Footnote("stall-and-resume: starts at the first chunk, pauses while the buffer is dry"),
				fmt.Sprintf("%d/%d", p.Responses-p.StallResumeStalled, p.Responses), FormatFixed(float64(p.Responses-p.StallResumeStalled)/float64(p.Responses), 4),
				strconv.Itoa(p.StallResumeStalls), FormatFixed(p.StallResumeTotalS, 3), FormatFixed(p.StallResumeLongestS, 3)},
			[]string{"pre-roll " + ct.Footnote(fmt.Sprintf("pre-roll: buffers before it starts; mean start-up delay %s s", FormatFixed(p.PrerollStartupMeanS, 3))),
				fmt.Sprintf("%d/%d", p.Responses-p.PrerollStalled, p.Responses), FormatFixed(float64(p.Responses-p.PrerollStalled)/float64(p.Responses), 4),
				"-", "-", "-"},
		)
	}
	return ct, true
}

// stallTable holds the per-response distributions of underrun and stalls;
// false when there is none to show, or every figure is 0 (a table of zeros
// says nothing the continuity table does not).
func stallTable(s *summary.Summary) (Table, bool) {
	t := Table{Title: "Underrun and stalls per response", Header: statsHeader("metric", s), Optional: statsOptional()}
	nonzero := false
	for _, m := range s.Metrics {
		if slices.Contains(continuityMetrics, m.Name) {
			t.Rows = append(t.Rows, statsRow(metricLabel(m), m.Summary, s))
			nonzero = nonzero || Denoise(m.Summary.Max) != 0 || Denoise(m.Summary.Min) != 0
		}
	}
	return t, nonzero
}

// serverVsClientTable sets the server's figures beside the client's; each
// figure's explanation is a footnote, its unit part of its name.
func serverVsClientTable(cs []Comparison) Table {
	sv := Table{Title: "Server vs client", Header: []string{"figure", "server", "client", "server - client"}}
	for _, c := range cs {
		label := c.Figure
		if c.Unit != "" {
			label += " (" + c.Unit + ")"
		}
		if c.Note != "" {
			label += " " + sv.Footnote(c.Note)
		}
		sv.Rows = append(sv.Rows, []string{label, c.serverCell(), fp(c.Client), c.diffCell()})
	}
	return sv
}

func percentileHeaders(ps []float64) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "p" + strconv.FormatFloat(p, 'f', -1, 64)
	}
	return out
}

// fv formats a figure of the run report, where counts sit beside
// statistics: whole numbers print without decimals.
func fv(v float64) string {
	v = Denoise(v)
	if v == math.Trunc(v) && math.Abs(v) < 1e7 {
		return FormatFixed(v, 0)
	}
	return FormatValue(v)
}

func fp(v *float64) string {
	if v == nil {
		return "-"
	}
	return fv(*v)
}
