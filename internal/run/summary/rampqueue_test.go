package summary

import (
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestRampExcludedAndQueueReported: ramp-phase requests are counted apart
// and left out of every figure unless IncludeRamp; the client queue time is
// a distribution in milliseconds.
func TestRampExcludedAndQueueReported(t *testing.T) {
	recs := []results.Record{
		{Seq: 0, Phase: "ramp", E2ES: 10, QueueS: 0.5},
		{Seq: 1, E2ES: 1, QueueS: 0},
		{Seq: 2, E2ES: 2, QueueS: 0.004},
		{Seq: 3, E2ES: 3, QueueS: 0.002},
	}
	s := Compute(recs, Options{Goodput: []Goodput{{Metric: "e2e", Limit: 5}}})
	if s.Requests.Total != 3 || s.Requests.Ramp != 1 {
		t.Errorf("total %d ramp %d, want 3 and 1", s.Requests.Total, s.Requests.Ramp)
	}
	e2e, _ := s.Metric(MetricE2E)
	approx(t, "e2e max without the ramp", e2e.Max, 3000)
	q, ok := s.Metric(MetricQueue)
	if !ok {
		t.Fatal("no client_queue_ms metric")
	}
	approx(t, "queue max", q.Max, 4)
	approx(t, "queue mean", q.Mean, 2)
	if s.Goodput == nil || s.Goodput.Of != 3 || s.Goodput.Good != 3 {
		t.Errorf("goodput %+v, want 3 of 3 (ramp left out)", s.Goodput)
	}

	all := Compute(recs, Options{IncludeRamp: true})
	if all.Requests.Total != 4 || all.Requests.Ramp != 0 {
		t.Errorf("include ramp: total %d ramp %d", all.Requests.Total, all.Requests.Ramp)
	}
	q, _ = all.Metric(MetricQueue)
	approx(t, "queue max with the ramp", q.Max, 500)
}
