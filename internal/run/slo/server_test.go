package slo

import (
	"math"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/summary"
)

// Server figures parse with and without labels, in canonical form, and
// round-trip through String.
func TestParseServerFigures(t *testing.T) {
	for _, c := range []struct {
		expr, figure, unit string
		value              float64
	}{
		{`server_stage_queue_p95{stage="1"}<50ms`, `server_stage_queue_p95{stage="1"}`, "ms", 50},
		{`server_stage_e2e_mean{ replica = "0" , stage="2" } <= 0.2s`, `server_stage_e2e_mean{replica="0",stage="2"}`, "ms", 200},
		{`transfer_in_flight_p95<10ms`, `transfer_in_flight_p95`, "ms", 10},
		{`transfer_tx_mean{from_stage="1",to_replica="1"}<500us`, `transfer_tx_mean{from_stage="1",to_replica="1"}`, "ms", 0.5},
		{`replica_imbalance<1.5`, `replica_imbalance`, "", 1.5},
	} {
		s, err := Parse(c.expr)
		if err != nil {
			t.Errorf("%s: %v", c.expr, err)
			continue
		}
		if s.Figure != c.figure || s.Unit != c.unit || s.Value != c.value {
			t.Errorf("%s: figure %q unit %q value %v, want %q %q %v", c.expr, s.Figure, s.Unit, s.Value, c.figure, c.unit, c.value)
		}
		again, err := Parse(s.String())
		if err != nil || again != s.withExpr(s.String()) {
			t.Errorf("%s: String %q parses to %+v (%v)", c.expr, s.String(), again, err)
		}
	}
}

func (s SLO) withExpr(e string) SLO { s.Expr = e; return s }

func TestParseServerFigureErrors(t *testing.T) {
	for _, c := range []struct{ expr, msg string }{
		{`audio_ttfp_p95{stage="1"}<5ms`, "labels in braces select the rows of a server figure"},
		{`server_stage_queue_p95{edge="1"}<5ms`, `not "edge"`},
		{`server_stage_queue_p95{stage=1}<5ms`, "expected a quoted value"},
		{`server_stage_queue_p95{stage="1"<5ms`, `expected "," or "}"`},
		{`server_stage_queue_p95{stage="1<5ms`, "not closed"},
		{`server_stage_queue_p90<5ms`, "unknown statistic"},
		{`server_stage_queue_p95<5`, "is a time"},
		{`replica_imbalance<5ms`, "plain number"},
	} {
		_, err := Parse(c.expr)
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one that says %q", c.expr, err, c.msg)
		}
	}
}

// serverTable is a ServerFigures of fixed values in seconds: the breakdown
// is tested against it in its own package.
type serverTable map[string]float64

func (t serverTable) ServerFigure(name string, labels map[string]string) (float64, string) {
	v, ok := t[name+newLabelSet(labels).String()]
	if !ok {
		return math.NaN(), "no row"
	}
	return v, ""
}

// An SLO on a server figure passes or fails on the server's value; without
// a breakdown it has no data.
func TestEvaluateServerFigures(t *testing.T) {
	s := &summary.Summary{}
	s.Requests.Total, s.Requests.Completed = 2, 2
	server := serverTable{`server_stage_queue_p95{stage="1"}`: 0.060, "replica_imbalance": 1.2}
	slos, err := ParseAll([]string{`server_stage_queue_p95{stage="1"}<50ms`, `replica_imbalance<1.5`,
		`server_stage_queue_p95{stage="2"}<50ms`})
	if err != nil {
		t.Fatal(err)
	}
	rs := EvaluateServer(slos, s, nil, server)
	if rs[0].Pass || rs[0].Observed != 60 || !strings.Contains(rs[0].Message, "60") {
		t.Errorf("queue p95 of 60 ms against < 50ms: %+v", rs[0])
	}
	if !rs[1].Pass || rs[1].Observed != 1.2 {
		t.Errorf("imbalance 1.2 against < 1.5: %+v", rs[1])
	}
	if rs[2].Pass || !rs[2].NoData || !strings.Contains(rs[2].Message, "no row") {
		t.Errorf("a stage without a row: %+v", rs[2])
	}
	for _, r := range EvaluateSet(slos, s, nil) {
		if r.Pass || !r.NoData || !strings.Contains(r.Message, "no breakdown") {
			t.Errorf("without a breakdown: %+v", r)
		}
	}
}
