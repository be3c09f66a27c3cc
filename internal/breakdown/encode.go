package breakdown

import (
	"encoding/json"
	"fmt"
	"math"
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
func (s Series) MarshalJSON() ([]byte, error) {
	out := seriesJSON{At: s.At, Families: []familyJSON{}}
	for _, name := range s.families.Names() {
		f := s.families[name]
		fj := familyJSON{Name: name, Type: f.Type}
		for _, sr := range f.Series {
			sj := sampleJSON{Labels: sr.Labels, Value: number(sr.Value), Created: number(sr.Created)}
			if h := sr.Histogram; h != nil {
				sj.Count, sj.Sum = number(h.Count), number(h.Sum)
				sj.Buckets = make([][2]number, len(h.Buckets))
				for i, b := range h.Buckets {
					sj.Buckets[i] = [2]number{number(b.UpperBound), number(b.Count)}
				}
			}
			fj.Series = append(fj.Series, sj)
		}
		out.Families = append(out.Families, fj)
	}
	return json.Marshal(out)
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
