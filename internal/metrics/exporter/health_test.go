package exporter

import (
	"math"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/load"
)

// TestHealthAndQueueSeries: the self-monitoring samples become the loadgen
// gauges and counters, the verdict the saturated gauge, and each measured
// request's queue time the client_queue_seconds histogram; a ramp-phase
// request is left out, as the report leaves it out.
func TestHealthAndQueueSeries(t *testing.T) {
	e, err := New(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	p := omnimetrics.PrefixClient
	if v, _ := sampleValue(gatherMap(t, e), p+"loadgen_cpu_usage_ratio", nil); !math.IsNaN(v) {
		t.Errorf("CPU gauge is %v before the first sample, want NaN", v)
	}
	e.OnHealth(selfmon.Sample{CPUShare: 0.5, SchedLatencyP99: 2 * time.Millisecond, GCPauses: 3, GCPauseTime: 250 * time.Microsecond, MemoryBytes: 4096})
	pressure := 0.9
	e.OnHealth(selfmon.Sample{CPUShare: 0.75, SchedLatencyP99: 4 * time.Millisecond, GCPauses: 1, GCPauseTime: 250 * time.Microsecond, MemoryBytes: 8192,
		Host: &selfmon.Host{CPUs: 2, OtherCores: 1.5, StealShare: 0.125, CPUPressure: &pressure}})
	e.SetHealth(selfmon.Report{Cores: 2, Cause: selfmon.CauseHostBusy})
	e.SetHealth(selfmon.Report{Cores: 2, Cause: selfmon.CauseClientCPU, Saturated: true})
	for _, a := range []load.Arrival{{Seq: 1}, {Seq: 2}, {Seq: 3, Phase: load.PhaseRamp}} {
		e.OnStart(a)
	}
	e.OnRecord(&results.Record{Seq: 1, QueueS: 0.25, E2ES: 1})
	e.OnRecord(&results.Record{Seq: 2, QueueS: 0.5, E2ES: 1})
	e.OnRecord(&results.Record{Seq: 3, Phase: load.PhaseRamp, QueueS: 8, E2ES: 1})

	fams := gatherMap(t, e)
	for _, c := range []struct {
		name string
		want float64
	}{
		{p + "loadgen_cpu_usage_ratio", 0.75},
		{p + "loadgen_sched_latency_p99_seconds", 0.004},
		{p + "loadgen_gc_pauses_total", 4},
		{p + "loadgen_gc_pause_seconds_total", 0.0005},
		{p + "loadgen_memory_bytes", 8192},
		{p + "loadgen_usable_cores", 2},
		{p + "loadgen_saturated", 1},
		{p + "loadgen_host_other_cpu_cores", 1.5},
		{p + "loadgen_host_cpu_pressure_ratio", 0.9},
		{p + "loadgen_host_steal_ratio", 0.125},
		{p + "client_queue_seconds_count", 2},
		{p + "client_queue_seconds_sum", 0.75},
		{p + "arrivals_started_total", 3},
	} {
		got, ok := sampleValue(fams, c.name, nil)
		if !ok || got != c.want {
			t.Errorf("%s = %v (%v), want %v", c.name, got, ok, c.want)
		}
	}
	// The cause is a state set: 1 for the last verdict's, 0 for the others.
	for _, c := range selfmon.Causes() {
		want := 0.0
		if c == selfmon.CauseClientCPU {
			want = 1
		}
		if v, ok := sampleValue(fams, p+"loadgen_delay_cause", map[string]string{LabelReason: string(c)}); !ok || v != want {
			t.Errorf("loadgen_delay_cause{reason=%q} = %v (%v), want %v", c, v, ok, want)
		}
	}
}
