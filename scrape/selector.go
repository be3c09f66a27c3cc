package scrape

import (
	"bytes"
	"maps"
	"math"
	"slices"
	"strconv"
)

// Selector is ParseSelected for the repeated scrapes of one target, such
// as the periodic scrapes of a run. Between two scrapes of a server the
// lines of the kept families usually differ in their values only: the
// Selector remembers the last scrape it decoded in full (its template) and
// decodes a scrape whose kept lines are the template's but for their
// values by reading those values alone, in place of the template's.
//
// The result is always what ParseSelected returns (with Family.Raw nil:
// see Select); whatever the Selector does not follow exactly goes through
// ParseSelected's own path and, when that succeeds with a selection, becomes
// the next template. Only text-format bodies take the short path; it
// refuses a template with a line it cannot tie to exactly one value of the
// result (timestamps, blanks inside labels, a series or bucket written
// twice, a histogram without its +Inf bucket, families exposed under both
// pipeline prefixes), and a scrape with a value outside a plain decimal,
// NaN or ±Inf, or a count that is not a whole number.
//
// A Selector is not safe for concurrent use: one per target and goroutine.
type Selector struct {
	keep Filter
	tmpl *template
	// values is the buffer of the values read by the short path, reused.
	values []float64
	reused int
}

// NewSelector returns a Selector keeping the families keep matches.
func NewSelector(keep Filter) *Selector { return &Selector{keep: keep} }

// Select is snap.Select(keep) (see ParseSelected), without the decoded
// protobuf form: Family.Raw is nil in every result. The families returned
// share their label maps and Key strings with the Selector's template and
// with earlier results: read them, never modify them.
func (sel *Selector) Select(snap *Snapshot) (Families, error) {
	maxSamples := snap.MaxSamples
	if maxSamples <= 0 {
		maxSamples = DefaultMaxSamples
	}
	if fs, ok := sel.reuse(snap.ContentType, snap.Body, maxSamples); ok {
		return fs, nil
	}
	fs, kept, err := parseKept(snap.Source(), snap.ContentType, snap.Body, snap.bodyLine, maxSamples, sel.keep)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		f.Raw = nil
	}
	sel.tmpl = nil
	if kept == nil {
		return sel.keep.prune(fs), nil
	}
	t, values := newTemplate(kept, fs, sel.keep, maxSamples)
	if t == nil {
		return sel.keep.prune(fs), nil
	}
	// The template keeps fs: the caller gets a copy, as from later scrapes.
	sel.tmpl = t
	return t.fill(values), nil
}

// Reused is how many scrapes Select decoded by their values alone: for
// benchmarks and tests, which must know which path they measured.
func (sel *Selector) Reused() int { return sel.reused }

// reuse decodes body through the template, reporting false when it
// cannot be (no template, or a body that differs from it beyond values).
func (sel *Selector) reuse(contentType string, body []byte, maxSamples int) (Families, bool) {
	t := sel.tmpl
	if t == nil || t.maxSamples != maxSamples {
		return nil, false
	}
	if kind, _ := detectFormat(contentType, body); kind != FormatText {
		return nil, false
	}
	m := matcher{t: t, values: sel.values[:0]}
	ok := newLineSelector(sel.keep).eachKept(normaliseText(body), m.line) && m.matched == len(t.lines)
	sel.values = m.values
	if !ok {
		return nil, false
	}
	sel.reused++
	return t.fill(m.values), true
}

// slotKind is which number of a series a sample line holds.
type slotKind uint8

const (
	slotValue slotKind = iota
	slotCount
	slotSum
	slotBucket
	slotQuantile
)

// slot is where the value of one sample line goes in the template's
// families: family and series by index (into template.fams and its
// Series), and for a bucket or quantile which one. The value of a `_created`
// companion's series also becomes the Created of its base family's series
// (createdFamily >= 0).
type slot struct {
	family, series int32
	kind           slotKind
	bucket         int32
	quantile       float64

	createdFamily, createdSeries int32
}

// templateLine is one kept line of the template: its end in template.text
// and, for a sample line, where its value starts in the line (-1 for a
// comment line, which must come back byte for byte).
type templateLine struct {
	end, valueAt int32
}

// template is a scrape decoded in full, with what ties each of its kept
// sample lines to a number of its families.
type template struct {
	maxSamples int
	text       []byte // the kept lines, normalised
	lines      []templateLine
	slots      []slot // one per sample line, in order

	names  []string  // canonical names, sorted
	fams   []*Family // fams[i] is names[i]'s family, Raw nil
	output []bool    // whether keep matches fams[i] (else a _created companion)

	histograms, buckets int // totals, for one allocation of each per fill
}

// matcher compares the kept lines of a scrape with the template's, one by
// one, collecting the values of the sample lines.
type matcher struct {
	t       *template
	matched int // lines matched so far
	start   int // where the next line starts in t.text
	values  []float64
}

// line matches the next kept line (see lineSelector.eachKept).
func (m *matcher) line(line []byte) bool {
	if m.matched >= len(m.t.lines) {
		return false
	}
	tl := m.t.lines[m.matched]
	want := m.t.text[m.start:tl.end]
	m.matched++
	m.start = int(tl.end)
	if tl.valueAt < 0 {
		return bytes.Equal(line, want)
	}
	prefix := want[:tl.valueAt]
	if len(line) <= len(prefix) || !bytes.Equal(line[:len(prefix)], prefix) {
		return false
	}
	v, ok := plainValue(line[len(prefix):len(line)-1], m.t.slots[len(m.values)].kind)
	m.values = append(m.values, v)
	return ok
}

// plainValue reads a sample value the way the text parser does, for the
// values whose reading is plain: a decimal (with an optional exponent),
// NaN, +Inf or -Inf; for a count or bucket, a whole number from 0 to
// 2^63, which the parser keeps as it is. Anything else is false.
func plainValue(token []byte, kind slotKind) (float64, bool) {
	if !plainNumber(token) {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(token), 64)
	if err != nil {
		return 0, false
	}
	if kind == slotCount || kind == slotBucket {
		// Abs: the parser stores counts as integers, so -0 comes back as 0.
		return math.Abs(v), v >= 0 && v < 1<<63 && v == math.Trunc(v)
	}
	return v, true
}

// plainNumber reports whether token is NaN, +Inf, -Inf or
// [+-]digits[.digits][(e|E)[+-]digits] (either side of the point may be
// empty, not both).
func plainNumber(token []byte) bool {
	switch string(token) {
	case "NaN", "+Inf", "-Inf":
		return true
	}
	i := 0
	if i < len(token) && (token[i] == '+' || token[i] == '-') {
		i++
	}
	digits := 0
	for ; i < len(token) && token[i] >= '0' && token[i] <= '9'; i++ {
		digits++
	}
	if i < len(token) && token[i] == '.' {
		for i++; i < len(token) && token[i] >= '0' && token[i] <= '9'; i++ {
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(token) && (token[i] == 'e' || token[i] == 'E') {
		i++
		if i < len(token) && (token[i] == '+' || token[i] == '-') {
			i++
		}
		exp := i
		for ; i < len(token) && token[i] >= '0' && token[i] <= '9'; i++ {
		}
		if i == exp {
			return false
		}
	}
	return i == len(token)
}

// fill returns a copy of the template's kept families holding values (one
// per sample line). The copies share the template's label maps and
// strings; their numbers are their own.
func (t *template) fill(values []float64) Families {
	fams := make([]Family, len(t.fams))
	histograms := make([]Histogram, t.histograms)
	buckets := make([]Bucket, t.buckets)
	for i, f := range t.fams {
		fams[i] = *f
		fams[i].Series = slices.Clone(f.Series)
		for j := range fams[i].Series {
			s := &fams[i].Series[j]
			if h := s.Histogram; h != nil {
				histograms[0] = *h
				histograms[0].Buckets = buckets[:len(h.Buckets):len(h.Buckets)]
				s.Histogram, histograms, buckets = &histograms[0], histograms[1:], buckets[len(h.Buckets):]
				copy(s.Histogram.Buckets, h.Buckets)
			}
			if sm := s.Summary; sm != nil {
				s.Summary = &Summary{Count: sm.Count, Sum: sm.Sum, Quantiles: maps.Clone(sm.Quantiles)}
			}
		}
	}
	for i, sl := range t.slots {
		sl.set(&fams[sl.family].Series[sl.series], values[i])
		if sl.createdFamily >= 0 {
			fams[sl.createdFamily].Series[sl.createdSeries].Created = values[i]
		}
	}
	fs := make(Families, len(fams))
	for i := range fams {
		if t.output[i] {
			fs[t.names[i]] = &fams[i]
		}
	}
	return fs
}

// set stores v as the number of s that sl names.
func (sl slot) set(s *Series, v float64) {
	switch sl.kind {
	case slotValue:
		s.Value = v
	case slotCount:
		if s.Histogram != nil {
			s.Histogram.Count = v
		} else {
			s.Summary.Count = v
		}
	case slotSum:
		if s.Histogram != nil {
			s.Histogram.Sum = v
		} else {
			s.Summary.Sum = v
		}
	case slotBucket:
		s.Histogram.Buckets[sl.bucket].Count = v
	case slotQuantile:
		s.Summary.Quantiles[sl.quantile] = v
	}
}
