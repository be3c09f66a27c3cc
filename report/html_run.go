package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/stats"
)

// Over-time charts bin the run into at most this many intervals, so a long
// soak test draws as fast as a short run.
const maxTimeBins = 600

// RunSections builds the HTML sections of a run report: the tables of
// RunTables, then charts drawn from the records (warm-up excluded, as in the
// summary). The charts carry these data-chart names: ttfp-cdf, ttfa-cdf, e2e-cdf,
// underrun-dist, worst-timeline, request-rate, in-flight, errors-over-time,
// and server-vs-client when the report has server figures. A nil Summary is
// computed from recs with default options.
func RunSections(r RunReport, recs []results.Record) []HTMLSection {
	return RunSectionsSet(r, summary.SetOf(recs), summary.WorstOf(recs))
}

// RunSectionsSet is RunSections from a run's requests in compact form (what
// the runner keeps) and the worst response picked as they went by.
func RunSectionsSet(r RunReport, set *summary.Set, worst *summary.WorstPicker) []HTMLSection {
	if r.Summary == nil {
		r.Summary = summary.ComputeSet(set, summary.Options{})
	}
	s := r.Summary
	measured := measuredOf(set)

	// The page header says what ran; the server-vs-client table moves to
	// its own section beside its chart.
	tablesOnly := r
	tablesOnly.ServerVsClient, tablesOnly.Breakdown = nil, nil
	out := []HTMLSection{{Title: "Summary", Tables: resultTables(tablesOnly)}}
	if banner, failed := failureBanner(s); failed {
		out = append([]HTMLSection{banner}, out...)
	}

	out = append(out, HTMLSection{
		Title:  "Latency distributions",
		charts: latencyCharts(measured, s.FromIntended),
	})
	out = append(out, HTMLSection{
		Title:  "Playback continuity",
		charts: []chart{underrunChart(measured, s), worstTimelineChart(worst)},
	})
	load := HTMLSection{
		Title:  "Load over time",
		Notes:  []string{"Time is measured from the start of the run; warm-up requests are left out."},
		charts: overTimeCharts(measured),
	}
	if r.Breakdown != nil && len(r.Breakdown.Timelines) > 0 {
		load.Notes = append(load.Notes, "The server's charts (its /metrics, scraped during the run) share the time axis "+
			"of the client's; each value is plotted at the end of the interval it covers.")
		load.charts = append(load.charts, serverTimelineCharts(r.Breakdown.Timelines)...)
		shareXAxis(load.charts)
	}
	out = append(out, load)
	if len(r.ServerVsClient) > 0 {
		out = append(out, serverVsClientSection(r.ServerVsClient))
	}
	if r.Breakdown != nil {
		out = append(out, breakdownSection(r.Breakdown))
	}
	return out
}

// latencyCharts are the CDFs of TTFP and e2e, with the same selection and
// units as the summary (successful requests; TTFP of those with audio;
// scheduling lag added in an open loop measured from the intended start).
func latencyCharts(recs measured, fromIntended bool) []chart {
	var ttfp, ttfa, e2e []float64
	for _, r := range recs.samples {
		if !recs.set.OK(r) {
			continue
		}
		e2e = append(e2e, r.Latency(r.E2ES)*1000)
		if r.HasAudio() {
			ttfp = append(ttfp, r.Latency(r.TTFPS)*1000)
		}
		if r.TTFAAudibleS > 0 {
			ttfa = append(ttfa, r.Latency(r.TTFAAudibleS)*1000)
		}
	}
	origin := "from send"
	if fromIntended {
		origin = "from intended start"
	}
	return []chart{
		cdfChart("ttfp-cdf", "Time to first audio packet (TTFP), "+origin, "TTFP (ms)", "ms", ttfp),
		cdfChart("ttfa-cdf", "Time to first audible audio (TTFA), "+origin, "TTFA audible (ms)", "ms", ttfa),
		cdfChart("e2e-cdf", "End-to-end latency, "+origin, "end-to-end latency (ms)", "ms", e2e),
	}
}

// cdfChart is a one-series CDF with the p50, p95 and p99 marked.
func cdfChart(id, title, xLabel, unit string, values []float64) chart {
	px, py, sorted := cdfPoints(values, maxCDFPoints)
	c := chart{id: id, title: title, xLabel: xLabel, yLabel: "requests at or below (%)", yFrom0: true,
		series: []series{{xs: px, ys: py, step: true}}}
	if len(sorted) == 0 {
		return c
	}
	for _, p := range []float64{50, 95, 99} {
		v := stats.Percentile(sorted, p)
		c.vlines = append(c.vlines, refLine{value: v, label: "p" + strconv.FormatFloat(p, 'f', -1, 64) + " " + fv(v) + " " + unit})
	}
	c.caption = fmt.Sprintf("%d requests; min %s %s, max %s %s.", len(sorted), fv(sorted[0]), unit, fv(sorted[len(sorted)-1]), unit)
	return c
}

// underrunChart is the histogram of each response's maximum underrun under
// the reference player, with the continuity thresholds marked.
func underrunChart(recs measured, s *summary.Summary) chart {
	c := chart{id: "underrun-dist", kind: kindHist, title: "Maximum underrun per response (reference player)",
		xLabel: "maximum underrun (s)", yLabel: "responses (count)"}
	var us []float64
	zero := 0
	for _, r := range recs.samples {
		if u, ok := r.Underrun(); recs.set.OK(r) && ok && finite(u) {
			us = append(us, u)
			if u == 0 {
				zero++
			}
		}
	}
	for _, ct := range s.Continuity {
		if ms, err := strconv.ParseFloat(ct.ThresholdMS, 64); err == nil {
			c.vlines = append(c.vlines, refLine{value: ms / 1000, label: "threshold " + ct.ThresholdMS + " ms"})
		}
	}
	if len(us) == 0 {
		c.caption = "No response had a continuity result."
		return c
	}
	c.edges, c.counts = histogram(us, 20)
	c.caption = fmt.Sprintf("%d responses; %d played without any underrun; worst %s s.", len(us), zero, fv(slices.Max(us)))
	return c
}

// histogram bins non-negative values into about target bins of a 1-2-5
// width starting at 0 (a value on an inner edge goes to the upper bin).
func histogram(values []float64, target int) (edges, counts []float64) {
	top := 0.0
	for _, v := range values {
		top = math.Max(top, v)
	}
	width := 0.01 // all zero: one 10 ms bin says "nothing"
	if top > 0 {
		width = niceStep(top, target)
	}
	// The epsilon puts a value that is a whole number of bins (0.3 with
	// width 0.02, which divides to 14.999999999999998) on its upper bin.
	bin := func(v float64) int { return int(math.Floor(math.Max(v, 0)/width + 1e-9)) }
	n := bin(top) + 1
	counts = make([]float64, n)
	for _, v := range values {
		counts[min(bin(v), n-1)]++
	}
	edges = make([]float64, n+1)
	for i := range edges {
		edges[i] = float64(i) * width
	}
	return edges, counts
}

// worstTimelineChart draws the chunk arrivals of the worst response against
// the playback position of the three player models.
func worstTimelineChart(p *summary.WorstPicker) chart {
	c := chart{id: "worst-timeline", title: "Worst response: audio received vs playback position",
		xLabel: "time since the request was sent (s)", yLabel: "audio (s)"}
	r, underrun, ok := p.Worst()
	if !ok {
		c.caption = "No response carried a chunk timeline."
		return c
	}
	in := inputOf(r)
	rx, ry := receivedCurve(in)
	fx, fy := referenceCurve(in)
	stall := playerCurve(in, 0)
	// The pre-roll player is drawn even when it started at once (its line
	// then lies on the stall-and-resume line, dotted so both show); a record
	// without its result gets the run default, a 200 ms buffer.
	preNote := ""
	var pre playback
	if r.Continuity != nil && r.Continuity.Preroll != nil {
		pre = playerCurve(in, r.Continuity.Preroll.StartupDelayS)
	} else {
		pre = prerollCurve(in, continuity.PrerollConfig{BufferS: 0.2})
		preNote = ", simulated with a 200 ms buffer"
	}
	end := max(rx[len(rx)-1], fx[len(fx)-1], stall.ts[len(stall.ts)-1])
	if pre.ok {
		end = max(end, pre.ts[len(pre.ts)-1])
	}
	// Hold the received total to the right edge so the step reads as a level.
	rx, ry = append(rx, end), append(ry, ry[len(ry)-1])
	rx, ry = thin(rx, ry, maxLinePts)
	c.series = []series{
		{name: "audio received", xs: rx, ys: ry, step: true},
		{name: "reference player (never pauses)", xs: fx, ys: fy, dashed: true},
		{name: "stall-and-resume player", xs: stall.ts, ys: stall.pos},
	}
	c.caption = fmt.Sprintf("Request %s (seq %d, %d chunks): reference player max underrun %s s; stall-and-resume %d stall(s), %s s in all",
		r.ID, r.Seq, len(r.ChunkArrivalsS), fv(underrun), stall.stalls, fv(stall.totalStallS))
	if pre.ok {
		c.series = append(c.series, series{name: "pre-roll player (start-up " + fv(pre.startupDelayS) + " s" + preNote + ")", xs: pre.ts, ys: pre.pos, dotted: true})
		c.caption += fmt.Sprintf("; pre-roll %d stall(s), %s s in all", pre.stalls, fv(pre.totalStallS))
	}
	c.caption += ". Where a player's line is above the received line it had nothing to play; flat stretches are stalls."
	return c
}

// Over-time charts aim at this many bins: enough to show the shape of a
// run, few enough that each bin holds several requests.
const targetTimeBins = 120

// timeBins chooses the bin width (1 s for short runs, a wider 1-2-5 width
// for longer ones) and the bin count covering [0, end].
func timeBins(end float64) (width float64, n int) {
	width = math.Max(1, niceStep(end, targetTimeBins))
	for end/width > maxTimeBins {
		width *= 2
	}
	n = max(int(math.Ceil(end/width)), 1)
	return width, n
}

// perSecond is a step series of events per second in each bin of width w,
// held to the end of the last bin.
func perSecond(times []float64, w float64, n int) (xs, ys []float64) {
	counts := make([]float64, n)
	for _, t := range times {
		if finite(t) {
			counts[min(max(int(math.Floor(t/w)), 0), n-1)]++
		}
	}
	for i, c := range counts {
		xs, ys = append(xs, float64(i)*w), append(ys, c/w)
	}
	return append(xs, float64(n)*w), append(ys, counts[n-1]/w)
}

// overTimeCharts are the request rate, the requests in flight and the
// errors by class over the run.
func overTimeCharts(recs measured) []chart {
	rate := chart{id: "request-rate", title: "Requests per second", xLabel: "time since run start (s)", yLabel: "requests per second (req/s)", yFrom0: true}
	inflight := chart{id: "in-flight", title: "Requests in flight", xLabel: "time since run start (s)", yLabel: "requests in flight (count)", yFrom0: true}
	errs := chart{id: "errors-over-time", title: "Errors per second by class", xLabel: "time since run start (s)", yLabel: "errors per second (errors/s)", yFrom0: true, emptyText: "no errors"}
	if len(recs.samples) == 0 {
		return []chart{rate, inflight, errs}
	}
	end := 0.0
	var sent, done []float64
	byClass := map[string][]float64{}
	for _, r := range recs.samples {
		fin := r.SentS + r.E2ES
		end = math.Max(end, math.Max(r.SentS, fin))
		sent = append(sent, r.SentS)
		if recs.set.OK(r) {
			done = append(done, fin)
		} else {
			class := recs.set.ErrorClass(r)
			byClass[class] = append(byClass[class], fin)
		}
	}
	w, n := timeBins(end)
	sx, sy := perSecond(sent, w, n)
	cx, cy := perSecond(done, w, n)
	rate.series = []series{{name: "sent", xs: sx, ys: sy, step: true}, {name: "completed", xs: cx, ys: cy, step: true, dashed: true}}
	rate.caption = fmt.Sprintf("Mean rate in %s s bins; %d requests sent, %d completed.", fv(w), len(sent), len(done))

	inflight.series, inflight.caption = inFlightSeries(recs, end)
	if ramp, ok := rampBand(recs); ok {
		rate.bands, inflight.bands, errs.bands = []band{ramp}, []band{ramp}, []band{ramp}
		rate.caption += " Shaded: the ramp phase, whose requests the figures leave out."
	}

	classes := results.ErrorClasses()
	for k := range byClass { // a class this build does not know still shows
		if !slices.Contains(classes, k) {
			classes = append(classes, k)
		}
	}
	total := 0
	for _, cl := range classes {
		ts := byClass[cl]
		if len(ts) == 0 {
			continue
		}
		total += len(ts)
		ex, ey := perSecond(ts, w, n)
		name := cl
		if name == "" {
			name = "unknown"
		}
		errs.series = append(errs.series, series{name: name, xs: ex, ys: ey, step: true})
	}
	if total == 0 {
		errs.caption = "No request failed."
	} else {
		errs.caption = fmt.Sprintf("%d failed requests, placed at the time each failure was seen; mean rate in %s s bins.", total, fv(w))
	}
	return []chart{rate, inflight, errs}
}

// rampBand is the span of the ramp phase: from the first ramp arrival to
// the first measured one (the last ramp arrival when none follows). ok is
// false for a run without a ramp.
func rampBand(recs measured) (band, bool) {
	first, last, measuredFrom := math.Inf(1), math.Inf(-1), math.Inf(1)
	for _, r := range recs.samples {
		if r.Ramp() {
			first, last = math.Min(first, r.SentS), math.Max(last, r.SentS)
		} else {
			measuredFrom = math.Min(measuredFrom, r.SentS)
		}
	}
	if math.IsInf(first, 1) {
		return band{}, false
	}
	end := last
	if measuredFrom > last && !math.IsInf(measuredFrom, 1) {
		end = measuredFrom
	}
	return band{from: first, to: end, name: "ramp phase"}, true
}

// inFlightSeries is the number of requests between send and end over time:
// exact steps for small runs, the peak per time bucket for large ones.
func inFlightSeries(recs measured, end float64) ([]series, string) {
	type event struct {
		t     float64
		delta int
	}
	events := make([]event, 0, 2*len(recs.samples))
	for _, r := range recs.samples {
		events = append(events, event{r.SentS, +1}, event{r.SentS + r.E2ES, -1})
	}
	// Ends before starts at the same instant: a closed loop hands a slot
	// over, it does not momentarily run one request more.
	slices.SortFunc(events, func(a, b event) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return a.delta - b.delta
	})
	level := 0
	if len(events) <= 2*maxLinePts {
		xs, ys := []float64{0}, []float64{0}
		for _, e := range events {
			level += e.delta
			xs, ys = append(xs, e.t), append(ys, float64(level))
		}
		return []series{{xs: xs, ys: ys, step: true}}, ""
	}
	w := end / maxTimeBins
	if !(w > 0) {
		w = 1
	}
	peaks := make([]float64, maxTimeBins)
	j := 0
	for b := range peaks {
		peak := level
		for ; j < len(events) && events[j].t < float64(b+1)*w; j++ {
			level += events[j].delta
			peak = max(peak, level)
		}
		peaks[b] = float64(peak)
	}
	var xs, ys []float64
	for b, p := range peaks {
		xs, ys = append(xs, float64(b)*w), append(ys, p)
	}
	xs, ys = append(xs, end), append(ys, peaks[len(peaks)-1])
	return []series{{xs: xs, ys: ys, step: true}}, "Peak in each " + fv(w) + " s interval."
}

// serverVsClientSection is the comparison table and, for the figures both
// sides state, a bar chart of the two values.
func serverVsClientSection(rows []Comparison) HTMLSection {
	// The tolerance column only when some figure has one: a column of
	// blanks says nothing.
	withTolerance := slices.ContainsFunc(rows, func(r Comparison) bool { return r.Tolerance != "" })
	t := Table{Title: "Server vs client", Header: []string{"figure", "server", "client", "server - client", "unit", "note"}}
	if withTolerance {
		t.Header = []string{"figure", "server", "client", "server - client", "unit", "tolerance", "note"}
	}
	c := chart{id: "server-vs-client", kind: kindHBars, title: "Server vs client",
		xLabel: "share of the larger of the two values (%)", yLabel: "figure (unit)",
		bars: hbars{names: []string{"server", "client"}}}
	for _, r := range rows {
		row := []string{r.Figure, r.serverCell(), fp(r.Client), r.diffCell(), r.Unit, r.Note}
		if withTolerance {
			row = []string{r.Figure, r.serverCell(), fp(r.Client), r.diffCell(), r.Unit, r.Tolerance, r.Note}
		}
		t.Rows = append(t.Rows, row)
		if r.Server == nil || r.Client == nil {
			continue
		}
		label := r.Figure
		if r.Unit != "" {
			label += " (" + r.Unit + ")"
		}
		c.bars.rows = append(c.bars.rows, label)
		c.bars.values = append(c.bars.values, []float64{*r.Server, *r.Client})
	}
	sec := HTMLSection{Title: "Server vs client", Tables: []Table{t}}
	if len(c.bars.rows) == 0 {
		sec.Notes = []string{"No figure has both a server and a client value, so there is nothing to chart."}
		return sec
	}
	c.caption = "Each row is scaled to the larger of its two values; the numbers are the values themselves."
	sec.charts = []chart{c}
	return sec
}

// measured are the measured (non-warm-up) requests of a Set, which the
// charts draw.
type measured struct {
	set     *summary.Set
	samples []*summary.Sample
}

func measuredOf(set *summary.Set) measured {
	m := measured{set: set}
	set.All(func(x *summary.Sample) {
		if !x.Warmup() {
			c := *x // All's Sample is valid during the call only
			m.samples = append(m.samples, &c)
		}
	})
	return m
}

// breakdownSection is where the time went by the server's metrics: the
// waterfall of the client's mean latency, then the tables.
func breakdownSection(v *BreakdownView) HTMLSection {
	sec := HTMLSection{Title: "Where the time went", Tables: v.Tables}
	wf := chart{id: "breakdown-waterfall", title: "The client's mean latency, part by part", kind: kindWaterfall,
		xLabel: "mean time per request (ms)", parts: v.Parts, emptyText: "cannot be split"}
	if len(v.Parts) > 0 {
		wf.caption = "Each bar starts where the one above ended: the last ends at the client's mean e2e. " +
			"Stages and transfers are the server's own sums over its counts; the rest of the server is " +
			"queueing and orchestration outside the stages; the client side is the network and the client."
	} else {
		wf.caption = v.Note
	}
	sec.charts = []chart{wf}
	return sec
}

// shareXAxis gives x/y charts one x axis: the span of all their data.
func shareXAxis(cs []chart) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for i := range cs {
		if xlo, xhi, _, _, ok := cs[i].xyBounds(); ok {
			lo, hi = math.Min(lo, xlo), math.Max(hi, xhi)
		}
	}
	if lo > hi {
		return
	}
	for i := range cs {
		cs[i].xSpan = []float64{lo, hi}
	}
}

// serverTimelineCharts draws the server's timelines (each interval's value
// held over the interval), a failed scrape as a marked vertical line.
func serverTimelineCharts(ts []ServerTimeline) []chart {
	out := make([]chart, 0, len(ts))
	for _, t := range ts {
		c := chart{id: t.ID, title: t.Title, xLabel: "time since run start (s)", yLabel: t.YLabel, yFrom0: true,
			emptyText: "not exposed by the server"}
		for _, s := range t.Series {
			c.series = append(c.series, series{name: s.Name, xs: s.Xs, ys: s.Ys})
		}
		for _, g := range t.Gaps {
			c.vlines = append(c.vlines, refLine{value: g, label: "scrape failed"})
		}
		out = append(out, c)
	}
	return out
}
