package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scrape"
)

// The breakdown of a run (where the time went, stage by stage, replica by
// replica, hop by hop) is computed from the first and last scrapes of
// /metrics, and its timeline from the scrapes between them, taken every
// Config.ScrapeInterval on a goroutine of their own. What the breakdown
// reads of every scrape also goes to the results file as a scrape line, so
// that report rebuilds both without the server (BreakdownOfScrapes).

// breakdownState is what the run keeps for its breakdown between the
// first scrape and finish: the first scrape's selected series, the
// timeline and the start of the measured window. The interval scrapes'
// goroutine owns the timeline and windowStart while it runs; drive waits
// for it to end before finish reads them.
// lineHeadroom is what the buffer of a scrape line adds to the last line's
// length: one part in lineHeadroom.
const lineHeadroom = 16

type breakdownState struct {
	first    breakdown.Series
	firstErr error
	timeline *breakdown.Timeline

	// windowStart is the last interval scrape taken before the measured
	// phase began (nil: none was), the start of the measured window.
	windowStart *breakdown.Series
	// intervals counts the interval scrapes taken or failed.
	intervals int
	// body is the last interval scrape's body, whose array the next one
	// reads into; lineSize is the last scrape line's length, the next
	// one's buffer size: a large exposition is then not allocated anew
	// (and grown step by step) at every scrape.
	body     []byte
	lineSize int

	mu           sync.Mutex
	measuredFrom time.Time // set once by the load's OnBegin
}

// began notes when the measured phase began, for the interval scrapes.
func (bd *breakdownState) began(at time.Time) {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	bd.measuredFrom = at
}

// beforeMeasured reports whether a scrape taken at at precedes the
// measured phase: it does while that phase has not begun.
func (bd *breakdownState) beforeMeasured(at time.Time) bool {
	bd.mu.Lock()
	defer bd.mu.Unlock()
	return bd.measuredFrom.IsZero() || !at.After(bd.measuredFrom)
}

// startIntervalScrapes scrapes /metrics every Config.ScrapeInterval until
// the returned stop is called, which waits for the scrape under way (each
// bounded by --scrape-timeout). It does nothing without a first scrape or
// an interval.
func (r *run) startIntervalScrapes(ctx context.Context) (stop func()) {
	every := r.cfg.ScrapeInterval
	if every <= 0 || r.out.Before == nil || r.bd.firstErr != nil {
		return func() {}
	}
	// One selector for the run's scrapes: a scrape whose lines only
	// changed values costs reading those values.
	sel := scrape.NewSelector(breakdown.Filter())
	r.primeSelector(ctx, sel)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				r.intervalScrape(ctx, sel)
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// primeSelector takes one scrape through sel before the load starts: the
// first scrape sel sees decodes the whole exposition to make its template,
// a cost (a second at 16 stages of 32 replicas) that would otherwise fall
// on the load with the first interval scrape. Its result is not kept (the
// run's first scrape starts the timeline); a failure leaves the template
// to the first interval scrape, which reports the failure if it recurs.
func (r *run) primeSelector(ctx context.Context, sel *scrape.Selector) {
	snap, err := r.cfg.intervalScrapeOptions().FetchUnparsed(ctx, r.metricsURL, nil)
	if err == nil {
		_, _ = sel.Select(snap)
		r.bd.body = snap.Body
	}
}

// intervalScrape takes one scrape during the load: a point of the
// timeline and a scrape line, or, when it fails, a gap with its reason.
// A fetch cut short by the end of the load is neither; one that completed
// is kept even when the load ends while it is decoded, since it is a
// valid reading of the server (the measured window may start at it). It
// decodes only what the breakdown reads, through sel.
func (r *run) intervalScrape(ctx context.Context, sel *scrape.Selector) {
	snap, err := r.cfg.intervalScrapeOptions().FetchUnparsed(ctx, r.metricsURL, r.bd.body)
	if err != nil && ctx.Err() != nil {
		return
	}
	var s breakdown.Series
	if err == nil {
		s, err = breakdown.FromSelected(sel, snap)
		r.bd.body = snap.Body // nothing selected refers to it
	}
	switch {
	case err != nil:
		at := time.Now()
		reason := r.cfg.Redact.String(err.Error() + scrapeHint(err))
		r.bd.timeline.AddGap(at, reason)
		r.bd.intervals++
		r.writeScrape(results.Scrape{Phase: results.ScrapeInterval, At: at, Gap: reason})
	default:
		r.bd.timeline.Add(s)
		r.bd.intervals++
		if r.bd.beforeMeasured(s.At) {
			r.bd.windowStart = &s
		}
		r.writeSeries(results.ScrapeInterval, s, time.Time{})
	}
}

// writeSeries writes one scrape line of s to the results file, if any,
// with when the measured phase began unless that is zero.
func (r *run) writeSeries(phase string, s breakdown.Series, measuredFrom time.Time) {
	// Not json.Marshal, which would check and compact what MarshalJSON
	// wrote: one more pass over a line of megabytes at a large topology.
	// A line's numbers lengthen as the server's counters grow: room for a
	// few more bytes than the last line took spares growing (and copying)
	// a buffer of megabytes by a quarter as soon as one digit is added.
	body, err := s.AppendJSON(make([]byte, 0, r.bd.lineSize+r.bd.lineSize/lineHeadroom))
	r.bd.lineSize = len(body)
	if err != nil {
		r.sinkErr.keep(fmt.Errorf("encoding the %s scrape: %w", phase, err))
		return
	}
	sc := results.Scrape{Phase: phase, At: s.At, Series: body}
	if !measuredFrom.IsZero() {
		sc.MeasuredFrom = &measuredFrom
	}
	r.writeScrape(sc)
}

func (r *run) writeScrape(sc results.Scrape) {
	if r.results != nil {
		r.sinkErr.keep(r.results.gate.WriteScrape(sc))
	}
}

// firstBreakdownScrape selects the first scrape's series, starts the
// timeline with it and writes its scrape line.
func (r *run) firstBreakdownScrape() {
	r.bd.timeline = breakdown.NewTimeline(0)
	if r.out.Before == nil {
		return
	}
	r.bd.first, r.bd.firstErr = breakdown.FromSnapshot(r.out.Before)
	if r.bd.firstErr == nil {
		r.bd.timeline.Add(r.bd.first)
		r.writeSeries(results.ScrapeFirst, r.bd.first, time.Time{})
	}
}

// computeBreakdown breaks the run down from its first and last scrapes
// (Outcome.Breakdown, Timeline), or says why it cannot; nothing with
// --scrape off.
func (r *run) computeBreakdown() {
	out := r.out
	switch {
	case r.cfg.Scrape == ScrapeOff && out.ScrapeNote == "":
		return // the user asked for no look at the server: nothing to say
	case out.Before == nil || out.After == nil:
		why := out.ScrapeNote
		if why == "" {
			why = "the server's /metrics was not scraped"
		}
		out.Breakdown = notComputed(why)
		return
	case r.bd.firstErr != nil:
		out.Breakdown = notComputed(r.cfg.Redact.String(r.bd.firstErr.Error()))
		return
	}
	last, err := breakdown.FromSnapshot(out.After)
	if err != nil {
		out.Breakdown = notComputed(r.cfg.Redact.String(err.Error()))
		return
	}
	r.bd.timeline.Add(last)
	r.writeSeries(results.ScrapeLast, last, out.MeasuredFrom)
	b := breakdown.Compute(r.bd.first, last, ClientFiguresOf(out.Set))
	b.AddTimeline(r.bd.timeline)
	if !out.MeasuredFrom.IsZero() { // else nothing was measured: no window
		b.Measured = measuredWindow(r.bd.windowStart, r.bd.intervals > 0, last, out.Set)
	}
	out.Breakdown, out.Timeline = &b, r.bd.timeline.Points()
}

// measuredWindow breaks down the run's measured window, which excludes
// its warm-up and ramp: from start, the last scrape before the measured
// phase began, to the run's last scrape (taken after every response, so
// the server's counts include them all). Requests the server finished
// between start and the measured phase's first are in the server's side
// of it: a scrape interval shorter than the warm-up keeps them few. It is
// nil when the run had no warm-up or ramp (the run's breakdown is the
// measured window's), and when it took no interval scrape at all (nothing
// was asked of the window: a note would only be noise).
func measuredWindow(start *breakdown.Series, intervals bool, last breakdown.Series, set *summary.Set) *breakdown.Window {
	unmeasured := false
	set.All(func(x *summary.Sample) { unmeasured = unmeasured || x.Warmup() || x.Ramp() })
	switch {
	case !unmeasured, start == nil && !intervals:
		return nil
	case start == nil:
		return &breakdown.Window{Note: "no interval scrape fell in the warm-up or ramp (see " +
			"--scrape-interval): the breakdown above includes them, and the measured window has none of its own"}
	}
	b := breakdown.Compute(*start, last, clientFigures(set, func(x *summary.Sample) bool {
		return !x.Warmup() && !x.Ramp()
	}))
	return &breakdown.Window{Breakdown: &b, Note: fmt.Sprintf("from the interval scrape at %s to the last "+
		"scrape (%.1f s), beside the client's measured requests", start.At.UTC().Format(time.RFC3339), b.Interval)}
}

// notComputed is a breakdown that says why there is none.
func notComputed(why string) *breakdown.Breakdown {
	return &breakdown.Breakdown{Reasons: []string{why}, Stages: []breakdown.StageRow{},
		Edges: []breakdown.EdgeRow{}, Findings: []breakdown.Finding{}}
}

// ClientFiguresOf are the client's means over the requests the server
// counted between the first and last scrapes: every request that
// succeeded, warm-up and ramp included (the server counted them too),
// timed from when each was sent.
func ClientFiguresOf(set *summary.Set) breakdown.ClientFigures {
	return clientFigures(set, func(*summary.Sample) bool { return true })
}

// clientFigures are the client's means over the successful requests keep
// takes.
func clientFigures(set *summary.Set, keep func(*summary.Sample) bool) breakdown.ClientFigures {
	var c breakdown.ClientFigures
	var ttfp, ttfpN float64
	set.All(func(x *summary.Sample) {
		if !set.OK(x) || !keep(x) {
			return
		}
		c.Requests++
		c.MeanE2E += x.E2ES
		c.MeanQueue += x.QueueS
		if x.HasAudio() && x.TTFPS > 0 {
			ttfp, ttfpN = ttfp+x.TTFPS, ttfpN+1
		}
	})
	if c.Requests == 0 {
		return breakdown.ClientFigures{}
	}
	c.MeanE2E /= float64(c.Requests)
	c.MeanQueue /= float64(c.Requests)
	if ttfpN > 0 {
		c.MeanTTFP = ttfp / ttfpN
	}
	return c
}

// BreakdownOfScrapes rebuilds a run's breakdown and timeline from the
// scrape lines of its results file (results.Header.Scrapes) and its
// requests, as the run computed them: nil when the file has no scrape
// lines (written before they existed, or by a run that did not scrape).
// Its view is BreakdownView with MeasuredFrom(scrapes).
func BreakdownOfScrapes(scrapes []results.Scrape, set *summary.Set) (*breakdown.Breakdown, []breakdown.Point) {
	if len(scrapes) == 0 {
		return nil, nil
	}
	tl := breakdown.NewTimeline(0)
	measuredFrom := MeasuredFrom(scrapes)
	var first, last, windowStart *breakdown.Series
	intervals := false
	for i, sc := range scrapes {
		intervals = intervals || sc.Phase == results.ScrapeInterval
		if sc.Gap != "" || sc.Series == nil {
			tl.AddGap(sc.At, sc.Gap)
			continue
		}
		var s breakdown.Series
		if err := json.Unmarshal(sc.Series, &s); err != nil {
			return notComputed(fmt.Sprintf("scrape line %d of the results file: %v", i+1, err)), nil
		}
		tl.Add(s)
		switch sc.Phase {
		case results.ScrapeFirst:
			first = &s
		case results.ScrapeLast:
			last = &s
		case results.ScrapeInterval:
			if !measuredFrom.IsZero() && !s.At.After(measuredFrom) {
				windowStart = &s
			}
		}
	}
	if first == nil || last == nil {
		return notComputed("the results file has no last scrape: the run was interrupted " +
			"or its second scrape failed"), tl.Points()
	}
	b := breakdown.Compute(*first, *last, ClientFiguresOf(set))
	b.AddTimeline(tl)
	if !measuredFrom.IsZero() {
		b.Measured = measuredWindow(windowStart, intervals, *last, set)
	}
	return &b, tl.Points()
}

// BreakdownView is the breakdown as the run's report shows it, its
// timeline on the time axis of the client's charts: seconds since the
// measured phase began (measuredFrom; when zero, the first scrape).
func BreakdownView(b *breakdown.Breakdown, points []breakdown.Point, measuredFrom time.Time) *report.BreakdownView {
	if measuredFrom.IsZero() && len(points) > 0 {
		measuredFrom = points[0].Start
	}
	return breakdown.View(b, points, measuredFrom)
}

// MeasuredFrom is when the measured phase of the run whose scrape lines
// these are began, as its last scrape line says (zero when it does not).
func MeasuredFrom(scrapes []results.Scrape) time.Time {
	for _, sc := range scrapes {
		if sc.MeasuredFrom != nil {
			return *sc.MeasuredFrom
		}
	}
	return time.Time{}
}

// ServerFigures are the server figures SLOs read from b (nil: none, and
// such SLOs have no data).
func ServerFigures(b *breakdown.Breakdown) slo.ServerFigures {
	if b == nil {
		return nil
	}
	return *b
}
