package results

import (
	"strings"
	"testing"
)

func TestLatencyAddsLagOnlyFromIntended(t *testing.T) {
	r := Record{LagS: 1, TTFPS: 0.25}
	if got := r.Latency(r.TTFPS); got != 0.25 {
		t.Errorf("no origin: latency %v, want 0.25 (from the send)", got)
	}
	r.LatencyOrigin = OriginSend
	if got := r.Latency(r.TTFPS); got != 0.25 {
		t.Errorf("send origin: latency %v, want 0.25", got)
	}
	r.LatencyOrigin = OriginIntended
	if got := r.Latency(r.TTFPS); got != 1.25 {
		t.Errorf("intended origin: latency %v, want 1.25", got)
	}
}

// A file written before latency_origin existed gets its run's origin: the
// intended start for an open loop, the send for a closed loop; a record that
// says its origin keeps it.
func TestReadGivesLegacyRecordsTheRunsOrigin(t *testing.T) {
	for _, tc := range []struct{ mode, want string }{{"open", OriginIntended}, {"closed", OriginSend}} {
		in := `{"type":"header","schema_version":1,"mode":"` + tc.mode + `"}
{"type":"request","id":"a","lag_s":1,"e2e_s":2}
{"type":"request","id":"b","lag_s":1,"e2e_s":2,"latency_origin":"send"}
`
		_, recs, err := Read(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if recs[0].LatencyOrigin != tc.want || recs[1].LatencyOrigin != OriginSend {
			t.Errorf("mode %s: origins %q, %q; want %q, send", tc.mode, recs[0].LatencyOrigin, recs[1].LatencyOrigin, tc.want)
		}
	}
}
