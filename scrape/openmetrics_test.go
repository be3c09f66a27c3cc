package scrape

import (
	"errors"
	"testing"
)

func TestOpenMetricsDetails(t *testing.T) {
	body := `# HELP req_seconds Request time "quoted" \\ back.
# TYPE req_seconds histogram
# UNIT req_seconds seconds
req_seconds_bucket{le="1.0"} 1.0 # {trace_id="abc"} 0.5 1751371200.0
req_seconds_bucket{le="+Inf"} 2.0 1751371200.5
req_seconds_count 2.0
req_seconds_sum 3.5
req_seconds_created 1.75e+09
# TYPE queue gaugehistogram
queue_bucket{le="10.0"} 3.0
queue_bucket{le="+Inf"} 4.0
queue_gcount 4.0
queue_gsum 17.0
# TYPE build info
build_info{version="1.2"} 1.0
# TYPE mystery unknown
mystery{x="a b}c"} 7.0
# EOF
`
	fs := mustParse(t, ctOpenMetrics, []byte(body))
	r := fs["req_seconds"]
	if r == nil || r.Unit != "seconds" || r.Help != `Request time "quoted" \ back.` {
		t.Fatalf("req_seconds = %+v", r)
	}
	h := r.Series[0].Histogram
	if h.Count != 2 || h.Sum != 3.5 || h.Buckets[0].Count != 1 || r.Series[0].Created != 1.75e9 {
		t.Errorf("req_seconds series = %+v, %+v", r.Series[0], h)
	}
	q := fs["queue"]
	if q == nil || q.Type != TypeGaugeHistogram || q.Series[0].Histogram.Count != 4 || q.Series[0].Histogram.Sum != 17 {
		t.Errorf("queue = %+v", q)
	}
	if b := fs["build_info"]; b == nil || b.Type != TypeGauge || b.Series[0].Value != 1 {
		t.Errorf("build_info = %+v", b)
	}
	if m := fs["mystery"]; m == nil || m.Type != TypeUntyped || m.Series[0].Labels["x"] != "a b}c" || m.Series[0].Value != 7 {
		t.Errorf("mystery = %+v", m)
	}

	var pe *ParseError
	_, err := Parse(ctOpenMetrics, []byte("# TYPE a gauge\na 1\n# EOF\na 2\n"))
	if !errors.As(err, &pe) || pe.Line != 4 {
		t.Errorf("data after EOF: %v", err)
	}
	_, err = Parse(ctOpenMetrics, []byte("# TYPE a gauge\na 1\na{ 2\n# EOF\n"))
	if !errors.As(err, &pe) || pe.Line != 3 || pe.Format != FormatOpenMetrics {
		t.Errorf("malformed sample: %v", err)
	}
}

// TestOpenMetricsBackslashBeforeOtherCharacters: OpenMetrics lets a
// backslash precede any character in a label value and keeps it as
// written; the three escapes keep their meaning beside it.
func TestOpenMetricsBackslashBeforeOtherCharacters(t *testing.T) {
	body := `# TYPE a counter
a_total{path="C:\dir\zz",mixed="\"\\\n\t"} 1
# EOF
`
	fs := mustParse(t, ctOpenMetrics, []byte(body))
	a := fs["a_total"]
	if a == nil || len(a.Series) != 1 {
		t.Fatalf("a_total = %+v", a)
	}
	labels := a.Series[0].Labels
	if got, want := labels["path"], `C:\dir\zz`; got != want {
		t.Errorf("path = %q, want %q", got, want)
	}
	if got, want := labels["mixed"], "\"\\\n\\t"; got != want {
		t.Errorf("mixed = %q, want %q", got, want)
	}
}
