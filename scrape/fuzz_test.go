package scrape

import (
	"bytes"
	"io"
	"math"
	"testing"
	"time"

	"github.com/omnibench/omnibench/report/table"
)

var fuzzContentTypes = []string{
	"",
	ctText,
	ctOpenMetrics,
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited",
	"text/html",
}

// fuzzExpositions are FuzzParse's seeds: small excerpts of what Python's
// and Go's clients write in each format, and broken bodies. They stay under
// maxSeed: the fuzzer minimizes every input that finds new code before it
// goes on, and with the 6-8 KB goldens as seeds it spent whole runs
// minimizing instead of fuzzing.
var fuzzExpositions = []struct {
	sel    uint8 // index into fuzzContentTypes
	body   string
	parses bool
}{
	// Python's text format: .0 values, _created as gauge families.
	{0, `# HELP vllm:omni_requests_success_total Finished requests.
# TYPE vllm:omni_requests_success_total counter
vllm:omni_requests_success_total{finished_reason="stop",model_name="m"} 3.0
# HELP vllm:omni_requests_success_created Finished requests.
# TYPE vllm:omni_requests_success_created gauge
vllm:omni_requests_success_created{finished_reason="stop",model_name="m"} 1.7513712e+09
`, true},
	{0, `# HELP vllm:omni_e2e_request_latency_s Request latency.
# TYPE vllm:omni_e2e_request_latency_s histogram
vllm:omni_e2e_request_latency_s_bucket{le="0.5",model_name="m"} 1.0
vllm:omni_e2e_request_latency_s_bucket{le="+Inf",model_name="m"} 4.0
vllm:omni_e2e_request_latency_s_count{model_name="m"} 4.0
vllm:omni_e2e_request_latency_s_sum{model_name="m"} 6.5
`, true},
	// Go's text format: integers, le last, summaries with quantiles.
	{1, goTextSeed, true},
	{0, `# TYPE go_gc_duration_seconds summary
go_gc_duration_seconds{quantile="0"} 2.1e-05
go_gc_duration_seconds{quantile="1"} 0.000312
go_gc_duration_seconds_sum 0.0021
go_gc_duration_seconds_count 31
`, true},
	// OpenMetrics: suffixless family names, exemplars, units, the other types.
	{2, openMetricsSeed, true},
	{2, `# TYPE queue gaugehistogram
queue_bucket{le="+Inf"} 4
queue_gcount 4
queue_gsum 17.0
# TYPE build info
build_info{version="1.2"} 1
# TYPE state stateset
state{state="up"} 1
# EOF
`, true},
	{2, "# TYPE c counter\nc_total 1 # {a=\"b\"} 1\nc_created 1.7e9\n# EOF\n", true},
	{3, "\x05\x0a\x01x\x18\x01", true},
	{4, "<html></html>", false},
	{1, "x{a=\"\\\"}\"} NaN\r\nx{a=\"b\"} +Inf", true},
}

// maxSeed bounds every seed of this package's fuzz targets.
const maxSeed = 512

// goTextSeed and openMetricsSeed are also FuzzDecodeSnapshot's seeds.
const goTextSeed = `# HELP vllm:omni_audio_ttfp_s Time to the first audio packet.
# TYPE vllm:omni_audio_ttfp_s histogram
vllm:omni_audio_ttfp_s_bucket{model_name="m",le="0.25"} 2
vllm:omni_audio_ttfp_s_bucket{model_name="m",le="+Inf"} 3
vllm:omni_audio_ttfp_s_sum{model_name="m"} 0.9
vllm:omni_audio_ttfp_s_count{model_name="m"} 3
`

const openMetricsSeed = `# TYPE vllm:omni_requests_success counter
vllm:omni_requests_success_total{finished_reason="stop"} 3.0 # {trace_id="a1"} 1.0 1751371200.0
vllm:omni_requests_success_created{finished_reason="stop"} 1.7513712e+09
# TYPE size_bytes histogram
# UNIT size_bytes bytes
size_bytes_bucket{le="1024.0"} 1
size_bytes_bucket{le="+Inf"} 2
size_bytes_count 2
size_bytes_sum 5000.0
# EOF
`

// TestFuzzSeedsAreSmall: the fuzz seeds stay small, and the excerpts of
// real expositions still parse (a seed that stopped parsing would fuzz
// only the error paths).
func TestFuzzSeedsAreSmall(t *testing.T) {
	for i, s := range fuzzExpositions {
		if len(s.body) > maxSeed {
			t.Errorf("seed %d: %d bytes, over %d", i, len(s.body), maxSeed)
		}
		if _, err := Parse(fuzzContentTypes[s.sel], []byte(s.body)); (err == nil) != s.parses {
			t.Errorf("seed %d: parse error %v, want it to parse: %v", i, err, s.parses)
		}
	}
	for i, s := range fuzzSnapshots(t) {
		if len(s) > maxSeed {
			t.Errorf("snapshot seed %d: %d bytes, over %d", i, len(s), maxSeed)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range fuzzExpositions {
		f.Add(s.sel, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		ct := fuzzContentTypes[int(sel)%len(fuzzContentTypes)]
		fs, err := Parse(ct, body)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		// Diffing a scrape with itself never sees a restart.
		d := Diff(fs, fs)
		if d.Reset {
			t.Fatalf("self-diff reported a reset: %+v", d)
		}
		for _, fam := range fs {
			for _, s := range fam.Series {
				if h := s.Histogram; h != nil {
					if n := len(h.Buckets); n == 0 || !math.IsInf(h.Buckets[n-1].UpperBound, 1) {
						t.Fatalf("%s: histogram without +Inf bucket: %+v", fam.Name, h.Buckets)
					}
					_ = h.Quantile(0.5)
				}
			}
		}
		if err := table.Render(io.Discard, "table", d.Tables(TableOptions{All: true, Buckets: true})...); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteJSON(io.Discard, TableOptions{All: true}); err != nil {
			t.Fatal(err)
		}
	})
}

// fuzzSnapshots are FuzzDecodeSnapshot's seeds: a snapshot file with a
// small body, a bare exposition, and broken headers.
func fuzzSnapshots(t testing.TB) [][]byte {
	var buf bytes.Buffer
	snap := &Snapshot{URL: "http://127.0.0.1:8000/metrics", ContentType: ctText,
		FetchedAt: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Body: []byte(goTextSeed)}
	if _, err := snap.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return [][]byte{
		buf.Bytes(),
		[]byte(openMetricsSeed),
		[]byte(snapshotMagic + `{"version":1,"content_type":"application/openmetrics-text"}` + "\n# EOF\n"),
		[]byte(snapshotMagic + "{\n"),
	}
}

func FuzzDecodeSnapshot(f *testing.F) {
	for _, s := range fuzzSnapshots(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot(data)
		if err != nil {
			return
		}
		_, _ = s.Families()
		var out bytes.Buffer
		if _, err := s.WriteTo(&out); err != nil {
			// Only a header that cannot be marshalled again may fail.
			return
		}
		again, err := DecodeSnapshot(out.Bytes())
		if err != nil {
			t.Fatalf("re-reading a written snapshot: %v", err)
		}
		if !bytes.Equal(again.Body, s.Body) || again.ContentType != s.ContentType || again.URL != s.URL || !again.FetchedAt.Equal(s.FetchedAt) {
			t.Fatalf("round trip changed the snapshot: %+v -> %+v", s, again)
		}
	})
}
