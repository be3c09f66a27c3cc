package breakdown

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

// The JSON form of a Series is what a results file keeps of each scrape of
// a run, so that a report re-renders the breakdown and its timeline without
// the server. It holds the selected families only, with the values a
// breakdown reads: a family's type, and per series its labels, value or
// histogram (count, sum, cumulative buckets) and creation time. Numbers that
// JSON cannot spell (NaN, ±Inf) are strings.

// maxDecodedSeries bounds what UnmarshalJSON accepts: a results file is
// input like any other, and a Series larger than any scrape's sample cap
// is not one omnibench wrote.
const maxDecodedSeries = 100_000

type seriesJSON struct {
	At       time.Time    `json:"at"`
	Families []familyJSON `json:"families"`
}

type familyJSON struct {
	Name   string       `json:"name"`
	Type   string       `json:"type"`
	Series []sampleJSON `json:"series,omitempty"`
}

type sampleJSON struct {
	Labels  map[string]string `json:"labels,omitempty"`
	Value   number            `json:"value,omitempty"`
	Count   number            `json:"count,omitempty"`
	Sum     number            `json:"sum,omitempty"`
	Buckets [][2]number       `json:"buckets,omitempty"` // [upper bound, cumulative count]
	Created number            `json:"created,omitempty"`
}

// number is a float64 that JSON can carry whatever its value.
type number float64

func (n number) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return json.Marshal(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Marshal(v)
}

func (n *number) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		v, perr := strconv.ParseFloat(s, 64)
		if perr != nil {
			return fmt.Errorf("number %q: %w", s, perr)
		}
		*n = number(v)
		return nil
	}
	var v float64
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf("number: %w", err)
	}
	*n = number(v)
	return nil
}

// MarshalJSON writes the series in the form a results file keeps.
func (s Series) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil) }

// AppendJSON appends MarshalJSON's encoding to b. It writes the bytes
// encoding/json writes for seriesJSON, without reflection or a call per
// number: a run writes a scrape line every --scrape-interval, and at a
// large topology its hundreds of thousands of numbers were most of the
// cost of a scrape.
func (s Series) AppendJSON(b []byte) ([]byte, error) {
	at, err := s.At.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("breakdown series: %w", err)
	}
	b = append(append(append(b, `{"at":`...), at...), `,"families":[`...)
	var keys []string
	for i, name := range s.families.Names() {
		f := s.families[name]
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(append(b, `{"name":`...), name)
		b = appendJSONString(append(b, `,"type":`...), f.Type)
		for j, sr := range f.Series {
			if j == 0 {
				b = append(b, `,"series":[`...)
			} else {
				b = append(b, ',')
			}
			b, keys = appendSample(b, sr, keys)
		}
		if len(f.Series) > 0 {
			b = append(b, ']')
		}
		b = append(b, '}')
	}
	return append(b, "]}"...), nil
}

// appendSample appends one series as a sampleJSON, reusing keys to sort
// the label names.
func appendSample(b []byte, sr scrape.Series, keys []string) ([]byte, []string) {
	b = append(b, '{')
	field := func(name string) {
		if b[len(b)-1] != '{' {
			b = append(b, ',')
		}
		b = append(append(append(b, '"'), name...), `":`...)
	}
	if len(sr.Labels) > 0 {
		keys = keys[:0]
		for k := range sr.Labels {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		field("labels")
		for i, k := range keys {
			if i == 0 {
				b = append(b, '{')
			} else {
				b = append(b, ',')
			}
			b = appendJSONString(append(appendJSONString(b, k), ':'), sr.Labels[k])
		}
		b = append(b, '}')
	}
	number := func(name string, v float64) {
		if v != 0 { // omitempty
			field(name)
			b = appendNumber(b, v)
		}
	}
	number("value", sr.Value)
	if h := sr.Histogram; h != nil {
		number("count", h.Count)
		number("sum", h.Sum)
		for i, bk := range h.Buckets {
			if i == 0 {
				field("buckets")
				b = append(b, '[')
			} else {
				b = append(b, ',')
			}
			b = append(appendNumber(append(appendNumber(append(b, '['), bk.UpperBound), ','), bk.Count), ']')
		}
		if len(h.Buckets) > 0 {
			b = append(b, ']')
		}
	}
	number("created", sr.Created)
	return append(b, '}'), keys
}

// appendNumber appends v as number.MarshalJSON writes it: NaN and ±Inf as
// strings, others as encoding/json writes a float64.
func appendNumber(b []byte, v float64) []byte {
	switch {
	case math.IsNaN(v), math.IsInf(v, 0):
		return append(strconv.AppendFloat(append(b, '"'), v, 'g', -1, 64), '"')
	}
	format := byte('f')
	if abs := math.Abs(v); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, v, format, -1, 64)
	if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		// encoding/json writes e-7, not e-07.
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// appendJSONString appends s as encoding/json quotes it: directly when it
// holds nothing to escape (HTML's <, > and & included), else through it.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			quoted, _ := json.Marshal(s) // a string always encodes
			return append(b, quoted...)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// UnmarshalJSON reads what MarshalJSON wrote. It keeps only the families a
// breakdown reads and refuses malformed histograms, so a hand-edited file
// cannot make Compute read past what it checks.
func (s *Series) UnmarshalJSON(b []byte) error {
	var in seriesJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return fmt.Errorf("breakdown series: %w", err)
	}
	needed := map[string]bool{}
	for _, n := range neededFamilies() {
		needed[n] = true
	}
	fams, total := scrape.Families{}, 0
	for _, fj := range in.Families {
		if !needed[fj.Name] {
			continue
		}
		if total += len(fj.Series); total > maxDecodedSeries {
			return fmt.Errorf("breakdown series: more than %d series", maxDecodedSeries)
		}
		f := &scrape.Family{Name: fj.Name, Original: fj.Name, Type: fj.Type}
		for i, sj := range fj.Series {
			sr, err := decodeSample(fj.Type, sj)
			if err != nil {
				return fmt.Errorf("breakdown series: %s, series %d: %w", fj.Name, i+1, err)
			}
			f.Series = append(f.Series, sr)
		}
		sort.Slice(f.Series, func(i, j int) bool { return f.Series[i].Key < f.Series[j].Key })
		fams[fj.Name] = f
	}
	*s = Series{At: in.At, families: fams}
	return nil
}

// decodeSample rebuilds one series of a family of type typ.
func decodeSample(typ string, sj sampleJSON) (scrape.Series, error) {
	sr := scrape.Series{Labels: sj.Labels, Key: scrape.LabelKey(sj.Labels), Value: float64(sj.Value),
		Created: float64(sj.Created)}
	if sr.Labels == nil {
		sr.Labels = map[string]string{}
	}
	if typ != scrape.TypeHistogram {
		return sr, nil
	}
	h := &scrape.Histogram{Count: float64(sj.Count), Sum: float64(sj.Sum)}
	for i, b := range sj.Buckets {
		if i > 0 && !(float64(b[0]) > h.Buckets[i-1].UpperBound) {
			return sr, fmt.Errorf("bucket %d: upper bounds not increasing", i+1)
		}
		h.Buckets = append(h.Buckets, scrape.Bucket{UpperBound: float64(b[0]), Count: float64(b[1])})
	}
	if n := len(h.Buckets); n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
		return sr, fmt.Errorf("histogram without its +Inf bucket")
	}
	sr.Histogram = h
	return sr, nil
}
