package breakdown

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/bench/expositions"
	"github.com/omnibench/omnibench/scrape"
)

// A Series written to a results file and read back breaks down exactly as
// the scrape it came from: the report re-renders what the run printed.
func TestSeriesJSONRoundTrip(t *testing.T) {
	before := newExpo().series(t, t0)
	after := consistentRun().series(t, t0.Add(10*time.Second))
	client := ClientFigures{Requests: 2, MeanE2E: 0.62, MeanTTFP: 0.27}
	want, err := json.Marshal(Compute(before, after, client))
	if err != nil {
		t.Fatal(err)
	}
	var readBack [2]Series
	for i, s := range []Series{before, after} {
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		if err := json.Unmarshal(b, &readBack[i]); err != nil {
			t.Fatalf("unmarshal %s: %v", b, err)
		}
	}
	got, err := json.Marshal(Compute(readBack[0], readBack[1], client))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("read back:\n%s\nwant\n%s", got, want)
	}
	if !reflect.DeepEqual(readBack[1].At, after.At) {
		t.Errorf("at %v, want %v", readBack[1].At, after.At)
	}
}

// A results line that is not a Series is refused, not half read.
func TestSeriesJSONRefusesMalformedHistograms(t *testing.T) {
	for _, in := range []string{
		`{"families":[{"name":"vllm:omni_e2e_request_latency_s","type":"histogram","series":[{"count":1,"buckets":[[1,1]]}]}]}`,
		`{"families":[{"name":"vllm:omni_e2e_request_latency_s","type":"histogram","series":[{"buckets":[[2,1],[1,1],["+Inf",1]]}]}]}`,
		`{"families":[{"name":"vllm:omni_e2e_request_latency_s","type":"histogram","series":[{"count":"x"}]}]}`,
	} {
		var s Series
		if err := json.Unmarshal([]byte(in), &s); err == nil {
			t.Errorf("%s: read without an error", in)
		}
	}
}

// FuzzSeriesJSON reads arbitrary results lines as a Series: never a panic,
// and what it reads breaks down and writes back.
func FuzzSeriesJSON(f *testing.F) {
	fs, err := scrape.Parse("text/plain; version=0.0.4", []byte(consistentRun().String()))
	if err != nil {
		f.Fatal(err)
	}
	b, err := json.Marshal(Select(fs, t0))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"families":[]}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var s Series
		if err := json.Unmarshal(in, &s); err != nil {
			return
		}
		if _, err := json.Marshal(Compute(Series{}, s, ClientFigures{})); err != nil {
			t.Fatalf("breakdown JSON: %v", err)
		}
		if _, err := json.Marshal(s); err != nil {
			t.Fatalf("series JSON: %v", err)
		}
	})
}

// reflectedJSON is the encoding AppendJSON must write: seriesJSON through
// encoding/json, each number through number.MarshalJSON.
func reflectedJSON(s Series) ([]byte, error) {
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

// AppendJSON writes, byte for byte, what encoding/json writes for the same
// series: numbers of every size and kind, labels to escape, empty parts.
func TestSeriesAppendJSONIsEncodingJSON(t *testing.T) {
	tricky := Series{At: t0, families: scrape.Families{
		famStageRunning: {Name: famStageRunning, Type: scrape.TypeGauge, Series: []scrape.Series{
			{Labels: map[string]string{"stage": "0", "replica": "<1&2>", "z": "é\u2028\"\\\n"}, Value: 1e-7},
			{Labels: map[string]string{}, Value: math.NaN(), Created: 1.7e9},
			{Value: math.Copysign(0, -1)}, {Value: -1e21}, {Value: 123456789.125}, {Value: math.Inf(-1)}, {Value: 5e-324},
		}},
		famStageE2E: {Name: famStageE2E, Type: scrape.TypeHistogram, Series: []scrape.Series{
			{Labels: map[string]string{"stage": "1"}, Histogram: &scrape.Histogram{Count: 3, Sum: 0.25,
				Buckets: []scrape.Bucket{{UpperBound: 0.005, Count: 0}, {UpperBound: math.Inf(1), Count: 3}}}},
			{Histogram: &scrape.Histogram{}},
		}},
		famPipelineE2E: {Name: famPipelineE2E, Type: scrape.TypeHistogram},
	}}
	fs, err := scrape.Parse("text/plain; version=0.0.4", []byte(consistentRun().String()))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range []Series{tricky, Select(fs, t0), {At: t0}} {
		want, err := reflectedJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("series %d:\n%s\nwant\n%s", i, got, want)
		}
	}
}

// BenchmarkSeriesJSON encodes the Series of a 16x32 exposition (stats on),
// as a run writes it to its results file every --scrape-interval: through
// AppendJSON and, for comparison, through encoding/json (reflectedJSON).
func BenchmarkSeriesJSON(b *testing.B) {
	texts, err := expositions.Texts(b.Context(), expositions.Sizes[2], 1)
	if err != nil {
		b.Fatal(err)
	}
	s, err := FromSnapshot(&scrape.Snapshot{ContentType: "text/plain; version=0.0.4", Body: texts[0], FetchedAt: t0})
	if err != nil {
		b.Fatal(err)
	}
	for _, enc := range []struct {
		name   string
		encode func(Series) ([]byte, error)
	}{{"AppendJSON", Series.MarshalJSON}, {"encoding-json", reflectedJSON}} {
		b.Run(enc.name, func(b *testing.B) {
			b.ReportAllocs()
			var size int
			for b.Loop() {
				line, err := enc.encode(s)
				if err != nil {
					b.Fatal(err)
				}
				size = len(line)
			}
			b.ReportMetric(float64(size), "line-bytes")
		})
	}
}
