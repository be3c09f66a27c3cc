package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// TestRunWithoutStamps: against a server that sends no send stamps (real
// servers, serve without --stamp) there is no send-stamp delay: none in the
// health or the summary, and the saturation verdict does not judge on it.
func TestRunWithoutStamps(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil) // stamps off, as a default serve
	cfg := baseConfig(sim.URL, wl, 3, 3)
	cfg.SelfMon = selfmon.Thresholds{Delay: time.Nanosecond}
	out := mustRun(t, cfg)
	if out.Summary.Requests.Completed != 3 {
		t.Fatalf("requests %+v, want 3 completed", out.Summary.Requests)
	}
	h := out.Health
	if h == nil || h.StampDelayP99MS != nil {
		t.Fatalf("health %+v: want no send-stamp delay", h)
	}
	for _, r := range h.Reasons {
		if strings.Contains(r, "stamp") {
			t.Errorf("saturation reason %q judges a stamp delay that was never measured", r)
		}
	}
	for _, m := range out.Summary.Metrics {
		if m.Name == summary.MetricStampDelay {
			t.Errorf("summary has %s without stamps: %+v", m.Name, m.Summary)
		}
	}
}
