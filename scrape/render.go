package scrape

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/omnibench/omnibench/report/table"
)

// TableOptions selects what Delta.Tables shows.
type TableOptions struct {
	All       bool      // every series, not only those that changed
	Buckets   bool      // add a table of per-bucket increases
	Quantiles []float64 // quantile columns of the histogram table; nil = 0.5, 0.9, 0.99
}

func (o TableOptions) quantiles() []float64 {
	if o.Quantiles == nil {
		return []float64{0.5, 0.9, 0.99}
	}
	return o.Quantiles
}

// Tables renders the delta as counter, histogram (and summary), gauge and
// optionally bucket tables, for table.Render.
func (d *Delta) Tables(opts TableOptions) []table.Table {
	counters := table.Table{Title: "Counters (increase between the scrapes)",
		Header: []string{"family", "labels", "before", "after", "increase", "note"}}
	hist := table.Table{Title: "Histograms (observations between the scrapes)",
		Header: []string{"family", "labels", "count", "sum", "mean"}}
	for _, q := range opts.quantiles() {
		hist.Header = append(hist.Header, "p"+strconv.FormatFloat(q*100, 'f', -1, 64))
	}
	hist.Header = append(hist.Header, "note")
	gauges := table.Table{Title: "Gauges", Header: []string{"family", "labels", "before", "after", "change"}}
	buckets := table.Table{Title: "Histogram buckets (increase per bucket)",
		Header: []string{"family", "labels", "le", "increase"}}
	fresh := 0
	for _, f := range d.Families {
		for _, s := range f.Series {
			if !opts.All && !s.Changed() {
				continue
			}
			if !s.InBefore && s.InAfter {
				fresh++
			}
			labels := s.Key
			if labels == "" {
				labels = "-"
			}
			switch f.Type {
			case TypeCounter:
				counters.Rows = append(counters.Rows, []string{f.Original, labels,
					FormatValue(s.Before), FormatValue(s.After), FormatValue(s.Delta), seriesNote(s)})
			case TypeHistogram, TypeGaugeHistogram, TypeSummary:
				h := s.Histogram
				row := []string{f.Original, labels, FormatValue(h.Count), FormatValue(h.Sum), formatShort(h.Mean())}
				for _, q := range opts.quantiles() {
					row = append(row, formatShort(h.Quantile(q)))
				}
				hist.Rows = append(hist.Rows, append(row, seriesNote(s)))
				if opts.Buckets {
					for _, b := range h.Buckets {
						buckets.Rows = append(buckets.Rows, []string{f.Original, labels, FormatBound(b.UpperBound), FormatValue(b.Count)})
					}
				}
			default:
				gauges.Rows = append(gauges.Rows, []string{f.Original, labels,
					FormatValue(s.Before), FormatValue(s.After), FormatValue(s.Delta)})
			}
		}
	}
	if d.Reset {
		counters.Notes = append(counters.Notes, fmt.Sprintf(
			"%d series went down between the scrapes: the server restarted. Their increase is the after value, as Prometheus increase() assumes.",
			d.ResetSeries))
	}
	if fresh > 0 {
		counters.Notes = append(counters.Notes, fmt.Sprintf("%d series appeared after the first scrape; they count from zero.", fresh))
	}
	hist.Notes = append(hist.Notes, "Quantiles are estimated from the bucket increases with linear interpolation, as Prometheus histogram_quantile does.")
	var out []table.Table
	for _, t := range []table.Table{counters, hist, gauges} {
		if len(t.Rows) > 0 {
			out = append(out, t)
		}
	}
	if opts.Buckets && len(buckets.Rows) > 0 {
		out = append(out, buckets)
	}
	if len(out) == 0 {
		msg := "No series changed between the scrapes (--all shows every series)."
		if opts.All {
			msg = "Neither scrape holds any series."
		}
		out = append(out, table.Table{Title: "Metrics diff", Notes: append(counters.Notes, msg)})
	}
	return out
}

func seriesNote(s *SeriesDelta) string {
	switch {
	case s.InBefore && !s.InAfter:
		return "gone (restart)"
	case s.Reset:
		return "reset (restart)"
	case !s.InBefore && s.InAfter:
		return "new"
	}
	return ""
}

// FormatValue prints a sample value: integers without exponent or decimals,
// other values with up to 6 significant digits.
func FormatValue(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case v == math.Trunc(v) && math.Abs(v) < 1e15:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// formatShort prints an estimate with 4 significant digits, "-" for NaN.
func formatShort(v float64) string {
	if math.IsNaN(v) {
		return "-"
	}
	if math.IsInf(v, 0) {
		return FormatValue(v)
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// JSONFloat marshals a float as a JSON number, or as the strings "NaN",
// "+Inf" and "-Inf", which JSON numbers cannot express.
type JSONFloat float64

// MarshalJSON implements json.Marshaler.
func (f JSONFloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(FormatValue(v))
	}
	return []byte(strconv.FormatFloat(v, 'g', -1, 64)), nil
}

// deltaDoc is the documented JSON form of a Delta (omnibench diff --format json).
type deltaDoc struct {
	Reset       bool        `json:"reset"`
	ResetSeries int         `json:"reset_series"`
	Families    []familyDoc `json:"families"`
}

type familyDoc struct {
	Name     string      `json:"name"`     // canonical
	Original string      `json:"original"` // as exposed
	Type     string      `json:"type"`
	InBefore bool        `json:"in_before"`
	InAfter  bool        `json:"in_after"`
	Series   []seriesDoc `json:"series"`
}

type seriesDoc struct {
	Labels    map[string]string    `json:"labels"`
	InBefore  bool                 `json:"in_before"`
	InAfter   bool                 `json:"in_after"`
	Before    JSONFloat            `json:"before"`
	After     JSONFloat            `json:"after"`
	Delta     JSONFloat            `json:"delta"`
	Reset     bool                 `json:"reset,omitempty"`
	Sum       *JSONFloat           `json:"sum_delta,omitempty"`
	Buckets   []bucketDoc          `json:"buckets,omitempty"`
	Quantiles map[string]JSONFloat `json:"quantiles,omitempty"`
}

type bucketDoc struct {
	LE    string    `json:"le"`
	Count JSONFloat `json:"delta"`
}

// WriteJSON writes the delta as one indented JSON document: families with
// their series (only changed ones unless all), each with before, after and
// delta (histograms: observation counts), reset flags, and for histograms
// the sum increase, bucket increases and the quantile estimates of opts.
func (d *Delta) WriteJSON(w io.Writer, opts TableOptions) error {
	doc := deltaDoc{Reset: d.Reset, ResetSeries: d.ResetSeries, Families: []familyDoc{}}
	for _, f := range d.Families {
		fd := familyDoc{Name: f.Name, Original: f.Original, Type: f.Type, InBefore: f.InBefore, InAfter: f.InAfter}
		for _, s := range f.Series {
			if !opts.All && !s.Changed() {
				continue
			}
			sd := seriesDoc{Labels: s.Labels, InBefore: s.InBefore, InAfter: s.InAfter,
				Before: JSONFloat(s.Before), After: JSONFloat(s.After), Delta: JSONFloat(s.Delta), Reset: s.Reset}
			if h := s.Histogram; h != nil {
				sum := JSONFloat(h.Sum)
				sd.Sum = &sum
				for _, b := range h.Buckets {
					sd.Buckets = append(sd.Buckets, bucketDoc{LE: FormatBound(b.UpperBound), Count: JSONFloat(b.Count)})
				}
				if len(h.Buckets) > 0 {
					sd.Quantiles = map[string]JSONFloat{}
					for _, q := range opts.quantiles() {
						sd.Quantiles[strconv.FormatFloat(q, 'g', -1, 64)] = JSONFloat(h.Quantile(q))
					}
				}
			}
			if sd.Labels == nil {
				sd.Labels = map[string]string{}
			}
			fd.Series = append(fd.Series, sd)
		}
		if len(fd.Series) == 0 && !opts.All && f.InBefore == f.InAfter {
			continue
		}
		if fd.Series == nil {
			fd.Series = []seriesDoc{}
		}
		doc.Families = append(doc.Families, fd)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
