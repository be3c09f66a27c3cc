package scrape

import (
	"bytes"
	"math"
	"sort"
	"strconv"
)

// templateBuilder ties the kept lines of a scrape decoded in full to the
// numbers of its families (see newTemplate).
type templateBuilder struct {
	t     *template
	index map[string]int32 // canonical family name -> index in t.fams
	// families assigns sample lines to families as the text parser does.
	families *lineSelector
	// filled maps every slot tied so far (createdFamily -1) to its index
	// in t.slots: a slot tied twice refuses the template.
	filled map[slot]int
	// values are the template's own values, one per slot.
	values []float64
}

// newTemplate ties every line of kept, the normalised kept lines the
// families fs were decoded from (unpruned, Raw nil), to the number of fs it
// holds. It returns nil when a line cannot be tied to exactly one number,
// its value is not where the line says, or a number of fs is tied to no
// line; the template's own values come back with it.
func newTemplate(kept []byte, fs Families, keep Filter, maxSamples int) (*template, []float64) {
	if len(kept) > math.MaxInt32 {
		return nil, nil
	}
	t := &template{maxSamples: maxSamples, text: kept, names: fs.Names()}
	b := templateBuilder{t: t, index: make(map[string]int32, len(t.names)),
		families: newLineSelector(Filter{}), filled: map[slot]int{}}
	numbers := 0
	for i, name := range t.names {
		f := fs[name]
		if f.AlsoExposedAs != "" {
			return nil, nil // the dropped spelling's lines tie to nothing
		}
		t.fams = append(t.fams, f)
		t.output = append(t.output, keep.Match(name))
		b.index[name] = int32(i)
		for _, s := range f.Series {
			switch {
			case s.Histogram != nil:
				t.histograms++
				t.buckets += len(s.Histogram.Buckets)
				numbers += 2 + len(s.Histogram.Buckets)
			case s.Summary != nil:
				numbers += 2 + len(s.Summary.Quantiles)
			default:
				numbers++
			}
		}
	}
	for start := 0; start < len(kept); {
		end := start + bytes.IndexByte(kept[start:], '\n') + 1 // kept is normalised
		if !b.line(kept[start:end], end) {
			return nil, nil
		}
		start = end
	}
	if len(b.filled) != numbers || !b.linkCreated() {
		return nil, nil
	}
	return t, b.values
}

// line ties one kept line, which ends at end in the kept text.
func (b *templateBuilder) line(line []byte, end int) bool {
	if trimmed := bytes.TrimLeft(line, " \t"); trimmed[0] == '#' {
		// Kept comments are the HELP and TYPE lines of kept families: they
		// declare the families later samples belong to.
		if _, ok := b.families.comment(trimmed[1:]); !ok {
			return false
		}
		b.t.lines = append(b.t.lines, templateLine{end: int32(end), valueAt: -1})
		return true
	}
	name, labels, valueAt, ok := splitSample(line)
	if !ok {
		return false
	}
	family := string(b.families.sampleFamily(name))
	fi, ok := b.index[Canonical(family)]
	if !ok || b.t.fams[fi].Original != family {
		return false
	}
	sl, ok := b.slotOf(fi, string(name[len(family):]), labels)
	if !ok {
		return false
	}
	v, ok := plainValue(line[valueAt:len(line)-1], sl.kind)
	if _, tied := b.filled[sl]; !ok || tied || math.Float64bits(v) != math.Float64bits(sl.get(b.t)) {
		return false
	}
	b.filled[sl] = len(b.t.slots)
	b.t.slots = append(b.t.slots, sl)
	b.values = append(b.values, v)
	b.t.lines = append(b.t.lines, templateLine{end: int32(end), valueAt: int32(valueAt)})
	return true
}

// slotOf is the number of family fi that a sample line holds, from the
// line name's suffix after the family name and its labels (which it may
// modify).
func (b *templateBuilder) slotOf(fi int32, suffix string, labels map[string]string) (slot, bool) {
	f := b.t.fams[fi]
	sl := slot{family: fi, createdFamily: -1, createdSeries: -1}
	special := ""
	switch {
	case (f.Type == TypeCounter || f.Type == TypeGauge || f.Type == TypeUntyped) && suffix == "":
		sl.kind = slotValue
	case (f.Type == TypeHistogram || f.Type == TypeSummary) && suffix == "_count":
		sl.kind = slotCount
	case (f.Type == TypeHistogram || f.Type == TypeSummary) && suffix == "_sum":
		sl.kind = slotSum
	case f.Type == TypeHistogram && suffix == "_bucket":
		sl.kind, special = slotBucket, "le"
	case f.Type == TypeSummary && suffix == "":
		sl.kind, special = slotQuantile, "quantile"
	default:
		return sl, false
	}
	var bound float64
	if raw, ok := labels[special]; special != "" {
		var err error
		if bound, err = strconv.ParseFloat(raw, 64); !ok || err != nil || math.IsNaN(bound) {
			return sl, false
		}
		delete(labels, special)
	} else if _, le := labels["le"]; sl.kind != slotValue && le {
		return sl, false
	} else if _, q := labels["quantile"]; sl.kind != slotValue && q {
		return sl, false
	}
	si, ok := seriesIndex(f, LabelKey(labels))
	if !ok {
		return sl, false
	}
	sl.series = si
	s := &f.Series[si]
	switch sl.kind {
	case slotValue:
		return sl, s.Histogram == nil && s.Summary == nil
	case slotBucket:
		if s.Histogram == nil {
			return sl, false
		}
		sl.bucket = int32(sort.Search(len(s.Histogram.Buckets), func(i int) bool { return s.Histogram.Buckets[i].UpperBound >= bound }))
		return sl, int(sl.bucket) < len(s.Histogram.Buckets) && s.Histogram.Buckets[sl.bucket].UpperBound == bound
	case slotQuantile:
		if s.Summary == nil {
			return sl, false
		}
		sl.quantile = bound
		_, ok := s.Summary.Quantiles[bound]
		return sl, ok
	}
	return sl, s.Histogram != nil || s.Summary != nil
}

// get is the number of the template's families that sl names.
func (sl slot) get(t *template) float64 {
	s := &t.fams[sl.family].Series[sl.series]
	switch sl.kind {
	case slotCount:
		if s.Histogram != nil {
			return s.Histogram.Count
		}
		return s.Summary.Count
	case slotSum:
		if s.Histogram != nil {
			return s.Histogram.Sum
		}
		return s.Summary.Sum
	case slotBucket:
		return s.Histogram.Buckets[sl.bucket].Count
	case slotQuantile:
		return s.Summary.Quantiles[sl.quantile]
	}
	return s.Value
}

// linkCreated ties the value of every `_created` companion's series to the
// Created of its base family's series, as build's linkCreated does; false
// when two companions' series would set the same one.
func (b *templateBuilder) linkCreated() bool {
	linked := map[[2]int32]bool{}
	for fi, f := range b.t.fams {
		if f.CreatedFor == "" {
			continue
		}
		ti, ok := b.index[f.CreatedFor]
		if !ok {
			return false
		}
		for si, s := range f.Series {
			tsi, ok := seriesIndex(b.t.fams[ti], s.Key)
			if !ok {
				continue
			}
			if linked[[2]int32{ti, tsi}] {
				return false
			}
			linked[[2]int32{ti, tsi}] = true
			k := b.filled[slot{family: int32(fi), series: int32(si), kind: slotValue, createdFamily: -1, createdSeries: -1}]
			b.t.slots[k].createdFamily, b.t.slots[k].createdSeries = ti, tsi
		}
	}
	return true
}

// seriesIndex finds the series of f whose Key is key (f.Series is sorted
// by Key).
func seriesIndex(f *Family, key string) (int32, bool) {
	i := sort.Search(len(f.Series), func(i int) bool { return f.Series[i].Key >= key })
	return int32(i), i < len(f.Series) && f.Series[i].Key == key
}

// splitSample splits a sample line of the plainest form (leading blanks, a
// metric name, labels without blanks, one space, the value and '\n') into
// its name, its labels (unescaped) and where its value starts; false for
// any other form.
func splitSample(line []byte) (name []byte, labels map[string]string, valueAt int, ok bool) {
	i := len(line) - len(bytes.TrimLeft(line, " \t"))
	name = metricName(line[i:])
	if len(name) == 0 {
		return nil, nil, 0, false
	}
	i += len(name)
	labels = map[string]string{}
	if line[i] == '{' {
		for i++; line[i] != '}'; {
			label := labelName(line[i:])
			if len(label) == 0 || line[i+len(label)] != '=' || line[i+len(label)+1] != '"' {
				return nil, nil, 0, false
			}
			i += len(label) + 2
			value, n, ok := labelValue(line[i:])
			if _, dup := labels[string(label)]; !ok || dup {
				return nil, nil, 0, false
			}
			labels[string(label)] = value
			if i += n; line[i] == ',' {
				i++
			} else if line[i] != '}' {
				return nil, nil, 0, false
			}
		}
		i++
	}
	if line[i] != ' ' || i+2 > len(line)-1 {
		return nil, nil, 0, false
	}
	return name, labels, i + 1, true
}

// labelName returns the label name s starts with ([a-zA-Z_][a-zA-Z0-9_]*).
func labelName(s []byte) []byte {
	for i, c := range s {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return s[:i]
		}
	}
	return s
}

// labelValue reads a quoted label value from after its opening quote to
// its closing one, undoing the text format's three escapes, and returns it
// with the bytes read (closing quote included); false when it does not
// close on its line or holds another escape.
func labelValue(s []byte) (string, int, bool) {
	var out []byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return string(out), i + 1, true
		case '\n':
			return "", 0, false
		case '\\':
			if i+1 >= len(s) {
				return "", 0, false
			}
			switch i++; s[i] {
			case '\\', '"':
				out = append(out, s[i])
			case 'n':
				out = append(out, '\n')
			default:
				return "", 0, false
			}
		default:
			out = append(out, c)
		}
	}
	return "", 0, false
}
