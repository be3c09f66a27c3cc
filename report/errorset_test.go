package report

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

func TestErrorSetTableFitsAndKeepsTheWholeMessage(t *testing.T) {
	long := "HTTP 502: <html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>"
	recs := []results.Record{
		{ID: "req-000000", Seq: 0, ErrorClass: results.ErrHTTPStatus, Status: 502, Error: long},
		{ID: "req-000001", Seq: 1, ErrorClass: results.ErrIdleTimeout, Error: "no data received for the idle timeout, after 3 events"},
	}
	s := summary.Compute(recs, summary.Options{})
	tbl, ok := ErrorSetTable(s)
	if !ok || len(tbl.Rows) != 2 {
		t.Fatalf("table %+v, ok %v", tbl, ok)
	}
	var buf bytes.Buffer
	if err := Render(&buf, FormatTable, tbl); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(buf.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > DefaultWidth {
			t.Errorf("line of %d columns:\n%s", n, line)
		}
	}
	if !strings.Contains(buf.String(), "HTTP 502: <html><head><title>502 Bad... [1]") || !slices.Contains(tbl.Notes, "[1] "+long) {
		t.Errorf("the whole message is not the cut cell's footnote:\n%s", buf.String())
	}
	if !strings.Contains(strings.Join(tbl.Notes, "\n"), "nothing was measured: none of 2 requests completed; top reason: 1× http_status") {
		t.Errorf("notes %q do not say nothing was measured", tbl.Notes)
	}
	if _, ok := ErrorSetTable(summary.Compute([]results.Record{{ID: "a"}}, summary.Options{})); ok {
		t.Error("an error table for a run without failures")
	}
}

func TestRunSectionsBannerOnlyWhenNothingMeasured(t *testing.T) {
	failed := []results.Record{{ID: "req-000000", ErrorClass: results.ErrConnect, Error: "connection refused"}}
	secs := RunSections(RunReport{}, failed)
	if !secs[0].alert || !strings.Contains(secs[0].Notes[0], "connection refused") {
		t.Errorf("first section %q (alert %v): want the failure banner", secs[0].Title, secs[0].alert)
	}
	ok := append(failed, results.Record{ID: "req-000001", Seq: 1, E2ES: 1})
	for _, sec := range RunSections(RunReport{}, ok) {
		if sec.alert {
			t.Errorf("banner %q on a run that measured something", sec.Title)
		}
	}
}

func TestErrorSetText(t *testing.T) {
	var recs []results.Record
	for i := range 8 {
		recs = append(recs, results.Record{ID: fmt.Sprintf("req-%06d", i), Seq: i, ErrorClass: results.ErrStreamError, Error: fmt.Sprintf("event 1: server error: %d", i%7)})
	}
	recs = append(recs, results.Record{ID: "req-000100", Seq: 100, E2ES: 1})
	s := summary.Compute(recs, summary.Options{})
	s.SetDropped(3)
	got := ErrorSetText(s, "")
	want := "8 of 9 measured requests failed (error rate 0.8889):\n" +
		"  2× stream_error: event 1: server error: 0 (first req-000000)\n" +
		"  1× stream_error: event 1: server error: 1 (first req-000001)\n" +
		"  1× stream_error: event 1: server error: 2 (first req-000002)\n" +
		"  1× stream_error: event 1: server error: 3 (first req-000003)\n" +
		"  1× stream_error: event 1: server error: 4 (first req-000004)\n" +
		"  ... 2 more kinds of failure in the report's error table\n" +
		"3 open-loop arrivals dropped by --max-inflight, never sent (drop rate 0.2500)\n"
	if got != want {
		t.Errorf("ErrorSetText:\n%s\nwant:\n%s", got, want)
	}
	if got := ErrorSetText(s, "omnibench: "); !strings.HasPrefix(got, "omnibench: 8 of 9") || strings.Count(got, "\nomnibench: ") != 7 {
		t.Errorf("with a prefix:\n%s", got)
	}
	if got := ErrorSetText(summary.Compute(recs[8:], summary.Options{}), ""); got != "" {
		t.Errorf("no failures, no drops: %q", got)
	}
}

func TestNothingMeasuredSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		req  summary.Requests
		want string
	}{
		{summary.Requests{}, "nothing was measured: no request was sent"},
		{summary.Requests{Dropped: 4}, "all 4 arrivals were dropped by --max-inflight"},
		{summary.Requests{Ramp: 3}, "all 3 requests were in the ramp"},
		{summary.Requests{Total: 2, Failed: 2}, "none of 2 requests completed"},
	} {
		if got := NothingMeasured(&summary.Summary{Requests: tc.req}); !strings.Contains(got, tc.want) {
			t.Errorf("%+v: %q, want %q", tc.req, got, tc.want)
		}
	}
}
