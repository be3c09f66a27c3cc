package breakdown

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

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
