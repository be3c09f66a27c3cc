package report

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// widest returns the widest line of out, in runes (what a terminal shows).
func widest(out string) int {
	w := 0
	for _, l := range strings.Split(out, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

func TestRunTablesGroupStallsUnderContinuity(t *testing.T) {
	recs := sampleRecords(200, 4) // late chunks: some responses stall
	s := summary.Compute(recs, summary.Options{})
	s.Mode = "closed"
	tables := RunTables(RunReport{Header: *sampleHeader("tts-short"), Summary: s, Workload: WorkloadOf(recs)})
	var titles []string
	for _, tb := range tables {
		titles = append(titles, tb.Title)
	}
	lat := slices.Index(titles, "Latency and real-time factor")
	cont := slices.Index(titles, "Playback continuity")
	stalls := slices.Index(titles, "Underrun and stalls per response")
	if titles[0] != "Run" || lat < 0 || cont < lat || stalls != cont+1 {
		t.Fatalf("tables %q: want Run first and the stall distributions right after continuity", titles)
	}
	for _, row := range tables[lat].Rows {
		if strings.Contains(row[0], "stall") || strings.Contains(row[0], "underrun") || strings.Contains(row[0], "schedule_lag") {
			t.Errorf("latency table has row %q", row[0])
		}
	}
	if !slices.Contains(tables[stalls].Header, "p50") || slices.Contains(tables[stalls].Header, "median") {
		t.Errorf("stall table header %q: p50 without a median beside it", tables[stalls].Header)
	}
	// Without any stall the distribution table of zeros goes, with a note.
	for i := range recs {
		if c := recs[i].Continuity; c != nil {
			cp := *c
			cp.MaxUnderrunS, cp.StallResume = 0, &results.PlayerResult{}
			recs[i].Continuity = &cp
		}
	}
	s = summary.Compute(recs, summary.Options{})
	tables = RunTables(RunReport{Summary: s})
	for _, tb := range tables {
		if tb.Title == "Underrun and stalls per response" {
			t.Errorf("a table of zeros is shown: %q", tb.Rows)
		}
		if tb.Title == "Playback continuity" && !slices.Contains(tb.Notes, "No response had an underrun or a stall.") {
			t.Errorf("continuity notes %q", tb.Notes)
		}
	}
}

func TestFormatValue(t *testing.T) {
	cases := map[float64]string{12345.6: "12346", 42: "42", 3: "3", 123.45: "123.5", 1.23456: "1.235", 0: "0", 0.0123456: "0.0123", 2.5e-6: "2.5e-06", 5.8e-12: "0", -8.881784197001252e-16: "0",
		1234.56: "1235", 126.2: "126.2", 12.345: "12.35", 1.5: "1.500", 0.777: "0.7770", 0.0001234: "0.000123", -3.5: "-3.500"}
	for v, want := range cases {
		if got := fv(v); got != want {
			t.Errorf("fv(%g) = %q, want %q", v, got, want)
		}
	}
}
