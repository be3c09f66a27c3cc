package report

import (
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// TestNothingMeasuredNoAudio: a run whose responses carried no audio says
// so and what came instead; another, more frequent failure is named too.
func TestNothingMeasuredNoAudio(t *testing.T) {
	noAudio := func(id, msg string) results.Record {
		return results.Record{ID: id, Kind: results.KindChat, Status: 200, ErrorClass: results.ErrNoAudio, Error: msg}
	}
	for _, tc := range []struct {
		recs []results.Record
		want string
	}{
		{[]results.Record{noAudio("a", "text only"), noAudio("b", "text only")},
			"nothing was measured: no response carried audio: text only (2 of 2 requests)"},
		{[]results.Record{noAudio("a", "text only"), noAudio("b", "1 audio event without samples")},
			"nothing was measured: no response carried audio: text only (1 of 2 requests); 1 audio event without samples (1 of 2 requests)"},
		{[]results.Record{
			{ID: "a", Status: 503, ErrorClass: results.ErrHTTPStatus, Error: "HTTP 503: busy"},
			{ID: "b", Seq: 1, Status: 503, ErrorClass: results.ErrHTTPStatus, Error: "HTTP 503: busy"},
			noAudio("c", "text only"),
		}, "nothing was measured: no response carried audio: text only (1 of 3 requests); top reason: 2× http_status: HTTP 503: busy (first a)"},
	} {
		if got := NothingMeasured(summary.Compute(tc.recs, summary.Options{})); got != tc.want {
			t.Errorf("got  %q\nwant %q", got, tc.want)
		}
	}
}
