package breakdown

import (
	"math"
	"slices"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

// DefaultMaxPoints is a Timeline's cap when none is given: an hour of
// five-second scrapes.
const DefaultMaxPoints = 720

// Names of a Point's gauges and rates.
const (
	GaugePipelineRunning = "pipeline_running"
	GaugePipelineWaiting = "pipeline_waiting"
	GaugeStageRunning    = "stage_running"
	GaugeStageWaiting    = "stage_waiting"
	GaugeKVCacheUsage    = "kv_cache_usage"

	RatePipelineRequests = "pipeline_requests"
	RateStageRequests    = "stage_requests"
	RateStageTokens      = "stage_generated_tokens"
)

// Timeline accumulates what happened between consecutive scrapes of a
// run: one Point per interval, holding the gauges as the later scrape saw
// them and the counters as rates. It keeps the last scrape's Series and at
// most its cap of points: when full, it merges neighbouring points in
// pairs, so a long run keeps its whole span at a coarser step. Not safe for
// concurrent use: one sink feeds it.
type Timeline struct {
	maxPoints int
	prev      Series
	hasPrev   bool
	points    []Point
}

// Point is one interval of a Timeline.
type Point struct {
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Gaps counts the failed scrapes inside the interval; Gap is the first
	// one's reason. A point of failed scrapes only has no values.
	Gaps   int     `json:"gaps,omitempty"`
	Gap    string  `json:"gap,omitempty"`
	Gauges []Gauge `json:"gauges,omitempty"`
	Rates  []Rate  `json:"rates,omitempty"`
	// E2EP95Estimate is the pipeline e2e's estimated p95 over the interval
	// (over a merged point: the larger of its halves'); NaN without requests.
	E2EP95Estimate float64 `json:"e2e_p95_estimate"`
}

// Gauge is one gauge series over a point: its value at the point's end, its
// time-weighted mean and its peak over the scrapes merged into the point.
type Gauge struct {
	Name    string  `json:"name"`
	Stage   string  `json:"stage,omitempty"`
	Replica string  `json:"replica,omitempty"`
	Last    float64 `json:"last"`
	Mean    float64 `json:"mean"`
	Peak    float64 `json:"peak"`
}

// Rate is one counter's increase per second over a point.
type Rate struct {
	Name      string  `json:"name"`
	Stage     string  `json:"stage,omitempty"`
	Replica   string  `json:"replica,omitempty"`
	PerSecond float64 `json:"per_s"`
}

// NewTimeline returns a timeline of at most maxPoints points
// (DefaultMaxPoints when maxPoints < 2).
func NewTimeline(maxPoints int) *Timeline {
	if maxPoints < 2 {
		maxPoints = DefaultMaxPoints
	}
	return &Timeline{maxPoints: maxPoints}
}

// Add records a scrape. From the second on, it closes the interval since
// the previous successful scrape.
func (t *Timeline) Add(s Series) {
	if t.hasPrev && s.At.After(t.prev.At) {
		t.push(intervalPoint(t.prev, s))
	}
	t.prev, t.hasPrev = s, true
}

// AddGap records a scrape that failed at at, with its reason: a gap in the
// timeline, not an error. The next successful scrape's interval starts at
// the last successful one.
func (t *Timeline) AddGap(at time.Time, reason string) {
	start := at
	if t.hasPrev {
		start = t.prev.At
	}
	t.push(Point{Start: start, End: at, Gaps: 1, Gap: reason, E2EP95Estimate: math.NaN()})
}

// Points returns a copy of the points, oldest first.
func (t *Timeline) Points() []Point { return append([]Point(nil), t.points...) }

func (t *Timeline) push(p Point) {
	if len(t.points) >= t.maxPoints {
		merged := t.points[:0]
		for i := 0; i+1 < len(t.points); i += 2 {
			merged = append(merged, mergePoints(t.points[i], t.points[i+1]))
		}
		if len(t.points)%2 == 1 {
			merged = append(merged, t.points[len(t.points)-1])
		}
		t.points = merged
	}
	t.points = append(t.points, p)
}

// pointFamilies are the families intervalPoint reads, a few of those a
// Series keeps: the stage latency histograms and the transfer families,
// most of a large server's series, are read only by Compute, from the
// run's first and last scrapes.
func pointFamilies() []string {
	return []string{famPipelineRunning, famPipelineWaiting, famPipelineE2E,
		famStageRunning, famStageWaiting, famStageKVUsage, famStageE2E, famStageGenTokens}
}

// pointView is the part of s that intervalPoint reads. It shares the
// families of s: diffing only these leaves the others unallocated, a
// difference of every family being most of an interval scrape's garbage.
func (s Series) pointView() scrape.Families {
	view := make(scrape.Families, len(pointFamilies()))
	for _, name := range pointFamilies() {
		if f, ok := s.families[name]; ok {
			view[name] = f
		}
	}
	return view
}

// intervalPoint is the point between two scrapes.
func intervalPoint(before, after Series) Point {
	d := scrape.Diff(before.pointView(), after.pointView())
	dt := after.At.Sub(before.At).Seconds()
	p := Point{Start: before.At, End: after.At, E2EP95Estimate: math.NaN()}
	gauge := func(name, family string, match map[string]string) {
		if g, ok := d.Gauge(family, match); ok {
			p.Gauges = append(p.Gauges, Gauge{Name: name, Stage: match[labelStage], Replica: match[labelReplica],
				Last: g.After, Mean: g.After, Peak: g.After})
		}
	}
	rate := func(name string, increase float64, match map[string]string) {
		p.Rates = append(p.Rates, Rate{Name: name, Stage: match[labelStage], Replica: match[labelReplica],
			PerSecond: increase / dt})
	}
	gauge(GaugePipelineRunning, famPipelineRunning, nil)
	gauge(GaugePipelineWaiting, famPipelineWaiting, nil)
	if e2e, ok := d.HistogramDelta(famPipelineE2E, nil); ok {
		rate(RatePipelineRequests, e2e.Count, nil)
		if e2e.Count > 0 {
			p.E2EP95Estimate = e2e.Quantile(0.95)
		}
	}
	// Per stage and replica, each family's series are summed in one pass
	// (as Delta.Gauge, HistogramDelta and CounterDelta would sum them for
	// each replica's labels, in a pass per replica: quadratic in replicas).
	last := func(s *scrape.SeriesDelta) float64 { return s.After }
	running, okRunning := stageSums(d, famStageRunning, last, scrape.TypeGauge, scrape.TypeUntyped)
	waiting, okWaiting := stageSums(d, famStageWaiting, last, scrape.TypeGauge, scrape.TypeUntyped)
	kv, okKV := stageSums(d, famStageKVUsage, last, scrape.TypeGauge, scrape.TypeUntyped)
	requests, okRequests := stageSums(d, famStageE2E, func(s *scrape.SeriesDelta) float64 {
		if s.Histogram == nil {
			return 0
		}
		return s.Histogram.Count
	}, scrape.TypeHistogram, scrape.TypeGaugeHistogram)
	tokens, okTokens := stageSums(d, famStageGenTokens, func(s *scrape.SeriesDelta) float64 { return s.Delta },
		scrape.TypeCounter, scrape.TypeUntyped)
	for _, v := range labelled(d, famStageRunning, labelStage, labelReplica) {
		m, key := map[string]string{labelStage: v[0], labelReplica: v[1]}, [2]string{v[0], v[1]}
		for _, g := range []struct {
			name string
			sums map[[2]string]float64
			ok   bool
		}{{GaugeStageRunning, running, okRunning}, {GaugeStageWaiting, waiting, okWaiting}, {GaugeKVCacheUsage, kv, okKV}} {
			if g.ok {
				p.Gauges = append(p.Gauges, Gauge{Name: g.name, Stage: v[0], Replica: v[1],
					Last: g.sums[key], Mean: g.sums[key], Peak: g.sums[key]})
			}
		}
		if okRequests {
			rate(RateStageRequests, requests[key], m)
		}
		if okTokens {
			rate(RateStageTokens, tokens[key], m)
		}
	}
	return p
}

// stageSums sums value over the series of family in d by their stage and
// replica labels (series without both are left out), or false when the
// family is in neither scrape or has none of types.
func stageSums(d *scrape.Delta, family string, value func(*scrape.SeriesDelta) float64, types ...string) (map[[2]string]float64, bool) {
	f, ok := d.Family(family)
	if !ok || !slices.Contains(types, f.Type) {
		return nil, false
	}
	sums := map[[2]string]float64{}
	for _, s := range f.Series {
		stage, okStage := s.Labels[labelStage]
		replica, okReplica := s.Labels[labelReplica]
		if okStage && okReplica {
			sums[[2]string{stage, replica}] += value(s)
		}
	}
	return sums, true
}

// mergePoints joins two neighbouring points into one spanning both.
func mergePoints(a, b Point) Point {
	m := Point{Start: a.Start, End: b.End, Gaps: a.Gaps + b.Gaps, Gap: a.Gap,
		E2EP95Estimate: math.NaN()}
	if m.Gap == "" {
		m.Gap = b.Gap
	}
	for _, v := range []float64{a.E2EP95Estimate, b.E2EP95Estimate} {
		if !math.IsNaN(v) && (math.IsNaN(m.E2EP95Estimate) || v > m.E2EP95Estimate) {
			m.E2EP95Estimate = v
		}
	}
	wa, wb := a.End.Sub(a.Start).Seconds(), b.End.Sub(b.Start).Seconds()
	if a.valueless() || wa <= 0 {
		wa = 0
	}
	if b.valueless() || wb <= 0 {
		wb = 0
	}
	m.Gauges = mergeGauges(a.Gauges, b.Gauges, wa, wb)
	m.Rates = mergeRates(a.Rates, b.Rates, wa, wb)
	return m
}

// valueless reports whether the point holds no values: failed scrapes only.
func (p Point) valueless() bool { return p.Gauges == nil && p.Rates == nil }

// seriesID identifies a gauge or rate inside a point.
type seriesID struct{ name, stage, replica string }

// mergeGauges weights the means by the halves' durations.
func mergeGauges(a, b []Gauge, wa, wb float64) []Gauge {
	out := append([]Gauge(nil), a...)
	index := map[seriesID]int{}
	for i, g := range out {
		index[seriesID{g.Name, g.Stage, g.Replica}] = i
	}
	for _, g := range b {
		i, ok := index[seriesID{g.Name, g.Stage, g.Replica}]
		if !ok {
			out = append(out, g)
			continue
		}
		o := &out[i]
		if wa+wb > 0 {
			o.Mean = (o.Mean*wa + g.Mean*wb) / (wa + wb)
		}
		o.Last, o.Peak = g.Last, max(o.Peak, g.Peak)
	}
	return out
}

// mergeRates weights the rates by the halves' durations.
func mergeRates(a, b []Rate, wa, wb float64) []Rate {
	out := make([]Rate, 0, len(a)+len(b))
	index := map[seriesID]int{}
	for _, half := range []struct {
		rates []Rate
		w     float64
	}{{a, wa}, {b, wb}} {
		for _, r := range half.rates {
			id := seriesID{r.Name, r.Stage, r.Replica}
			i, ok := index[id]
			if !ok {
				index[id] = len(out)
				out = append(out, Rate{Name: r.Name, Stage: r.Stage, Replica: r.Replica})
				i = len(out) - 1
			}
			if wa+wb > 0 {
				out[i].PerSecond += r.PerSecond * half.w / (wa + wb)
			}
		}
	}
	return out
}

// AddTimeline refines the KV-cache usage peak and mean of b's rows with
// the timeline's points inside b's span (time-weighted mean, peak over
// every scrape merged into them).
func (b *Breakdown) AddTimeline(t *Timeline) {
	for i := range b.Stages {
		r := &b.Stages[i]
		var weighted, span float64
		peak := r.KVUsagePeak
		for _, p := range t.points {
			if p.Start.Before(b.Start) || p.End.After(b.End) {
				continue
			}
			for _, g := range p.Gauges {
				if g.Name != GaugeKVCacheUsage || g.Stage != r.Stage || g.Replica != r.Replica {
					continue
				}
				w := p.End.Sub(p.Start).Seconds()
				weighted, span = weighted+g.Mean*w, span+w
				if math.IsNaN(peak) || g.Peak > peak {
					peak = g.Peak
				}
			}
		}
		if span > 0 {
			r.KVUsagePeak, r.KVUsageMean = peak, weighted/span
		}
	}
}
