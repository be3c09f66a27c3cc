package scrape

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/bench/expositions"
)

// pipelineOnly keeps the vLLM-Omni pipeline families, under either prefix.
var pipelineOnly = Filter{Prefixes: []string{prefixDesign}}

// familiesText writes every field of every family, sorted, so that two
// parses compare by value (NaN included, which reflect.DeepEqual refuses).
func familiesText(fs Families) string {
	var b strings.Builder
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for n := range fs {
			if !yield(n) {
				return
			}
		}
	}) {
		f := fs[name]
		fmt.Fprintf(&b, "%s|%s|%s|%q|%s|%s|%s\n", f.Name, f.Original, f.Type, f.Help, f.Unit, f.CreatedFor, f.AlsoExposedAs)
		for _, s := range f.Series {
			fmt.Fprintf(&b, "  %s %v value=%v created=%v", s.Key, s.Labels, s.Value, s.Created)
			if s.Histogram != nil {
				fmt.Fprintf(&b, " histogram=%+v", *s.Histogram)
			}
			if s.Summary != nil {
				fmt.Fprintf(&b, " summary=%+v", *s.Summary)
			}
			b.WriteByte('\n')
		}
		if f.Raw != nil {
			b.WriteString(f.Raw.String())
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// checkSelected compares ParseSelected with Parse followed by removing the
// families keep does not match.
func checkSelected(t *testing.T, contentType string, body []byte, keep Filter) Families {
	t.Helper()
	all, err := Parse(contentType, body)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	got, err := ParseSelected(contentType, body, keep)
	if err != nil {
		t.Fatalf("ParseSelected(%+v): %v", keep, err)
	}
	if g, w := familiesText(got), familiesText(keep.prune(all)); g != w {
		t.Fatalf("ParseSelected(%+v) differs from Parse filtered:\n--- got\n%s\n--- want\n%s", keep, g, w)
	}
	return got
}

func TestParseSelectedSimulatorExpositions(t *testing.T) {
	filters := []Filter{
		pipelineOnly,
		{Prefixes: []string{"vllm_omni:audio_"}},
		{Names: []string{"vllm:omni_e2e_request_latency_s", "vllm:request_success_total", "vllm:num_requests_running"}},
		{Prefixes: []string{"vllm:", "python_"}},
	}
	for _, size := range expositions.Sizes[:2] {
		body, err := expositions.Text(t.Context(), size)
		if err != nil {
			t.Fatal(err)
		}
		for _, keep := range filters {
			t.Run(fmt.Sprintf("%s/%+v", size, keep), func(t *testing.T) {
				if fs := checkSelected(t, ctText, body, keep); len(fs) == 0 {
					t.Fatalf("no family kept")
				}
			})
		}
	}
}

// TestParseSelectedFollowsTheTextParser covers the rules by which the text
// parser assigns a line to a family, each of which a line filter working
// on names alone gets wrong.
func TestParseSelectedFollowsTheTextParser(t *testing.T) {
	for _, tc := range []struct {
		name string
		body string
		keep Filter
		want []string // kept families
	}{{
		name: "a summary's _count belongs to the summary, not to a family of its name",
		body: "# TYPE rpc summary\nrpc{quantile=\"0.5\"} 1\nrpc_count 4\nrpc_sum 9\n",
		keep: Filter{Names: []string{"rpc_count"}},
	}, {
		name: "a histogram is kept with its _bucket, _count and _sum lines",
		body: "# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 2\nother 1\nh_sum 3\nh_count 2\n",
		keep: Filter{Names: []string{"h"}},
		want: []string{"h"},
	}, {
		name: "a _count seen before the TYPE of its base is a family of its own",
		body: "# HELP q_count Counted.\nq_count 3\n# TYPE q summary\nq_sum 1\n",
		keep: Filter{Names: []string{"q_count"}},
		want: []string{"q_count"},
	}, {
		name: "a HELP line with no text does not create the family",
		body: "# HELP s_count\n# TYPE s summary\ns_count 3\ns_sum 1\n",
		keep: Filter{Names: []string{"s"}},
		want: []string{"s"},
	}, {
		name: "the _created companion of a kept counter sets its series' Created",
		body: "# TYPE c_total counter\nc_total{a=\"x\"} 2\n# TYPE c_created gauge\nc_created{a=\"x\"} 1.75e9\n",
		keep: Filter{Names: []string{"c_total"}},
		want: []string{"c_total"},
	}, {
		name: "both pipeline spellings are one family",
		body: "# TYPE vllm_omni:x_total counter\nvllm_omni:x_total 1\n# TYPE vllm:omni_x_total counter\nvllm:omni_x_total 2\n",
		keep: Filter{Names: []string{"vllm_omni:x_total"}},
		want: []string{"vllm:omni_x_total"},
	}, {
		name: "declared families without samples are kept",
		body: "# HELP vllm:omni_idle_s Nothing yet.\n# TYPE vllm:omni_idle_s histogram\nup 1\n",
		keep: pipelineOnly,
		want: []string{"vllm:omni_idle_s"},
	}, {
		name: "a quoted name makes the body parsed whole",
		body: "{\"vllm:omni_q.x\"} 1\nup 1\n",
		keep: pipelineOnly,
		want: []string{"vllm:omni_q.x"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			fs := checkSelected(t, ctText, []byte(tc.body), tc.keep)
			if got := slices.Sorted(func(yield func(string) bool) {
				for n := range fs {
					if !yield(n) {
						return
					}
				}
			}); !slices.Equal(got, tc.want) {
				t.Fatalf("kept %q, want %q", got, tc.want)
			}
		})
	}
}

// TestParseSelectedSkipsWithoutValidating: a malformed line in a skipped
// family is not read, while one in a kept family is an error that names the
// line in the source, as Parse's does.
func TestParseSelectedSkipsWithoutValidating(t *testing.T) {
	body := "# TYPE vllm:omni_a_total counter\nvllm:omni_a_total 1\nbroken{ 1\n"
	fs, err := ParseSelected(ctText, []byte(body), pipelineOnly)
	if err != nil || fs["vllm:omni_a_total"] == nil {
		t.Fatalf("ParseSelected = %v, %v; want the pipeline family", fs, err)
	}
	body = "up 1\nvllm:omni_a_total{x=\"y\" 1\n"
	_, err = ParseSelected(ctText, []byte(body), pipelineOnly)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 {
		t.Fatalf("err = %v, want a ParseError at line 2", err)
	}
}

// TestParseSelectedCapsKeptSamples: the sample cap bounds the decoder, which
// sees only the kept lines.
func TestParseSelectedCapsKeptSamples(t *testing.T) {
	var b bytes.Buffer
	for i := range 10 {
		fmt.Fprintf(&b, "other{i=\"%d\"} 1\n", i)
	}
	b.WriteString("vllm:omni_a 1\n")
	if _, err := parseSelected("", ctText, b.Bytes(), 0, 2, pipelineOnly); err != nil {
		t.Fatalf("one kept sample under a cap of 2: %v", err)
	}
	var le *LimitError
	if _, err := parseSelected("", ctText, b.Bytes(), 0, 2, Filter{Prefixes: []string{"o"}}); !errors.As(err, &le) {
		t.Fatalf("ten kept samples over a cap of 2: err %v, want a LimitError", err)
	}
}

// TestSelectLinesAllocationsDoNotGrowWithLines: skipping costs no
// allocation per sample line, only per family (its name, its TYPE).
func TestSelectLinesAllocationsDoNotGrowWithLines(t *testing.T) {
	body, err := expositions.Text(t.Context(), expositions.Sizes[0])
	if err != nil {
		t.Fatal(err)
	}
	skipAll := Filter{Names: []string{"absent"}}
	allocs := func(text []byte) float64 {
		return testing.AllocsPerRun(5, func() {
			if _, ok := newLineSelector(skipAll).selectLines(text); !ok {
				t.Fatal("selector gave up on the simulator's exposition")
			}
		})
	}
	// The same families with ten times the sample lines.
	var samples []byte
	for line := range bytes.Lines(body) {
		if line[0] != '#' {
			samples = append(samples, line...)
		}
	}
	longer := append(slices.Clip(body), bytes.Repeat(samples, 9)...)
	if once, tenTimes := allocs(body), allocs(longer); tenTimes != once {
		t.Fatalf("%v allocations for ten times the samples, %v for the body; want the same", tenTimes, once)
	}
}

func TestSnapshotSelect(t *testing.T) {
	body := "# TYPE vllm:omni_a_total counter\nvllm:omni_a_total 1\nup{ broken\n"
	s := &Snapshot{Path: "scrape.prom", ContentType: ctText, Body: []byte(body)}
	fs, err := s.Select(pipelineOnly)
	if err != nil || len(fs) != 1 {
		t.Fatalf("Select = %v, %v; want one family", fs, err)
	}
	if _, err := s.Select(Filter{Names: []string{"up"}}); err == nil || !strings.Contains(err.Error(), "scrape.prom") {
		t.Fatalf("Select of the broken family: err %v, want one naming the file", err)
	}
}

// FuzzParseSelected checks that ParseSelected equals Parse filtered on every
// text body Parse accepts, for a filter by name and one by prefix drawn
// from the input.
func FuzzParseSelected(f *testing.F) {
	for _, e := range fuzzExpositions {
		if e.sel <= 1 {
			f.Add([]byte(e.body), "vllm:omni_e2e_request_latency_s", "go_")
		}
	}
	f.Add([]byte("# TYPE rpc summary\nrpc_count 4\nrpc_sum 9\n# HELP x_count\nx_count 1\n"), "rpc_count", "x")
	f.Add([]byte("# TYPE c_total counter\nc_total 2\nc_created 1.7e9\n"), "c_total", "")
	f.Add([]byte("# TYPE vllm_omni:h histogram\nvllm_omni:h_bucket{le=\"+Inf\"} 1\n"), "", "vllm:omni_")
	f.Fuzz(func(t *testing.T, body []byte, name, prefix string) {
		keep := Filter{Names: []string{name}, Prefixes: []string{prefix}}
		if prefix == "" {
			keep.Prefixes = nil
		}
		all, err := Parse(ctText, body)
		got, selErr := ParseSelected(ctText, body, keep)
		if err != nil {
			return // skipped lines are not validated: either answer is right
		}
		if selErr != nil {
			t.Fatalf("Parse accepts the body, ParseSelected: %v", selErr)
		}
		if g, w := familiesText(got), familiesText(keep.prune(all)); g != w {
			t.Fatalf("ParseSelected(%+v) differs from Parse filtered:\n--- got\n%s\n--- want\n%s", keep, g, w)
		}
	})
}
