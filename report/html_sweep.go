package report

import (
	"cmp"
	"math"
	"slices"
	"strconv"
	"strings"
)

// SweepLevel is one step of a sweep or capacity search: the load level X
// (concurrency or rate, named by XLabel with its unit) and the figures
// measured there, keyed as in sweepFigures ("audio_ttfp_p95" in ms, ...).
type SweepLevel struct {
	X       float64
	XLabel  string
	Figures map[string]float64
	// SLO is the level's verdict, "pass" or "MISS"; "" when no SLO was
	// given. SLOMissed says which SLOs a missed level missed, and by how
	// much (a footnote of the table).
	SLO, SLOMissed string
	// ClientSaturated is the load generator's warning when it was itself
	// the bottleneck at this level ("" when it kept up).
	ClientSaturated string
}

// SLOLine is a service-level objective drawn as a horizontal line on the
// chart of its figure.
type SLOLine struct {
	Figure string // a SweepLevel.Figures key
	Value  float64
	Label  string // default "SLO <figure> <value>"
}

// sweepChartSpec describes one sweep chart: the figures it draws and the
// legend name of each ("" when the chart's title names its one line).
type sweepChartSpec struct {
	id, title, yLabel string
	figures, names    []string
	caption           string
}

// sweepCharts lists the sweep charts in page order.
func sweepCharts() []sweepChartSpec {
	return []sweepChartSpec{
		{"sweep-ttfp", "Audio TTFP", "TTFP (ms)", []string{"audio_ttfp_p50", "audio_ttfp_p95"}, []string{"p50", "p95"}, ""},
		{"sweep-e2e", "End-to-end latency, p95", "end-to-end p95 (ms)", []string{"e2e_p95"}, []string{""}, ""},
		{"sweep-continuity", "Playback continuity", "continuous responses (fraction)", []string{"continuity_ok_rate"}, []string{""}, ""},
		{"sweep-rtf", "Real-time factor (last chunk), p50", "RTF p50 (ratio)", []string{"rtf_last_chunk_p50"}, []string{""},
			"RTF = (last audio chunk - send) / audio duration; below 1 the audio arrives faster than it plays."},
		{"sweep-request-throughput", "Request throughput", "completed requests per second (req/s)", []string{"request_throughput"}, []string{""}, ""},
		{"sweep-audio-throughput", "Audio throughput", "audio seconds per wall second (s/s)", []string{"audio_throughput"}, []string{""}, ""},
		{"sweep-errors", "Error rate", "failed requests (fraction)", []string{"error_rate"}, []string{""}, ""},
	}
}

// SweepSections builds a sweep's (or capacity search's) sections: a table
// of every level and curves of each figure against the level, with the SLO
// lines on the chart of their figure. Charts (data-chart names):
// sweep-ttfp, sweep-e2e, sweep-continuity, sweep-rtf,
// sweep-request-throughput, sweep-audio-throughput, sweep-errors, and
// sweep-<figure> for an SLO on any other figure.
func SweepSections(levels []SweepLevel, slos []SLOLine) []HTMLSection {
	xLabel := "load level"
	for _, l := range levels {
		if l.XLabel != "" {
			xLabel = l.XLabel
			break
		}
	}
	sorted := slices.Clone(levels)
	slices.SortStableFunc(sorted, func(a, b SweepLevel) int { return cmp.Compare(a.X, b.X) })

	specs := sweepCharts()
	covered := map[string]bool{}
	for _, sp := range specs {
		for _, f := range sp.figures {
			covered[f] = true
		}
	}
	for _, s := range slos {
		if !covered[s.Figure] {
			covered[s.Figure] = true
			specs = append(specs, sweepChartSpec{id: "sweep-" + slug(s.Figure), title: s.Figure, yLabel: s.Figure, figures: []string{s.Figure}, names: []string{""}})
		}
	}

	var charts []chart
	for _, sp := range specs {
		c := chart{id: sp.id, title: sp.title + " vs " + xLabel, xLabel: xLabel, yLabel: sp.yLabel, yFrom0: true, caption: sp.caption}
		for i, f := range sp.figures {
			s := series{name: sp.names[i], markers: true}
			for _, l := range sorted {
				v, ok := l.Figures[f]
				if !ok {
					v = math.NaN() // a gap in the curve
				}
				s.xs, s.ys = append(s.xs, l.X), append(s.ys, v)
			}
			c.series = append(c.series, s)
		}
		for _, s := range slos {
			if slices.Contains(sp.figures, s.Figure) {
				c.hlines = append(c.hlines, refLine{value: s.Value, label: sloLabel(s)})
			}
		}
		charts = append(charts, c)
	}

	levelsSec := HTMLSection{Title: "Sweep levels", Tables: []Table{levelTable(levels, xLabel)}}
	for _, s := range slos {
		levelsSec.Notes = append(levelsSec.Notes, sloLabel(s))
	}
	return []HTMLSection{levelsSec, {Title: "Sweep curves", charts: charts}}
}

func sloLabel(s SLOLine) string {
	if s.Label != "" {
		return s.Label
	}
	return "SLO " + s.Figure + " " + strconv.FormatFloat(s.Value, 'g', -1, 64) // the limit as written
}

// levelColumn is a figure column of the levels table: its header, with
// the unit, and how a value prints.
type levelColumn struct {
	figure, header string
	format         func(float64) string
}

// levelColumns are the figures the levels table shows, chosen to fit a
// page without a sideways scroll: the latencies a user sets SLOs on, the
// continuity, throughput and errors. The rest (RTF, audio throughput, the
// figures of SLOs) have their curve below.
func levelColumns() []levelColumn {
	ms := func(v float64) string { return FormatFixed(v, 1) }
	pct := func(v float64) string { return FormatFixed(100*v, 1) }
	return []levelColumn{
		{"audio_ttfp_p50", "TTFP p50 (ms)", ms},
		{"audio_ttfp_p95", "TTFP p95 (ms)", ms},
		{"e2e_p95", "e2e p95 (ms)", func(v float64) string { return FormatFixed(v, 0) }},
		{"continuity_ok_rate", "continuous (%)", pct},
		{"request_throughput", "throughput (req/s)", func(v float64) string { return FormatFixed(v, 2) }},
		{"error_rate", "errors (%)", pct},
	}
}

// levelTable lists every level in one table: the level, the figures of
// levelColumns, the SLO verdict (when SLOs were given) and whether the
// load generator kept up, whose warnings are footnotes.
func levelTable(levels []SweepLevel, xLabel string) Table {
	cols := levelColumns()
	withSLO := slices.ContainsFunc(levels, func(l SweepLevel) bool { return l.SLO != "" })
	t := Table{Title: "Levels", Header: []string{xLabel}}
	for _, c := range cols {
		t.Header = append(t.Header, c.header)
	}
	if withSLO {
		t.Header = append(t.Header, "SLOs")
	}
	t.Header = append(t.Header, "load generator")
	for _, l := range levels {
		row := []string{strconv.FormatFloat(l.X, 'g', -1, 64)}
		for _, c := range cols {
			if v, ok := l.Figures[c.figure]; ok && !math.IsNaN(v) && !math.IsInf(v, 0) {
				row = append(row, c.format(v))
			} else {
				row = append(row, "-")
			}
		}
		if withSLO {
			cell := cmp.Or(l.SLO, "-")
			if l.SLOMissed != "" {
				cell += " " + t.Footnote(xLabel+" "+strconv.FormatFloat(l.X, 'g', -1, 64)+": "+l.SLOMissed)
			}
			row = append(row, cell)
		}
		gen := "kept up"
		if l.ClientSaturated != "" {
			gen = "saturated " + t.Footnote(xLabel+" "+strconv.FormatFloat(l.X, 'g', -1, 64)+": "+l.ClientSaturated)
		}
		t.Rows = append(t.Rows, append(row, gen))
	}
	t.Notes = append(t.Notes, "RTF and audio throughput per level: their curves below.")
	return t
}

// slug makes a name safe and stable as a data-chart suffix: lower case
// letters, digits, '_' and '-'; anything else becomes '-'.
func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}
