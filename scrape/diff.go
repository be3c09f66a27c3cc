package scrape

import (
	"math"
	"sort"
	"strings"
)

// Delta is what changed between two scrapes of the same server.
//
// Counters and histograms are increases: a value that went down means the
// server restarted in between, so the series is flagged Reset and its
// increase is the after value, as Prometheus' increase() assumes. A series
// missing before counts from zero (servers bind labelled series lazily);
// a counter or histogram series missing after is also flagged as a reset.
// Gauges keep both values. Python `_created` companion families are not
// diffed; a changed created timestamp flags its base series as reset.
type Delta struct {
	Families []*FamilyDelta // sorted by canonical name
	// Reset is true when at least one counter or histogram series was reset.
	Reset       bool
	ResetSeries int // how many series were reset
}

// FamilyDelta is one family's change.
type FamilyDelta struct {
	Name     string // canonical
	Original string // as exposed (after scrape when present)
	Type     string
	Help     string
	InBefore bool
	InAfter  bool
	Series   []*SeriesDelta // sorted by Key
}

// SeriesDelta is one series' change.
type SeriesDelta struct {
	Labels   map[string]string
	Key      string
	InBefore bool
	InAfter  bool

	// Before and After are the value of a counter, gauge or untyped series,
	// or the observation count of a histogram or summary (0 when absent).
	Before float64
	After  float64
	// Delta is the (reset-aware) increase for counters, histograms and
	// summaries, and After-Before for gauges and untyped series.
	Delta float64
	// Reset marks a counter, histogram or summary that went down (or whose
	// created timestamp changed, or that vanished): the server restarted.
	Reset bool

	// Histogram holds bucket, count and sum increases of histograms, and
	// count and sum increases of summaries (without buckets).
	Histogram *HistogramDelta
}

// HistogramDelta is the increase of a histogram between two scrapes.
type HistogramDelta struct {
	Count   float64
	Sum     float64
	Buckets []Bucket // cumulative increases by upper bound, ending with +Inf
}

// Quantile estimates the q-quantile of the observations made between the
// scrapes (see HistogramQuantile).
func (h HistogramDelta) Quantile(q float64) float64 { return HistogramQuantile(q, h.Buckets) }

// QuantileBounds is Quantile with the bounds of the bucket it lies in.
func (h HistogramDelta) QuantileBounds(q float64) QuantileEstimate {
	return HistogramQuantileBounds(q, h.Buckets)
}

// Mean is Sum/Count, NaN without observations.
func (h HistogramDelta) Mean() float64 {
	if h.Count == 0 {
		return math.NaN()
	}
	return h.Sum / h.Count
}

// Changed reports whether the series moved: a non-zero delta, a reset, a
// series appearing or vanishing, a gauge that changed, or a histogram sum
// that changed.
func (s *SeriesDelta) Changed() bool {
	if s.Reset || s.InBefore != s.InAfter || s.Delta != 0 {
		return true
	}
	if s.Before != s.After && !(math.IsNaN(s.Before) && math.IsNaN(s.After)) {
		return true
	}
	return s.Histogram != nil && s.Histogram.Sum != 0
}

// Changed reports whether any series of the family changed or the family
// appeared or vanished.
func (f *FamilyDelta) Changed() bool {
	if f.InBefore != f.InAfter {
		return true
	}
	for _, s := range f.Series {
		if s.Changed() {
			return true
		}
	}
	return false
}

// Diff compares two parsed scrapes. before may be nil (or empty): every
// value then counts from zero, which is right for a freshly started server.
func Diff(before, after Families) *Delta {
	d := &Delta{}
	names := map[string]bool{}
	for n, f := range before {
		if f.CreatedFor == "" {
			names[n] = true
		}
	}
	for n, f := range after {
		if f.CreatedFor == "" {
			names[n] = true
		}
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		fd := diffFamily(before[n], after[n])
		for _, s := range fd.Series {
			if s.Reset {
				d.Reset = true
				d.ResetSeries++
			}
		}
		d.Families = append(d.Families, fd)
	}
	return d
}

func diffFamily(b, a *Family) *FamilyDelta {
	fd := &FamilyDelta{InBefore: b != nil, InAfter: a != nil}
	meta := a
	if meta == nil {
		meta = b
	}
	fd.Name, fd.Original, fd.Type, fd.Help = meta.Name, meta.Original, meta.Type, meta.Help
	if b != nil && a != nil && b.Type != a.Type {
		// The family changed type: a different server or version. Compare
		// nothing across, report the after side as new.
		b = nil
		fd.InBefore = false
	}
	bySeries := map[string][2]*Series{}
	if b != nil {
		for i := range b.Series {
			s := &b.Series[i]
			if _, dup := bySeries[s.Key]; !dup {
				bySeries[s.Key] = [2]*Series{s, nil}
			}
		}
	}
	if a != nil {
		for i := range a.Series {
			s := &a.Series[i]
			pair := bySeries[s.Key]
			if pair[1] == nil {
				pair[1] = s
				bySeries[s.Key] = pair
			}
		}
	}
	for _, pair := range bySeries {
		fd.Series = append(fd.Series, diffSeries(fd.Type, pair[0], pair[1]))
	}
	sort.Slice(fd.Series, func(i, j int) bool { return fd.Series[i].Key < fd.Series[j].Key })
	return fd
}

func diffSeries(typ string, b, a *Series) *SeriesDelta {
	sd := &SeriesDelta{InBefore: b != nil, InAfter: a != nil}
	meta := a
	if meta == nil {
		meta = b
	}
	sd.Labels, sd.Key = meta.Labels, meta.Key
	restarted := b != nil && a != nil && b.Created != 0 && a.Created != 0 && b.Created != a.Created
	switch typ {
	case TypeCounter:
		sd.Before, sd.After = value(b), value(a)
		sd.Delta, sd.Reset = increase(sd.Before, sd.After, restarted)
	case TypeHistogram, TypeGaugeHistogram:
		bh, ah := histogramOf(b), histogramOf(a)
		sd.Before, sd.After = bh.Count, ah.Count
		h, reset := histogramIncrease(bh, ah, restarted)
		sd.Histogram, sd.Reset, sd.Delta = &h, reset, h.Count
	case TypeSummary:
		bs, as := summaryOf(b), summaryOf(a)
		sd.Before, sd.After = bs.Count, as.Count
		reset := restarted || as.Count < bs.Count
		h := HistogramDelta{Count: as.Count - bs.Count, Sum: as.Sum - bs.Sum}
		if reset {
			h = HistogramDelta{Count: as.Count, Sum: as.Sum}
		}
		sd.Histogram, sd.Reset, sd.Delta = &h, reset, h.Count
	default:
		sd.Before, sd.After = value(b), value(a)
		sd.Delta = sd.After - sd.Before
		return sd
	}
	if b != nil && a == nil {
		// A counter series does not vanish from a live registry.
		sd.Reset = true
		sd.Delta = 0
		if sd.Histogram != nil {
			*sd.Histogram = HistogramDelta{}
		}
	}
	return sd
}

func value(s *Series) float64 {
	if s == nil {
		return 0
	}
	return s.Value
}

func increase(before, after float64, restarted bool) (float64, bool) {
	if restarted || after < before {
		return after, true
	}
	return after - before, false
}

func histogramOf(s *Series) *Histogram {
	if s == nil || s.Histogram == nil {
		return &Histogram{}
	}
	return s.Histogram
}

func summaryOf(s *Series) *Summary {
	if s == nil || s.Summary == nil {
		return &Summary{}
	}
	return s.Summary
}

// histogramIncrease subtracts b from a bucket by bucket. A decrease anywhere,
// a changed bucket layout or a restart yields a's values and reset=true.
func histogramIncrease(b, a *Histogram, restarted bool) (HistogramDelta, bool) {
	whole := HistogramDelta{Count: a.Count, Sum: a.Sum, Buckets: append([]Bucket(nil), a.Buckets...)}
	if restarted || a.Count < b.Count {
		return whole, true
	}
	if len(b.Buckets) == 0 {
		return whole, false
	}
	if len(b.Buckets) != len(a.Buckets) {
		return whole, true
	}
	out := HistogramDelta{Count: a.Count - b.Count, Sum: a.Sum - b.Sum, Buckets: make([]Bucket, len(a.Buckets))}
	for i := range a.Buckets {
		if a.Buckets[i].UpperBound != b.Buckets[i].UpperBound || a.Buckets[i].Count < b.Buckets[i].Count {
			return whole, true
		}
		out.Buckets[i] = Bucket{UpperBound: a.Buckets[i].UpperBound, Count: a.Buckets[i].Count - b.Buckets[i].Count}
	}
	return out, false
}

// Family finds a family's delta by name (any pipeline prefix, or none: see
// Families.Lookup).
func (d *Delta) Family(name string) (*FamilyDelta, bool) {
	find := func(n string) (*FamilyDelta, bool) {
		i := sort.Search(len(d.Families), func(i int) bool { return d.Families[i].Name >= n })
		if i < len(d.Families) && d.Families[i].Name == n {
			return d.Families[i], true
		}
		return nil, false
	}
	if f, ok := find(Canonical(name)); ok {
		return f, true
	}
	if !strings.Contains(name, ":") {
		return find(prefixDesign + name)
	}
	return nil, false
}

// CounterDelta sums the increases of the counter's series whose labels
// include match (nil matches all). ok is false when the family is in neither
// scrape or is not a counter (or untyped).
func (d *Delta) CounterDelta(family string, match map[string]string) (float64, bool) {
	f, ok := d.Family(family)
	if !ok || (f.Type != TypeCounter && f.Type != TypeUntyped) {
		return 0, false
	}
	var sum float64
	for _, s := range f.Series {
		if s.matches(match) {
			sum += s.Delta
		}
	}
	return sum, true
}

// HistogramDelta merges the increases of the histogram's series whose labels
// include match, bucket by bucket (like `sum by (le)`). ok is false when the
// family is in neither scrape or is not a histogram.
func (d *Delta) HistogramDelta(family string, match map[string]string) (HistogramDelta, bool) {
	f, ok := d.Family(family)
	if !ok || (f.Type != TypeHistogram && f.Type != TypeGaugeHistogram) {
		return HistogramDelta{}, false
	}
	var out HistogramDelta
	byBound := map[float64]float64{}
	for _, s := range f.Series {
		if !s.matches(match) || s.Histogram == nil {
			continue
		}
		out.Count += s.Histogram.Count
		out.Sum += s.Histogram.Sum
		for _, b := range s.Histogram.Buckets {
			byBound[b.UpperBound] += b.Count
		}
	}
	for ub, c := range byBound {
		out.Buckets = append(out.Buckets, Bucket{UpperBound: ub, Count: c})
	}
	sort.Slice(out.Buckets, func(i, j int) bool { return out.Buckets[i].UpperBound < out.Buckets[j].UpperBound })
	if len(out.Buckets) == 0 {
		out.Buckets = []Bucket{{UpperBound: math.Inf(1)}}
	}
	return out, true
}

// GaugeChange is a gauge's value in both scrapes.
type GaugeChange struct{ Before, After float64 }

// Gauge sums the gauge's series whose labels include match in each scrape.
// ok is false when the family is in neither scrape or is not a gauge (or
// untyped).
func (d *Delta) Gauge(family string, match map[string]string) (GaugeChange, bool) {
	f, ok := d.Family(family)
	if !ok || (f.Type != TypeGauge && f.Type != TypeUntyped) {
		return GaugeChange{}, false
	}
	var g GaugeChange
	for _, s := range f.Series {
		if s.matches(match) {
			g.Before += s.Before
			g.After += s.After
		}
	}
	return g, true
}

func (s *SeriesDelta) matches(match map[string]string) bool {
	for k, v := range match {
		if got, ok := s.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
