package report

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// attrFloat reads a numeric attribute of n (0 when absent).
func attrFloat(t *testing.T, n *node, name string) float64 {
	t.Helper()
	s, ok := n.attrs[name]
	if !ok {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("<%s %s=%q>: %v", n.name, name, s, err)
	}
	return v
}

// textExtent estimates the horizontal extent of an SVG text element the way
// the chart code lays text out (perChar per character, or its textLength).
func textExtent(t *testing.T, n *node, perChar float64) (lo, hi float64) {
	x := attrFloat(t, n, "x")
	w := perChar * float64(len([]rune(n.textOf())))
	if tl := attrFloat(t, n, "textLength"); tl > 0 {
		w = tl
	}
	switch n.attrs["text-anchor"] {
	case "end":
		return x - w, x
	case "middle":
		return x - w/2, x + w/2
	}
	return x, x + w
}

// checkLabelsInside fails for a reference-line label (p50/p95/p99,
// thresholds, SLOs) outside its chart's plot area.
func checkLabelsInside(t *testing.T, id string, svg *node) {
	t.Helper()
	frames := svg.all(func(n *node) bool { return n.name == "rect" && n.attrs["class"] == "frame" })
	if len(frames) != 1 {
		t.Fatalf("chart %q has %d plot frames", id, len(frames))
	}
	left := attrFloat(t, frames[0], "x")
	right := left + attrFloat(t, frames[0], "width")
	for _, l := range svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "reflabel" }) {
		lo, hi := textExtent(t, l, refCharW)
		if lo < left-0.5 || hi > right+0.5 {
			t.Errorf("chart %q: label %q spans [%.1f, %.1f], outside the plot [%.1f, %.1f]", id, l.textOf(), lo, hi, left, right)
		}
	}
}

// checkSeriesPresent fails when a chart's legend promises a line the chart
// does not draw; it returns how many entries it checked.
func checkSeriesPresent(t *testing.T, id string, svg *node) int {
	t.Helper()
	drawn := map[string]bool{}
	for _, p := range svg.all(func(n *node) bool { return n.name == "path" }) {
		drawn[p.attrs["data-series"]] = true
	}
	for _, l := range svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "lg" }) {
		if !drawn[l.textOf()] {
			t.Errorf("chart %q: the legend promises %q, which is not drawn", id, l.textOf())
		}
	}
	return len(svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "lg" }))
}

// TestHTMLSeriesWithoutData: a series with no point is not promised by the
// legend as a line; its entry says it has no data.
func TestHTMLSeriesWithoutData(t *testing.T) {
	nan := math.NaN()
	c := chart{id: "gappy", title: "TTFP vs level", xLabel: "concurrency", yLabel: "TTFP (ms)", series: []series{
		{name: "p50", xs: []float64{1, 2}, ys: []float64{10, 12}},
		{name: "p95", xs: []float64{1, 2}, ys: []float64{nan, nan}},
	}}
	root := parsePage(t, render(t, HTMLReport{Title: "t", Sections: []HTMLSection{{Title: "s", charts: []chart{c}}}}))
	svg := charts(t, root)["gappy"]
	if n := checkSeriesPresent(t, "gappy", svg); n != 1 {
		t.Errorf("%d drawn legend entries, want 1 (p50)", n)
	}
	if !strings.Contains(svg.textOf(), "p95 (no data)") {
		t.Errorf("the empty series' legend entry does not say so: %q", svg.textOf())
	}
}

// TestHTMLReferenceLabelsInsidePlot: percentile labels of a CDF whose p99
// sits at the right edge, and every other reference label of the run and
// sweep pages, stay inside their plot area and off their own line.
func TestHTMLReferenceLabelsInsidePlot(t *testing.T) {
	recs := sampleRecords(400, 3)
	h := sampleHeader("tts-short")
	levels, slos := sampleSweep()
	// A CDF whose top percentiles crowd the right edge with long labels.
	edge := cdfChart("edge-cdf", "TTFP", "TTFP (ms)", "ms", []float64{10, 11, 12, 13, 14, 15, 7777, 7777.5, 7778})
	secs := append(RunSections(sampleRunReport(recs, h), recs), SweepSections(levels, slos)...)
	secs = append(secs, HTMLSection{Title: "edge", charts: []chart{edge}})
	root := parsePage(t, render(t, HTMLReport{Title: "labels", Header: h, Sections: secs}))
	got := charts(t, root)
	if got["edge-cdf"] == nil {
		t.Fatal("edge chart missing")
	}
	legends := 0
	for id, svg := range got {
		checkLabelsInside(t, id, svg)
		legends += checkSeriesPresent(t, id, svg)
	}
	if legends < 8 {
		t.Errorf("only %d legend entries checked: the legend markup changed", legends)
	}
	// Each percentile label sits beside its line, not across it.
	svg := got["edge-cdf"]
	lines := svg.all(func(n *node) bool { return n.name == "line" && n.attrs["class"] == "ref" })
	labels := svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "reflabel" })
	if len(lines) != 3 || len(labels) != 3 {
		t.Fatalf("edge-cdf: %d lines, %d labels, want 3 each", len(lines), len(labels))
	}
	for i, l := range labels {
		x := attrFloat(t, lines[i], "x1")
		if lo, hi := textExtent(t, l, refCharW); lo < x && x < hi {
			t.Errorf("label %q [%.1f, %.1f] lies across its line at %.1f", l.textOf(), lo, hi, x)
		}
	}
	if ys := []float64{attrFloat(t, labels[0], "y"), attrFloat(t, labels[1], "y"), attrFloat(t, labels[2], "y")}; ys[0] == ys[1] || ys[1] == ys[2] {
		t.Errorf("percentile labels share a row: y = %v", ys)
	}
}

// TestHTMLWorstTimelineDrawsEveryPlayer: the three player models and the
// received audio are all drawn, also when the pre-roll player started at
// once (its line then coincides with stall-and-resume) and when a record
// carries no pre-roll result.
func TestHTMLWorstTimelineDrawsEveryPlayer(t *testing.T) {
	recs := sampleRecords(60, 5)
	for i := range recs {
		if c := recs[i].Continuity; c != nil {
			if i%2 == 0 {
				c.Preroll = &results.PlayerResult{StartupDelayS: 0}
			} else {
				c.Preroll = nil
			}
		}
	}
	for _, keep := range []bool{true, false} {
		rs := slices.Clone(recs)
		if !keep { // no record carries a pre-roll result
			for i := range rs {
				if rs[i].Continuity != nil {
					cp := *rs[i].Continuity
					cp.Preroll = nil
					rs[i].Continuity = &cp
				}
			}
		}
		c := worstTimelineChart(summary.WorstOf(rs))
		root := parsePage(t, render(t, HTMLReport{Title: "t", Sections: []HTMLSection{{Title: "s", charts: []chart{c}}}}))
		svg := charts(t, root)["worst-timeline"]
		var names []string
		for _, p := range svg.all(func(n *node) bool { return n.name == "path" }) {
			names = append(names, p.attrs["data-series"])
		}
		want := []string{"audio received", "reference player (never pauses)", "stall-and-resume player", "pre-roll player"}
		if len(names) != len(want) {
			t.Fatalf("worst-timeline draws %q, want %q", names, want)
		}
		for i, w := range want {
			if !strings.HasPrefix(names[i], w) {
				t.Errorf("series %d is %q, want %q", i, names[i], w)
			}
			if !strings.Contains(svg.textOf(), w) {
				t.Errorf("legend lacks %q", w)
			}
		}
	}
}

// TestHTMLServerVsClientLabelsWhole: a long figure name wraps in the bar
// chart instead of being cut off.
func TestHTMLServerVsClientLabelsWhole(t *testing.T) {
	long := "RTF mean (server: generation time / audio duration, without network and queueing)"
	sec := serverVsClientSection([]Comparison{
		{Figure: long, Server: ptr(0.30), Client: ptr(0.32), Diff: ptr(-0.02)},
		{Figure: "TTFP p95", Server: ptr(242.5), Client: ptr(162.4), Diff: ptr(80.1), Unit: "ms"},
	})
	root := parsePage(t, render(t, HTMLReport{Title: "t", Sections: []HTMLSection{sec}}))
	svg := charts(t, root)["server-vs-client"]
	text := svg.textOf()
	if strings.Contains(text, "…") {
		t.Errorf("a label was truncated: %q", text)
	}
	for _, w := range strings.Fields(long) {
		if !strings.Contains(text, w) {
			t.Errorf("label word %q missing from the chart", w)
		}
	}
	for _, l := range svg.all(func(n *node) bool {
		return n.name == "text" && n.attrs["text-anchor"] == "end" && n.attrs["class"] == ""
	}) {
		if lo, _ := textExtent(t, l, charW); lo < 0 {
			t.Errorf("label %q starts left of the chart (%.1f)", l.textOf(), lo)
		}
	}
}

// TestHTMLTablesBreakOnlyBetweenWords: table cells may wrap at spaces but
// never inside a word ("ru n", "concurren cy"); a table wider than the
// page scrolls instead.
func TestHTMLTablesBreakOnlyBetweenWords(t *testing.T) {
	rule := regexp.MustCompile(`(?m)^th, td \{[^}]*\}`).FindString(pageTemplate)
	if rule == "" || strings.Contains(rule, "anywhere") || strings.Contains(rule, "break-all") || !strings.Contains(rule, "overflow-wrap: break-word") {
		t.Errorf("table cell style lets words break inside: %q", rule)
	}
	if !strings.Contains(pageTemplate, ".tw { max-width: 100%; overflow-x: auto;") {
		t.Errorf("wide tables do not scroll")
	}
}

// TestHTMLPagesOverSeveralRuns: a sweep page describes every level (not
// its first), a compare page both runs' targets.
func TestHTMLPagesOverSeveralRuns(t *testing.T) {
	var runs []NamedHeader
	for _, c := range []int{1, 2, 4} {
		h := *sampleHeader("tts-short")
		h.Concurrency = c
		h.StartedAt = "2025-06-01T12:00:0" + strconv.Itoa(c) + "Z"
		runs = append(runs, NamedHeader{Header: h})
	}
	meta := func(r HTMLReport) map[string]string {
		out := map[string]string{}
		for _, row := range buildPage(r).Meta {
			out[row[0]] = row[1]
		}
		return out
	}
	m := meta(HTMLReport{Runs: runs})
	if m["concurrency"] != "1, 2, 4" || m["runs"] != "3" || m["scenario"] != "tts-short" || !strings.Contains(m["started at"], "first of 3") {
		t.Errorf("sweep page header: %v", m)
	}
	a, b := *sampleHeader("tts-short"), *sampleHeader("tts-short")
	b.Target = "http://127.0.0.1:9000"
	m = meta(HTMLReport{Runs: []NamedHeader{{"A", a}, {"B", b}}})
	if m["target"] != "A: http://127.0.0.1:8000; B: http://127.0.0.1:9000" {
		t.Errorf("compare page target: %q", m["target"])
	}
}

// TestHTMLSLOsFirst: the SLO verdicts open the run report's summary.
func TestHTMLSLOsFirst(t *testing.T) {
	recs := sampleRecords(100, 2)
	h := sampleHeader("tts-short")
	rep := sampleRunReport(recs, h)
	s, err := slo.ParseAll([]string{"audio_ttfp_p95<1ms"})
	if err != nil {
		t.Fatal(err)
	}
	rep.SLOs = slo.Evaluate(s, rep.Summary, recs)
	secs := RunSections(rep, recs)
	if len(secs) == 0 || len(secs[0].Tables) == 0 || !strings.HasPrefix(secs[0].Tables[0].Title, "Service-level objectives: 1 of 1 missed") {
		t.Errorf("the first table of the page is not the SLO verdicts: %+v", secs[0].Tables[0].Title)
	}
}

// TestHTMLRunHeaderSaysWhatRan: the page header names the kind and model
// beside the scenario.
func TestHTMLRunHeaderSaysWhatRan(t *testing.T) {
	recs := sampleRecords(20, 1)
	var rows []string
	for _, r := range buildPage(HTMLReport{Header: sampleHeader("tts-short"), Workload: WorkloadOf(recs)}).Meta {
		rows = append(rows, r[0]+"="+r[1])
	}
	i := slices.Index(rows, "scenario=tts-short")
	if i < 0 || i+2 >= len(rows) || rows[i+1] != "kind=speech" || rows[i+2] != "model=Qwen3-Omni-30B-A3B" {
		t.Errorf("page header rows %q", rows)
	}
}
