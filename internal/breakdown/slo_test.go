package breakdown

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/slo"
)

var _ slo.ServerFigures = Breakdown{}

// The figures SLOs read: the worst row the labels select, in seconds.
func TestServerFigure(t *testing.T) {
	b := Compute(newExpo().series(t, t0), consistentRun().series(t, t0.Add(10*time.Second)), ClientFigures{})
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"server_stage_e2e_mean", map[string]string{"stage": "1"}, 0.2},
		{"server_stage_e2e_mean", nil, 0.25},
		{"server_stage_e2e_mean", map[string]string{"stage": "2", "replica": "0"}, 0.25},
		{"transfer_in_flight_mean", nil, 0.006},
		{"transfer_in_flight_mean", map[string]string{"from_stage": "1"}, 0.003},
		{"replica_imbalance", nil, 1},
	} {
		got, why := b.ServerFigure(c.name, c.labels)
		if why != "" || math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s%v = %v (%s), want %v", c.name, c.labels, got, why, c.want)
		}
	}
	if v, why := b.ServerFigure("server_stage_e2e_mean", map[string]string{"stage": "7"}); !math.IsNaN(v) || !strings.Contains(why, "no stage row") {
		t.Errorf("a stage the server does not have: %v %q", v, why)
	}
	off := Compute(Series{}, newExpo().declare(famPipelineE2E, "histogram").series(t, t0), ClientFigures{})
	if v, why := off.ServerFigure("replica_imbalance", nil); !math.IsNaN(v) || !strings.Contains(why, "cannot be computed") {
		t.Errorf("stats off: %v %q", v, why)
	}
}
