package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// SchemaVersion is the version of Document's JSON form.
const SchemaVersion = 1

// Document is the JSON form of a sweep or a capacity search (`--format
// json`):
//
//	schema_version  1
//	command         "sweep" or "capacity"
//	axis, unit      "concurrency" ("concurrent streams") or "rate" ("req/s")
//	slos            the SLO expressions as written
//	levels          one entry per run, in run order (LevelDoc), each with
//	                its attribution when the run scraped the server
//	stopped_early   sweep only, when it stopped early: level, reason, skipped levels
//	capacity        capacity only: the answer (CapacityDoc)
//
// Undefined figures (no data) are null.
type Document struct {
	SchemaVersion int          `json:"schema_version"`
	Command       string       `json:"command"`
	Axis          Axis         `json:"axis"`
	Unit          string       `json:"unit"`
	SLOs          []string     `json:"slos"`
	Levels        []LevelDoc   `json:"levels"`
	StoppedEarly  *Stop        `json:"stopped_early,omitempty"`
	Capacity      *CapacityDoc `json:"capacity,omitempty"`
}

// LevelDoc is one run: its level, the sweep figures, the SLO verdicts and
// the full run summary (the schema of `omnibench run --summary`).
type LevelDoc struct {
	Run     int     `json:"run,omitempty"`   // capacity: 1-based run number
	Phase   Phase   `json:"phase,omitempty"` // capacity: bracket or bisect
	Level   float64 `json:"level"`
	Partial bool    `json:"partial,omitempty"` // interrupted: decides nothing
	// ClientSaturated is the load generator's warning when it was the
	// bottleneck at this level (its latencies include client delay).
	ClientSaturated string `json:"client_saturated,omitempty"`
	// ClientWarning is the load generator's warning when something else
	// delayed it at this level (a busy host, the server on its cores).
	ClientWarning string           `json:"client_warning,omitempty"`
	Figures       Figures          `json:"figures"`
	SLOPass       bool             `json:"slo_pass"`
	SLOs          []slo.Result     `json:"slos"`
	Summary       *summary.Summary `json:"summary"`
	// Attribution splits the level's mean latency into the server's
	// stages, transfers and rest and the client's remainder (the run's
	// breakdown); absent when the run did not scrape the server.
	Attribution *breakdown.Attribution `json:"attribution,omitempty"`
}

// CapacityDoc is the answer of a capacity search. Capacity is null when no
// level passed; fail is null when no level failed.
type CapacityDoc struct {
	Found      bool        `json:"found"`
	Capacity   stats.Float `json:"capacity"`
	Fail       stats.Float `json:"fail"`
	Resolution float64     `json:"resolution"`
	Start      float64     `json:"start"`
	Max        float64     `json:"max"`
	Runs       int         `json:"runs"`
	MaxRuns    int         `json:"max_runs"`
	End        End         `json:"end"` // resolved, max-level, max-runs, start-fails; "" when interrupted
	Answer     string      `json:"answer"`
	Margins    []string    `json:"margins"`
}

// MarshalJSON writes the figures with snake_case names; NaN becomes null.
func (f Figures) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Requests              int         `json:"requests"`
		Completed             int         `json:"completed"`
		Failed                int         `json:"failed"`
		ErrorRate             stats.Float `json:"error_rate"`
		TTFPP50MS             stats.Float `json:"audio_ttfp_p50_ms"`
		TTFPP95MS             stats.Float `json:"audio_ttfp_p95_ms"`
		E2EP95MS              stats.Float `json:"e2e_p95_ms"`
		ContinuityOKRate      stats.Float `json:"continuity_ok_rate"`
		ContinuityThresholdMS string      `json:"continuity_threshold_ms,omitempty"`
		RTFP50                stats.Float `json:"rtf_last_chunk_p50"`
		RequestThroughput     stats.Float `json:"request_throughput"`
		AudioThroughput       stats.Float `json:"audio_throughput"`
	}{
		f.Requests, f.Completed, f.Failed, stats.Float(f.ErrorRate), stats.Float(f.TTFPP50MS), stats.Float(f.TTFPP95MS),
		stats.Float(f.E2EP95MS), stats.Float(f.ContinuityOKRate), f.ContinuityThresholdMS, stats.Float(f.RTFP50),
		stats.Float(f.RequestThroughput), stats.Float(f.AudioThroughput),
	})
}

func sloExprs(slos []slo.SLO) []string {
	out := make([]string, 0, len(slos))
	for _, s := range slos {
		out = append(out, strings.TrimSpace(s.Expr))
	}
	return out
}

func levelDoc(p Point) LevelDoc {
	return LevelDoc{Level: p.Level, Partial: p.Partial, ClientSaturated: p.ClientSaturated, ClientWarning: p.ClientWarning,
		Figures: p.Figures, SLOPass: p.Pass(), SLOs: nonNil(p.SLOs), Summary: p.Summary, Attribution: p.Attribution}
}

func nonNil(rs []slo.Result) []slo.Result {
	if rs == nil {
		return []slo.Result{}
	}
	return rs
}

// Document returns the sweep's JSON document.
func (r *Result) Document() Document {
	d := Document{SchemaVersion: SchemaVersion, Command: "sweep", Axis: r.Axis, Unit: r.Axis.Unit(),
		SLOs: sloExprs(r.SLOs), Levels: []LevelDoc{}, StoppedEarly: r.Stop}
	for _, p := range r.Points {
		d.Levels = append(d.Levels, levelDoc(p))
	}
	return d
}

// Document returns the search's JSON document.
func (s *Search) Document() Document {
	d := Document{SchemaVersion: SchemaVersion, Command: "capacity", Axis: s.Axis, Unit: s.Axis.Unit(),
		SLOs: sloExprs(s.SLOs), Levels: []LevelDoc{}}
	for _, st := range s.Steps {
		l := levelDoc(st.Point)
		l.Run, l.Phase = st.Run, st.Phase
		d.Levels = append(d.Levels, l)
	}
	c := &CapacityDoc{Found: s.Found, Capacity: stats.Float(math.NaN()), Fail: stats.Float(s.Fail),
		Resolution: s.Resolution, Start: s.Start, Max: s.Max, Runs: s.Runs(), MaxRuns: s.MaxRuns,
		End: s.End, Answer: s.Answer(), Margins: s.Margins()}
	if s.Found {
		c.Capacity = stats.Float(s.Capacity)
	}
	if c.Margins == nil {
		c.Margins = []string{}
	}
	d.Capacity = c
	return d
}

// figureColumns are the figure columns of the tables, after the level.
// Units are in the headers; one cell holds one figure.
func figureColumns(points []Point) []string {
	th := "100"
	for _, p := range points {
		if p.Figures.ContinuityThresholdMS != "" {
			th = p.Figures.ContinuityThresholdMS
			break
		}
	}
	return []string{"ok", "errors", "TTFP p50 (ms)", "TTFP p95 (ms)", "e2e p95 (ms)",
		"continuous at " + th + " ms", "RTF p50", "req/s", "audio s/s"}
}

func figureCells(f Figures) []string {
	return []string{
		fmt.Sprintf("%d/%d", f.Completed, f.Requests), strconv.Itoa(f.Failed),
		num(f.TTFPP50MS, 1), num(f.TTFPP95MS, 1), num(f.E2EP95MS, 1),
		percent(f.ContinuityOKRate), num(f.RTFP50, 3), num(f.RequestThroughput, 3), num(f.AudioThroughput, 3),
	}
}

func num(v float64, prec int) string { return report.FormatFixed(v, prec) }

func percent(v float64) string { return report.FormatPct(v * 100) }

// verdict is the SLO cell: "-" without SLOs, "pass", or "MISS" with a
// footnote in t that names every missed SLO and by how much.
func verdict(t *report.Table, a Axis, p Point) string {
	switch {
	case len(p.SLOs) == 0:
		return "-"
	case p.Pass():
		return "pass"
	}
	var msgs []string
	for _, r := range p.Failed() {
		msgs = append(msgs, r.Message)
	}
	return "MISS " + t.Footnote(string(a)+" "+a.Format(p.Level)+": "+strings.Join(msgs, "; "))
}

// cell is the level's cell; an interrupted level carries a footnote.
func (a Axis) cell(t *report.Table, p Point) string {
	s := a.Format(p.Level)
	if p.ClientSaturated != "" || p.ClientWarning != "" {
		s += "*" // footnote: clientNotes
	}
	if p.Partial {
		s += " " + t.Footnote("interrupted: this level's figures cover only the requests that finished, and decide nothing")
	}
	return s
}

// Tables returns the sweep table: one row per level, the SLO verdicts when
// SLOs were given, and notes for every missed SLO and the early stop.
func (r *Result) Tables() []report.Table {
	t := report.Table{Title: "Sweep over " + string(r.Axis), Header: append([]string{r.Axis.Label()}, figureColumns(r.Points)...)}
	if len(r.SLOs) > 0 {
		t.Header = append(t.Header, "SLOs")
	}
	for _, p := range r.Points {
		row := append([]string{r.Axis.cell(&t, p)}, figureCells(p.Figures)...)
		if len(r.SLOs) > 0 {
			row = append(row, verdict(&t, r.Axis, p))
		}
		t.Rows = append(t.Rows, row)
	}
	if len(r.SLOs) > 0 {
		t.Notes = append(t.Notes, "SLOs: "+strings.Join(sloExprs(r.SLOs), "; "))
	}
	if n := r.StopNote(); n != "" {
		t.Notes = append(t.Notes, n)
	}
	t.Notes = append(t.Notes, clientNotes(r.Axis, r.Points)...)
	return []report.Table{t}
}

// Tables returns the search path (one row per run, with the SLO that
// decided it: the first missed, or the tightest that held, explained in a
// footnote) and, as notes, the answer and its margins.
func (s *Search) Tables() []report.Table {
	t := report.Table{
		Title:  "Capacity search over " + string(s.Axis),
		Header: []string{"run", "phase", s.Axis.Label(), "verdict", "TTFP p95 (ms)", "continuous", "errors", "deciding SLO"},
	}
	for _, st := range s.Steps {
		p := st.Point
		v, deciding := "pass", "-"
		if f := p.Failed(); len(f) > 0 {
			v, deciding = "FAIL", strings.TrimSpace(f[0].SLO.Expr)+" "+t.Footnote(f[0].Message)
		} else if tr, ok := p.Tightest(); ok {
			deciding = strings.TrimSpace(tr.SLO.Expr) + " " + t.Footnote("tightest: "+tr.Message)
		}
		if p.Partial {
			v = "interrupted"
		}
		t.Rows = append(t.Rows, []string{strconv.Itoa(st.Run), string(st.Phase), s.Axis.cell(&t, p), v,
			num(p.Figures.TTFPP95MS, 1), percent(p.Figures.ContinuityOKRate), strconv.Itoa(p.Figures.Failed), deciding})
	}
	t.Notes = append(t.Notes, "SLOs: "+strings.Join(sloExprs(s.SLOs), "; "))
	t.Notes = append(t.Notes, s.Answer())
	t.Notes = append(t.Notes, s.Margins()...)
	points := make([]Point, len(s.Steps))
	for i, st := range s.Steps {
		points[i] = st.Point
	}
	t.Notes = append(t.Notes, clientNotes(s.Axis, points)...)
	return []report.Table{t}
}

// htmlLevel is a point as a chart level: the sweep figures plus the
// observed value of every SLO figure, so each SLO line has its curve.
func htmlLevel(a Axis, p Point) report.SweepLevel {
	figs := p.Figures.Map()
	for _, r := range p.SLOs {
		if _, ok := figs[r.SLO.Figure]; !ok && !r.NoData && !math.IsNaN(r.Observed) {
			figs[r.SLO.Figure] = r.Observed
		}
	}
	l := report.SweepLevel{X: p.Level, XLabel: a.Label(), Figures: figs, ClientSaturated: p.ClientSaturated}
	l.SLO, l.SLOMissed = sloVerdict(p)
	return l
}

// sloVerdict is the level's SLO verdict for the HTML table, "pass" or
// "MISS" ("" without SLOs), and for a miss every missed SLO and by how
// much.
func sloVerdict(p Point) (verdict, missed string) {
	switch {
	case len(p.SLOs) == 0:
		return "", ""
	case p.Pass():
		return "pass", ""
	}
	var msgs []string
	for _, r := range p.Failed() {
		msgs = append(msgs, r.Message)
	}
	return "MISS", strings.Join(msgs, "; ")
}

// HTMLLevels returns the sweep's levels for report.SweepSections
// (interrupted levels left out).
func (r *Result) HTMLLevels() []report.SweepLevel {
	var out []report.SweepLevel
	for _, p := range r.Points {
		if !p.Partial {
			out = append(out, htmlLevel(r.Axis, p))
		}
	}
	return out
}

// HTMLLevels returns the search's runs as levels for report.SweepSections.
func (s *Search) HTMLLevels() []report.SweepLevel {
	var out []report.SweepLevel
	for _, st := range s.Steps {
		if !st.Point.Partial {
			out = append(out, htmlLevel(s.Axis, st.Point))
		}
	}
	return out
}

// SLOLines returns one chart line per SLO, on the chart of its figure.
func SLOLines(slos []slo.SLO) []report.SLOLine {
	out := make([]report.SLOLine, 0, len(slos))
	for _, s := range slos {
		out = append(out, report.SLOLine{Figure: s.Figure, Value: s.Value, Label: "SLO " + strings.TrimSpace(s.Expr)})
	}
	return out
}

// clientNotes are the footnotes of the levels marked "*": measured by a
// saturated or delayed load generator.
func clientNotes(a Axis, points []Point) []string {
	var out []string
	for _, p := range points {
		if w := cmp.Or(p.ClientSaturated, p.ClientWarning); w != "" {
			out = append(out, fmt.Sprintf("* %s %s: %s", a, a.Format(p.Level), w))
		}
	}
	return out
}
