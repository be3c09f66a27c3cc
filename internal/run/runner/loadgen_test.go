package runner

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
)

// TestRunForcedConnectionLimitIsReported: with --max-conns 1 under two
// workers the cap is said (a note in the outcome and the report), every
// request carries its queue time, the summary reports client_queue_ms, and
// the second worker's wait for the one connection shows in it (a worker
// waits for a whole request of the other).
func TestRunForcedConnectionLimitIsReported(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 4, 2)
	cfg.Client.MaxConns = 1
	out := mustRun(t, cfg)

	if len(out.ClientNotes) != 1 || !strings.Contains(out.ClientNotes[0], "--max-conns 1 < the load's peak of 2 in flight") {
		t.Fatalf("client notes %q", out.ClientNotes)
	}
	if !slicesContain(out.Report().Notes, out.ClientNotes[0]) {
		t.Error("the report does not carry the connection-cap note")
	}
	q, ok := out.Summary.Metric(summary.MetricQueue)
	if !ok || q.N != 4 {
		t.Fatalf("client_queue_ms: %+v (found %v), want 4 values", q, ok)
	}
	maxQueue, minService := 0.0, 1e9
	for _, r := range out.Records {
		if !r.OK() {
			t.Fatalf("request %d failed: %s", r.Seq, r.Error)
		}
		maxQueue = max(maxQueue, r.QueueS)
		minService = min(minService, r.E2ES-r.QueueS)
	}
	if !(maxQueue > minService/2) {
		t.Errorf("longest queue %v s, shortest service %v s: one worker should have waited for a whole request", maxQueue, minService)
	}
	if q.Max != maxQueue*1000 {
		t.Errorf("summary max %v ms, records %v s", q.Max, maxQueue)
	}
}

// TestRunConnectionsFollowLoad: without --max-conns nothing is capped or
// noted.
func TestRunConnectionsFollowLoad(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	out := mustRun(t, baseConfig(sim.URL, wl, 4, 4))
	if len(out.ClientNotes) != 0 {
		t.Errorf("notes %q without a cap", out.ClientNotes)
	}
}

// TestRunHealthAndSaturation: every run carries the load generator's
// health in the outcome, the JSON document (client.*) and the report; with
// a delay threshold below any real stamp delay it is judged saturated, and
// the report starts with the warning.
func TestRunHealthAndSaturation(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, func(c *simulator.Config) { c.Stamp = true })
	cfg := baseConfig(sim.URL, wl, 3, 3)
	out := mustRun(t, cfg)
	h := out.Health
	if h == nil || h.Cores < 1 || h.DurationS <= 0 || h.CPUShare < 0 || h.StampDelayP99MS == nil {
		t.Fatalf("health %+v", h)
	}
	// Whether 3 streams are delayed depends on the machine's other load
	// (under -race on a busy machine they can): the warning must follow the
	// verdict.
	tables := report.RunTables(out.Report())
	if !hasTable(tables, "Load generator") || hasTable(tables, "WARNING") != (h.Cause != selfmon.CauseNone) {
		t.Errorf("report tables %v with cause %s: want a Load generator table, and a warning iff there is a cause", titles(tables), h.Cause)
	}
	if h.Server != selfmon.ServerLoopback {
		t.Errorf("server %q, want loopback for %s", h.Server, sim.URL)
	}

	// A 1 ns delay threshold is a delay, not the client's bottleneck: a
	// warning with a cause other than the client's CPU.
	cfg.SelfMon = selfmon.Thresholds{CPUShare: 1, Delay: time.Nanosecond}
	out = mustRun(t, cfg)
	if out.Health.Saturated || out.Health.Cause == selfmon.CauseNone || out.Health.Cause == selfmon.CauseClientCPU || out.Health.Warning() == "" {
		t.Errorf("a 1 ns delay threshold: cause %s saturated %v warning %q", out.Health.Cause, out.Health.Saturated, out.Health.Warning())
	}
	// Any CPU over a share of 1e-12 is the client's bottleneck.
	cfg.SelfMon = selfmon.Thresholds{CPUShare: 1e-12, Delay: time.Nanosecond}
	out = mustRun(t, cfg)
	if !out.Health.Saturated || out.Health.Cause != selfmon.CauseClientCPU {
		t.Fatalf("a CPU share of 1e-12 did not saturate: cause %s, CPU %v", out.Health.Cause, out.Health.CPUShare)
	}
	tables = report.RunTables(out.Report())
	if tables[0].Title != "WARNING" || !strings.Contains(tables[0].Rows[0][0], "the load generator was saturated") {
		t.Errorf("first table %q %v", tables[0].Title, tables[0].Rows)
	}
	data, err := json.Marshal(out.Document())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Client struct {
			Saturated bool   `json:"saturated"`
			Cause     string `json:"cause"`
			Server    string `json:"server"`
		} `json:"client"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || !doc.Client.Saturated || doc.Client.Cause != "client_cpu" || doc.Client.Server != "loopback" {
		t.Errorf("document client: %+v (%v)", doc.Client, err)
	}
}

// TestRunRampExcluded: a closed-loop ramp marks its requests, the summary
// leaves them out (counted apart) and --include-ramp keeps them.
func TestRunRampExcluded(t *testing.T) {
	wl := chatWorkload(t)
	sim := startSim(t, wl, nil)
	cfg := baseConfig(sim.URL, wl, 6, 3)
	cfg.Load.RampUp = 30 * time.Millisecond
	out := mustRun(t, cfg)
	ramp := 0
	for _, r := range out.Records {
		if r.Phase == load.PhaseRamp {
			ramp++
		}
	}
	if ramp == 0 {
		t.Fatal("no request marked ramp: the first one starts at offset 0, inside the ramp")
	}
	if out.Summary.Requests.Ramp != ramp || out.Load.RampStarted != ramp || out.Summary.Requests.Total != 6-ramp {
		t.Errorf("ramp %d: summary ramp %d total %d, load %d", ramp, out.Summary.Requests.Ramp, out.Summary.Requests.Total, out.Load.RampStarted)
	}
	all := summary.Compute(out.Records, summary.Options{IncludeRamp: true})
	if all.Requests.Total != 6 {
		t.Errorf("include ramp: %d requests", all.Requests.Total)
	}
}

func hasTable(ts []report.Table, title string) bool {
	for _, t := range ts {
		if t.Title == title {
			return true
		}
	}
	return false
}

func titles(ts []report.Table) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Title)
	}
	return out
}

func slicesContain(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
