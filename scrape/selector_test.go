package scrape

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/bench/expositions"
)

// selectExact is what a Selector must return for body: Snapshot.Select,
// without the decoded protobuf form.
func selectExact(contentType string, body []byte, keep Filter) (Families, error) {
	fs, err := (&Snapshot{ContentType: contentType, Body: body}).Select(keep)
	for _, f := range fs {
		f.Raw = nil
	}
	return fs, err
}

// checkSelector feeds bodies to one Selector in turn and requires each
// result (and error) to be the exact path's. It returns how many were
// decoded by their values alone.
func checkSelector(t testing.TB, contentType string, keep Filter, bodies ...[]byte) int {
	t.Helper()
	sel := NewSelector(keep)
	for i, body := range bodies {
		want, wantErr := selectExact(contentType, body, keep)
		got, err := sel.Select(&Snapshot{ContentType: contentType, Body: body})
		if fmt.Sprint(err) != fmt.Sprint(wantErr) {
			t.Fatalf("body %d: Selector error %v, exact path %v", i+1, err, wantErr)
		}
		if g, w := familiesText(got), familiesText(want); g != w {
			t.Fatalf("body %d: Selector differs from the exact path:\n--- got\n%s\n--- want\n%s", i+1, g, w)
		}
	}
	return sel.Reused()
}

// breakdownLike keeps what a breakdown reads: pipeline families and the
// upstream per-stage histograms.
var breakdownLike = Filter{
	Names:    []string{"vllm:e2e_request_latency_seconds", "vllm:num_requests_running", "vllm:generation_tokens_total"},
	Prefixes: []string{prefixDesign},
}

// The scrapes of one simulator after more and more requests have the same
// lines but for their values: from the second on, the Selector reads only
// the values, and its results are the exact path's.
func TestSelectorSimulatorScrapes(t *testing.T) {
	texts, err := expositions.Texts(t.Context(), expositions.Sizes[0], 3)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(texts[0], texts[1]) {
		t.Fatal("two scrapes after different numbers of requests are the same")
	}
	for _, keep := range []Filter{breakdownLike, pipelineOnly, {Prefixes: []string{"vllm:", "python_"}}} {
		// Twice through: alternating bodies, each differs from the last.
		bodies := append(append([][]byte{}, texts...), texts...)
		if reused := checkSelector(t, ctText, keep, bodies...); reused != len(bodies)-1 {
			t.Errorf("%+v: %d of %d scrapes decoded by their values, want all but the first", keep, reused, len(bodies))
		}
	}
}

// TestSelector covers what the Selector must decode by values (reused) and
// what it must leave to the exact path, which includes every error.
func TestSelector(t *testing.T) {
	const (
		python = "# HELP vllm:omni_x_total Finished.\n# TYPE vllm:omni_x_total counter\n" +
			"vllm:omni_x_total{reason=\"stop\"} %s\n# TYPE vllm:omni_x_created gauge\n" +
			"vllm:omni_x_created{reason=\"stop\"} %s\n"
		histogram = "# TYPE vllm:omni_h histogram\nvllm:omni_h_bucket{le=\"0.5\",m=\"a\\\"b\"} %s\n" +
			"vllm:omni_h_bucket{le=\"+Inf\",m=\"a\\\"b\"} %s\nvllm:omni_h_count{m=\"a\\\"b\"} %s\nvllm:omni_h_sum{m=\"a\\\"b\"} %s\n"
		summary = "# TYPE vllm:omni_s summary\nvllm:omni_s{quantile=\"0.5\"} %s\nvllm:omni_s_sum %s\nvllm:omni_s_count %s\n"
		gauge   = "# TYPE vllm:omni_g gauge\nvllm:omni_g{a=\"1\"} %s\nvllm:omni_g{a=\"2\"} %s\nother 1\n"
	)
	for _, tc := range []struct {
		name   string
		bodies []string
		reused int
	}{
		{"python counter and its _created", []string{fmt.Sprintf(python, "3.0", "1.7e9"), fmt.Sprintf(python, "4.0", "1.8e9")}, 1},
		{"histogram with escaped labels", []string{fmt.Sprintf(histogram, "1", "2", "2", "0.7"), fmt.Sprintf(histogram, "3", "5", "5", "1.5e0")}, 1},
		{"summary", []string{fmt.Sprintf(summary, "0.1", "3", "7"), fmt.Sprintf(summary, "NaN", "4", "8")}, 1},
		{"gauges with NaN, ±Inf and -0", []string{fmt.Sprintf(gauge, "1", "2"), fmt.Sprintf(gauge, "NaN", "-Inf"), fmt.Sprintf(gauge, "+Inf", "-0")}, 2},
		{"CRLF line ends", []string{strings.ReplaceAll(fmt.Sprintf(gauge, "1", "2"), "\n", "\r\n"), strings.ReplaceAll(fmt.Sprintf(gauge, "3", "4"), "\n", "\r\n")}, 1},
		{"a count of -0 is 0", []string{fmt.Sprintf(histogram, "1", "2", "2", "0.7"), fmt.Sprintf(histogram, "0", "0", "-0", "0")}, 1},
		{"a fractional count is the exact path's", []string{fmt.Sprintf(histogram, "1", "2", "2", "0.7"), fmt.Sprintf(histogram, "1", "2.5", "2.5", "0.7")}, 0},
		{"a hexadecimal value is the exact path's error", []string{fmt.Sprintf(gauge, "1", "2"), fmt.Sprintf(gauge, "0x1p3", "2")}, 0},
		{"a value the parser refuses is its error", []string{fmt.Sprintf(gauge, "1", "2"), fmt.Sprintf(gauge, "1e999", "2")}, 0},
		{"a timestamp is the exact path's", []string{fmt.Sprintf(gauge, "1", "2"), fmt.Sprintf(gauge, "1 1700000000000", "2")}, 0},
		{"no template with a timestamp", []string{fmt.Sprintf(gauge, "1 17", "2"), fmt.Sprintf(gauge, "1 17", "3")}, 0},
		{"a new series", []string{fmt.Sprintf(gauge, "1", "2"), fmt.Sprintf(gauge, "1", "2") + "vllm:omni_g{a=\"3\"} 1\n"}, 0},
		{"a changed HELP", []string{"# HELP vllm:omni_g one\n" + fmt.Sprintf(gauge, "1", "2"), "# HELP vllm:omni_g two\n" + fmt.Sprintf(gauge, "1", "2")}, 0},
		{"a skipped family may change", []string{fmt.Sprintf(gauge, "1", "2"), fmt.Sprintf(gauge, "1", "2") + "another 7\n"}, 1},
		{"no template with a duplicated series", []string{fmt.Sprintf(gauge, "1", "2") + "vllm:omni_g{a=\"1\"} 5\n", fmt.Sprintf(gauge, "1", "3") + "vllm:omni_g{a=\"1\"} 5\n"}, 0},
		{"no template without +Inf", []string{"# TYPE vllm:omni_h histogram\nvllm:omni_h_bucket{le=\"1\"} 1\nvllm:omni_h_count 1\nvllm:omni_h_sum 1\n", "# TYPE vllm:omni_h histogram\nvllm:omni_h_bucket{le=\"1\"} 2\nvllm:omni_h_count 2\nvllm:omni_h_sum 1\n"}, 0},
		{"no template with both prefixes", []string{"vllm:omni_a 1\nvllm_omni:a 2\n", "vllm:omni_a 3\nvllm_omni:a 4\n"}, 0},
		{"a broken body after a template", []string{fmt.Sprintf(gauge, "1", "2"), "vllm:omni_g{a=\"1\" 1\n"}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bodies := make([][]byte, len(tc.bodies))
			for i, b := range tc.bodies {
				bodies[i] = []byte(b)
			}
			if reused := checkSelector(t, ctText, pipelineOnly, bodies...); reused != tc.reused {
				t.Errorf("%d scrapes decoded by their values, want %d", reused, tc.reused)
			}
		})
	}
}

// The families a Selector returns are its caller's: changing the values
// of one result changes neither the next result nor the template.
func TestSelectorResultsAreIndependent(t *testing.T) {
	body := []byte("# TYPE vllm:omni_h histogram\nvllm:omni_h_bucket{le=\"+Inf\"} 2\nvllm:omni_h_count 2\nvllm:omni_h_sum 1\n")
	sel := NewSelector(pipelineOnly)
	for i := range 3 {
		fs, err := sel.Select(&Snapshot{ContentType: ctText, Body: body})
		if err != nil {
			t.Fatal(err)
		}
		h := fs["vllm:omni_h"].Series[0].Histogram
		if h.Count != 2 || h.Buckets[0].Count != 2 {
			t.Fatalf("scrape %d: %+v after an earlier result was changed", i+1, *h)
		}
		h.Count, h.Buckets[0].Count = -1, -1
	}
	if sel.Reused() != 2 {
		t.Fatalf("%d scrapes decoded by their values, want 2", sel.Reused())
	}
}

func TestPlainNumber(t *testing.T) {
	for token, want := range map[string]bool{
		"1": true, "-1.5": true, "+2": true, ".5": true, "5.": true, "1e9": true, "1.7E+09": true, "2e-3": true,
		"NaN": true, "+Inf": true, "-Inf": true,
		"": false, ".": false, "-": false, "1e": false, "1e+": false, "Inf": false, "nan": false, "0x10": false,
		"1_0": false, "1 2": false, "1.2.3": false, "e5": false,
	} {
		if got := plainNumber([]byte(token)); got != want {
			t.Errorf("plainNumber(%q) = %v, want %v", token, got, want)
		}
	}
}

// FuzzSelector feeds two bodies in turn to one Selector: each result and
// error must be the exact path's, whichever path the Selector took.
func FuzzSelector(f *testing.F) {
	for _, e := range fuzzExpositions {
		if e.sel <= 1 && len(e.body) <= maxSeed/2 {
			f.Add([]byte(e.body), []byte(strings.ReplaceAll(e.body, "1", "2")), uint8(0))
		}
	}
	f.Add([]byte("# TYPE vllm:omni_h histogram\nvllm:omni_h_bucket{le=\"+Inf\"} 2\nvllm:omni_h_count 2\nvllm:omni_h_sum 1\n"),
		[]byte("# TYPE vllm:omni_h histogram\nvllm:omni_h_bucket{le=\"+Inf\"} 3\nvllm:omni_h_count 3\nvllm:omni_h_sum 1.5\n"), uint8(1))
	f.Add([]byte("# TYPE vllm:omni_s summary\nvllm:omni_s{quantile=\"0.5\"} 1\nvllm:omni_s_sum 2\nvllm:omni_s_count 3\n"),
		[]byte("# TYPE vllm:omni_s summary\nvllm:omni_s{quantile=\"0.5\"} 4\nvllm:omni_s_sum 5\nvllm:omni_s_count 6\n"), uint8(0))
	if texts, err := expositions.Texts(f.Context(), expositions.Sizes[0], 2); err == nil {
		for _, family := range []string{"vllm:e2e_request_latency_seconds", "vllm:omni_audio_ttfp_s", "vllm:num_requests_running"} {
			first, second := familyExcerpt(texts[0], family), familyExcerpt(texts[1], family)
			if len(first) == 0 || len(second) == 0 {
				f.Fatalf("no line of %s in the simulator's exposition", family)
			}
			f.Add(first, second, uint8(2))
		}
	} else {
		f.Fatal(err)
	}
	filters := []Filter{pipelineOnly, breakdownLike, {Prefixes: []string{"vllm:"}}}
	f.Fuzz(func(t *testing.T, first, second []byte, which uint8) {
		checkSelector(t, ctText, filters[int(which)%len(filters)], first, second)
	})
}

// familyExcerpt is the start of family's lines in body (its HELP and TYPE lines
// and its samples), whole lines of at most maxSeed/2 bytes in all.
func familyExcerpt(body []byte, family string) []byte {
	var out []byte
	for line := range bytes.Lines(body) {
		name := line
		if rest, ok := bytes.CutPrefix(line, []byte("# HELP ")); ok {
			name = rest
		} else if rest, ok := bytes.CutPrefix(line, []byte("# TYPE ")); ok {
			name = rest
		}
		if !bytes.HasPrefix(name, []byte(family)) {
			continue
		}
		if len(out)+len(line) > maxSeed/2 {
			break
		}
		out = append(out, line...)
	}
	return out
}
