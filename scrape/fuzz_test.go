package scrape

import (
	"bytes"
	"io"
	"math"
	"testing"
	"time"

	"github.com/omnibench/omnibench/report"
)

var fuzzContentTypes = []string{
	"",
	ctText,
	ctOpenMetrics,
	"application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited",
	"text/html",
}

func FuzzParse(f *testing.F) {
	for i, file := range []string{"python.prom", "go.prom", "openmetrics.txt"} {
		f.Add(uint8(i), readTestdata(f, file))
	}
	f.Add(uint8(0), []byte("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 2.5\nh_count 3\n"))
	f.Add(uint8(2), []byte("# TYPE c counter\nc_total 1 # {a=\"b\"} 1\nc_created 1.7e9\n# EOF\n"))
	f.Add(uint8(3), []byte{0x05, 0x0a, 0x01, 'x', 0x18, 0x01})
	f.Add(uint8(4), []byte("<html></html>"))
	f.Add(uint8(1), []byte("x{a=\"\\\"}\"} NaN\r\nx{a=\"b\"} +Inf"))
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
		if err := report.Render(io.Discard, "table", d.Tables(TableOptions{All: true, Buckets: true})...); err != nil {
			t.Fatal(err)
		}
		if err := d.WriteJSON(io.Discard, TableOptions{All: true}); err != nil {
			t.Fatal(err)
		}
	})
}

func FuzzDecodeSnapshot(f *testing.F) {
	var buf bytes.Buffer
	snap := &Snapshot{URL: "http://127.0.0.1:8000/metrics", ContentType: ctText,
		FetchedAt: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC), Body: readTestdata(f, "go.prom")}
	if _, err := snap.WriteTo(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add(readTestdata(f, "openmetrics.txt"))
	f.Add([]byte(snapshotMagic + `{"version":1,"content_type":"application/openmetrics-text"}` + "\n# EOF\n"))
	f.Add([]byte(snapshotMagic + "{\n"))
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
