package breakdown

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/omnibench/omnibench/report"
)

// Titles of the breakdown's tables.
const (
	TitleStages      = "Where the time went: stages and replicas (server)"
	TitleEdges       = "Where the time went: transfers between stages (server)"
	TitleAttribution = "Where the time went: the client's mean latency"
	TitleMeasured    = "Where the time went: the measured window (no warm-up, no ramp)"
)

// View is the breakdown as the report shows it: its tables (which fit 100
// columns), the attribution's parts for the waterfall and the timeline's
// gauges and rates as charts, their times in seconds since origin (the
// start of the run's measured phase, the client charts' zero).
func View(b *Breakdown, points []Point, origin time.Time) *report.BreakdownView {
	v := &report.BreakdownView{Timelines: timelineCharts(points, origin)}
	if !b.Computable {
		v.Note = "the breakdown cannot be computed: " + strings.Join(b.Reasons, "; ")
		v.Tables = []report.Table{{Title: TitleStages, Notes: []string{v.Note}}}
		return v
	}
	v.Tables = []report.Table{stageTable(b)}
	if len(b.Edges) > 0 {
		v.Tables = append(v.Tables, edgeTable(b.Edges))
	}
	at := attributionTable(b.Attribution)
	v.Tables = append(v.Tables, at)
	if b.Attribution.Consistent {
		v.Parts = waterfallParts(b.Attribution)
	} else {
		v.Note = at.Notes[len(at.Notes)-1]
	}
	if b.Measured != nil {
		v.Tables = append(v.Tables, measuredTable(*b.Measured))
	}
	return v
}

// measuredTable is the attribution of the measured window, or the note
// saying why there is none.
func measuredTable(w Window) report.Table {
	t := report.Table{Title: TitleMeasured}
	switch {
	case w.Breakdown == nil:
	case !w.Breakdown.Computable:
		t.Notes = []string{"the breakdown cannot be computed: " + strings.Join(w.Breakdown.Reasons, "; ")}
	default:
		t.Notes = attributionTable(w.Breakdown.Attribution).Notes
	}
	t.Notes = append([]string{w.Note}, t.Notes...)
	return t
}

// ms formats seconds as milliseconds; "-" when unknown.
func ms(s float64) string {
	if !finite(s) {
		return "-"
	}
	return report.FormatValue(report.Denoise(s * 1e3))
}

// estimate formats an estimated quantile in milliseconds, marked "~".
func estimate(s float64) string {
	if !finite(s) {
		return "-"
	}
	return "~" + ms(s)
}

// count formats a count or a rate: whole numbers without decimals.
func count(v float64) string {
	v = report.Denoise(v)
	switch {
	case !finite(v):
		return "-"
	case v == math.Trunc(v) && math.Abs(v) < 1e9:
		return report.FormatFixed(v, 0)
	}
	return report.FormatValue(v)
}

// stageTable has a row per replica of each stage; its notes are the
// findings.
func stageTable(b *Breakdown) report.Table {
	t := report.Table{Title: TitleStages,
		Header: []string{"stage/replica", "requests", "share", "queue ms", "prefill ms", "decode ms",
			"e2e ms", "e2e p95 ms", "tok/s", "KV peak"},
		Optional: []string{"prefill ms", "KV peak", "tok/s", "decode ms"}}
	for _, r := range b.Stages {
		kv := "-"
		if finite(r.KVUsagePeak) {
			kv = report.FormatPct(r.KVUsagePeak * 100)
		}
		t.Rows = append(t.Rows, []string{r.Stage + "/" + r.Replica, count(r.Requests), report.FormatPct(r.Share * 100),
			ms(r.Queue.Mean), ms(r.Prefill.Mean), ms(r.Decode.Mean), ms(r.E2E.Mean), estimate(r.E2E.P95Estimate),
			count(r.TokensPerSecond), kv})
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%s pipeline requests over %s s; means are exact (sums over counts), "+
		"~ marks a p95 estimated from the histogram's buckets.", count(b.Requests), count(b.Interval)))
	for _, f := range b.Findings {
		t.Notes = append(t.Notes, "finding: "+f.Note)
	}
	return t
}

// edgeTable has a row per edge "from stage/replica -> to stage/replica".
func edgeTable(edges []EdgeRow) report.Table {
	t := report.Table{Title: TitleEdges,
		Header:   []string{"edge", "hops", "hops/req", "KB/hop", "tx ms", "in flight ms", "in flight p95 ms", "rx ms"},
		Optional: []string{"KB/hop", "hops"}}
	for _, e := range edges {
		kb := math.NaN()
		if e.Hops > 0 {
			kb = e.Bytes / e.Hops / 1024
		}
		t.Rows = append(t.Rows, []string{e.Name(), count(e.Hops), count(e.HopsPerRequest), count(kb),
			ms(e.Tx.Mean), ms(e.InFlight.Mean), estimate(e.InFlight.P95Estimate), ms(e.Rx.Mean)})
	}
	return t
}

// attributionTable says the attribution as lines of parts: the client's
// mean e2e and the means it splits into.
func attributionTable(a Attribution) report.Table {
	t := report.Table{Title: TitleAttribution}
	t.Notes = append(t.Notes, fmt.Sprintf("server: pipeline e2e %s ms, TTFP %s ms; client: e2e %s ms, TTFP %s ms "+
		"(%s requests by the server, %d by the client)", ms(a.ServerE2E), ms(a.ServerTTFP), ms(a.ClientE2E),
		ms(a.ClientTTFP), count(a.Requests), a.ClientRequests))
	if !a.Consistent {
		t.Notes = append(t.Notes, "the latency cannot be split into parts: "+strings.Join(a.Reasons, "; "))
		return t
	}
	var parts []string
	for _, p := range waterfallParts(a) {
		parts = append(parts, p.Label+" "+ms(p.Seconds))
	}
	total := a.ServerE2E
	if finite(a.ClientE2E) {
		total = a.ClientE2E
	}
	t.Notes = append(t.Notes, fmt.Sprintf("%s ms = %s (ms, means per request)", ms(total), strings.Join(parts, " + ")))
	return t
}

// waterfallParts are the attribution's parts in the order a request meets
// them; the client's side only when the client's figures were given.
func waterfallParts(a Attribution) []report.WaterfallPart {
	var out []report.WaterfallPart
	for _, p := range a.Stages {
		out = append(out, report.WaterfallPart{Label: "stage " + p.Stage, Seconds: p.Seconds})
	}
	out = append(out, report.WaterfallPart{Label: "transfers", Seconds: a.TransferTime},
		report.WaterfallPart{Label: "server rest", Seconds: a.Rest})
	if finite(a.ClientRemainder) {
		out = append(out, report.WaterfallPart{Label: "client side", Seconds: a.ClientRemainder})
	}
	return out
}

// timelineCharts draws the timeline's gauges and rates: the queues
// (running and waiting, pipeline and per stage), the request rates and the
// KV-cache usage, each point at the end of its interval.
func timelineCharts(points []Point, origin time.Time) []report.ServerTimeline {
	if len(points) == 0 {
		return nil
	}
	queues := report.ServerTimeline{ID: "server-queues", Title: "Server: requests running and waiting",
		YLabel: "requests (count)"}
	rates := report.ServerTimeline{ID: "server-rates", Title: "Server: finished requests per second",
		YLabel: "requests per second (req/s)"}
	kv := report.ServerTimeline{ID: "server-kv-cache", Title: "Server: KV-cache usage", YLabel: "usage (%)"}
	// Index by chart and name; the series slices grow, so by position.
	index := map[string]int{}
	var x0, x1 float64
	add := func(c *report.ServerTimeline, name string, y float64) {
		key := c.ID + "\x00" + name
		i, ok := index[key]
		if !ok {
			c.Series = append(c.Series, report.TimeSeries{Name: name})
			i = len(c.Series) - 1
			index[key] = i
		}
		s := &c.Series[i]
		// The interval's value, held from its start to its end.
		s.Xs, s.Ys = append(s.Xs, x0, x1), append(s.Ys, y, y)
	}
	for _, p := range points {
		x0, x1 = p.Start.Sub(origin).Seconds(), p.End.Sub(origin).Seconds()
		if p.valueless() {
			for _, c := range []*report.ServerTimeline{&queues, &rates, &kv} {
				c.Gaps = append(c.Gaps, x1)
			}
			continue
		}
		for _, g := range p.Gauges {
			switch g.Name {
			case GaugeKVCacheUsage:
				add(&kv, "stage "+g.Stage+"/"+g.Replica, g.Mean*100)
			default:
				add(&queues, seriesName(g.Name, g.Stage, g.Replica), g.Mean)
			}
		}
		for _, r := range p.Rates {
			if r.Name != RateStageTokens {
				add(&rates, seriesName(r.Name, r.Stage, r.Replica), r.PerSecond)
			}
		}
	}
	return []report.ServerTimeline{queues, rates, kv}
}

// seriesName is a gauge's or rate's legend entry.
func seriesName(name, stage, replica string) string {
	name = strings.ReplaceAll(name, "_", " ")
	if stage == "" {
		return name
	}
	return name + " " + stage + "/" + replica
}
