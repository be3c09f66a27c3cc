package scrape

import (
	"math"
	"sort"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
)

// The two spellings of the vLLM-Omni pipeline prefix
// (docs/reference/metric-families.md, section 1).
// They mirror omnimetrics.PrefixDesign and omnimetrics.PrefixCurrent; scrape
// keeps its own copy so that parsing does not depend on the metric core.
const (
	prefixDesign  = "vllm:omni_"
	prefixCurrent = "vllm_omni:"
)

// Metric types as they appear in a `# TYPE` line.
const (
	TypeCounter        = "counter"
	TypeGauge          = "gauge"
	TypeHistogram      = "histogram"
	TypeSummary        = "summary"
	TypeUntyped        = "untyped"
	TypeGaugeHistogram = "gaugehistogram"
)

// Canonical returns the key under which a family is stored: the original
// metrics design's form `vllm:omni_X` for both pipeline prefixes, the name unchanged
// for everything else.
func Canonical(name string) string {
	if rest, ok := strings.CutPrefix(name, prefixCurrent); ok {
		return prefixDesign + rest
	}
	return name
}

// IsPipeline reports whether name carries either vLLM-Omni pipeline prefix.
func IsPipeline(name string) bool {
	return strings.HasPrefix(name, prefixDesign) || strings.HasPrefix(name, prefixCurrent)
}

// Families is one parsed exposition: canonical family name -> family.
type Families map[string]*Family

// Family is one metric family of an exposition.
type Family struct {
	Name     string // canonical name (see Canonical)
	Original string // the name as exposed, for display
	Type     string // one of the Type* constants
	Help     string
	Unit     string // OpenMetrics UNIT, when given

	// Series are sorted by Key. A family declared with HELP/TYPE but no
	// samples (a labelled family that never observed anything) has none.
	Series []Series

	// CreatedFor is set on a Python-style `<base>_created` gauge family: the
	// canonical name of the counter, histogram or summary it belongs to. Such
	// families are kept but left out of diffs and checks of the base family;
	// their values become Series.Created of the base family's series.
	CreatedFor string

	// AlsoExposedAs holds the original name of a second exposure of the same
	// family under the other pipeline prefix. The first spelling in the
	// design form wins; the other one's series are dropped.
	AlsoExposedAs string

	// Raw is the decoded protobuf form (nil for a family declared without
	// samples). Linters such as promlint work on it.
	Raw *dto.MetricFamily `json:"-"`
}

// Series is one label set of a family.
type Series struct {
	Labels map[string]string
	Key    string // labels as `a="x",b="y"`, sorted by name; "" when unlabelled

	Value     float64    // counter, gauge and untyped value
	Histogram *Histogram // histograms and gauge histograms
	Summary   *Summary   // summaries

	// Created is the series' creation time in Unix seconds when the
	// exposition says (a Python `_created` companion or an OpenMetrics or
	// protobuf created timestamp), 0 otherwise. A change between two scrapes
	// means the server restarted.
	Created float64
}

// Histogram is a classic (bucketed) histogram sample.
type Histogram struct {
	Count float64
	Sum   float64
	// Buckets are cumulative, sorted by UpperBound and always end with the
	// +Inf bucket. When the exposition omitted +Inf (protobuf always does, the
	// text formats must not), it is added with the value of Count.
	Buckets []Bucket
	// InfMissing is set when a text or OpenMetrics exposition lacked the
	// mandatory le="+Inf" bucket (the Prometheus parser does not flag it).
	InfMissing bool
}

// Summary is a summary sample.
type Summary struct {
	Count     float64
	Sum       float64
	Quantiles map[float64]float64
}

// Bucket is one cumulative histogram bucket.
type Bucket struct {
	UpperBound float64 // `le`
	Count      float64 // observations <= UpperBound
}

// Lookup finds a family by name. The name may use either pipeline prefix,
// or none at all: "audio_ttfp_s" finds `vllm:omni_audio_ttfp_s` (and
// `vllm_omni:audio_ttfp_s`). Names with a colon are taken as full names.
func (fs Families) Lookup(name string) (*Family, bool) {
	if f, ok := fs[Canonical(name)]; ok {
		return f, true
	}
	if !strings.Contains(name, ":") {
		if f, ok := fs[prefixDesign+name]; ok {
			return f, true
		}
	}
	return nil, false
}

// Names returns the canonical family names in sorted order.
func (fs Families) Names() []string {
	names := make([]string, 0, len(fs))
	for n := range fs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Proto returns the decoded protobuf families (without declared-only ones),
// sorted by name, for tools that work on client_model types.
func (fs Families) Proto() []*dto.MetricFamily {
	out := make([]*dto.MetricFamily, 0, len(fs))
	for _, n := range fs.Names() {
		if raw := fs[n].Raw; raw != nil {
			out = append(out, raw)
		}
	}
	return out
}

// LabelNames returns the sorted union of label names over the family's
// series (without `le` and `quantile`, which belong to the sample kind).
func (f *Family) LabelNames() []string {
	seen := map[string]bool{}
	for _, s := range f.Series {
		for k := range s.Labels {
			seen[k] = true
		}
	}
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Find returns the series whose label set is exactly labels.
func (f *Family) Find(labels map[string]string) (*Series, bool) {
	key := LabelKey(labels)
	i := sort.Search(len(f.Series), func(i int) bool { return f.Series[i].Key >= key })
	if i < len(f.Series) && f.Series[i].Key == key {
		return &f.Series[i], true
	}
	return nil, false
}

// Matches reports whether the series carries every label of match with the
// same value. An empty match matches every series.
func (s *Series) Matches(match map[string]string) bool {
	for k, v := range match {
		if got, ok := s.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// LabelKey renders a label set as `a="x",b="y"` sorted by name: the identity
// of a series inside its family, independent of exposition label order.
func LabelKey(labels map[string]string) string {
	if len(labels) == 0 {
		return ""
	}
	names := make([]string, 0, len(labels))
	for k := range labels {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(strconv.Quote(labels[k]))
	}
	return b.String()
}

// FormatBound renders a bucket bound the way Prometheus does ("+Inf", "0.05").
func FormatBound(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// FiniteBounds returns the upper bounds of the histogram's finite buckets.
func (h *Histogram) FiniteBounds() []float64 {
	out := make([]float64, 0, len(h.Buckets))
	for _, b := range h.Buckets {
		if !math.IsInf(b.UpperBound, 1) {
			out = append(out, b.UpperBound)
		}
	}
	return out
}

// InfCount returns the count of the +Inf bucket.
func (h *Histogram) InfCount() float64 {
	if n := len(h.Buckets); n > 0 && math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		return h.Buckets[n-1].Count
	}
	return h.Count
}

// Quantile estimates the q-quantile of the histogram (see HistogramQuantile).
func (h *Histogram) Quantile(q float64) float64 { return HistogramQuantile(q, h.Buckets) }
