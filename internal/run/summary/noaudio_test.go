package summary

import (
	"maps"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestNoAudioCounts: a no_audio request is a failure in the summary (error
// rate, error set, nothing measured when it is all there is), and a
// completed request in the server's terms (Totals), since the server
// finished it normally.
func TestNoAudioCounts(t *testing.T) {
	recs := []results.Record{
		{ID: "a", Seq: 0, Kind: results.KindChat, Status: 200, AudioBytes: 4800, AudioFrames: 2400, AudioDurationS: 0.1, E2ES: 1},
		{ID: "b", Seq: 1, Kind: results.KindChat, Status: 200, ErrorClass: results.ErrNoAudio, Error: "text only", TextChars: 12, E2ES: 1},
		{ID: "c", Seq: 2, Kind: results.KindChat, Status: 200, ErrorClass: results.ErrStreamError, Error: "boom", E2ES: 1},
	}
	s := Compute(recs, Options{})
	r := s.Requests
	if r.Completed != 1 || r.Failed != 2 || r.ByError[results.ErrNoAudio] != 1 || r.WithAudio != 1 {
		t.Errorf("requests %+v, want 1 completed, 2 failed (no_audio, stream_error)", r)
	}
	found := false
	for _, g := range s.Errors {
		found = found || (g.Class == results.ErrNoAudio && g.Message == "text only" && g.Count == 1 && g.FirstID == "b")
	}
	if !found {
		t.Errorf("error set %+v lacks the no_audio group", s.Errors)
	}

	tot := SetOf(recs).Totals
	if want := map[string]int{"stop": 2, "abort": 1}; tot.Requests != 3 || tot.Failed != 2 || tot.CompletedTotal != 2 || !maps.Equal(tot.Completed, want) {
		t.Errorf("totals %+v, want 3 requests, 2 failed, 2 completed (%v)", tot, want)
	}

	if only := Compute(recs[1:2], Options{}); !only.NothingMeasured() {
		t.Errorf("a run of no_audio requests only measured something: %+v", only.Requests)
	}
}
