package report

import (
	"fmt"
	"strconv"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/selfmon"
)

// warningTitle is the title of the saturation warning table.
const warningTitle = "WARNING"

// saturationWarning is the warning table a run report starts with when
// something delayed the load generator (its own CPU, the host, the server on
// its cores); nil otherwise. A re-rendered run has only the verdict its
// results file recorded (Header.Client), which says the same in fewer
// figures.
func saturationWarning(r RunReport) *Table {
	var text string
	switch {
	case r.Health != nil:
		text = r.Health.Warning()
	case r.Header.Client != nil && (r.Header.Client.Saturated || r.Header.Client.Warning != ""):
		text = r.Header.Client.Text()
	}
	if text == "" {
		return nil
	}
	return &Table{Title: warningTitle, Header: []string{"warning"}, Rows: [][]string{{text}}}
}

// recordedHealthTable is the load generator section of a re-rendered run:
// the verdict its results file recorded; nil when the file has none (a run
// killed before its end, or an older file).
func recordedHealthTable(c *results.ClientHealth) *Table {
	if c == nil {
		return nil
	}
	t := Table{Title: "Load generator", Header: []string{"figure", "value"}}
	verdict := "no"
	if c.Saturated {
		verdict = "yes: " + fmt.Sprint(len(c.Reasons)) + " threshold(s) passed"
	}
	t.Rows = [][]string{
		{"saturated", verdict},
		{"largest client delay (ms)", FormatFixed(c.ClientDelayMS, 3)},
	}
	t.Notes = append(t.Notes, c.Reasons...)
	t.Notes = append(t.Notes, "as recorded in the results file; the run's own report has the CPU, scheduling and memory figures.")
	return &t
}

// healthTable shows the load generator's own health; nil when it was not
// watched.
func healthTable(h *selfmon.Report) *Table {
	if h == nil {
		return nil
	}
	t := Table{Title: "Load generator", Header: []string{"figure", "value"}}
	verdict := "no"
	if h.Saturated {
		verdict = "yes: " + fmt.Sprint(len(h.Reasons)) + " threshold(s) passed"
	}
	t.Rows = [][]string{
		{"saturated", verdict},
		{"delay cause", string(h.Cause)},
		{"CPU (cores busy / usable)", fmt.Sprintf("%s / %d (%s %%, peak %s %%)", FormatFixed(h.CPUCores, 2), h.Cores, FormatFixed(100*h.CPUShare, 0), FormatFixed(100*h.PeakCPUShare, 0))},
		{"scheduling latency p50 / p99 / max (ms)", FormatFixed(h.SchedLatencyP50MS, 3) + " / " + FormatFixed(h.SchedLatencyP99MS, 3) + " / " + FormatFixed(h.SchedLatencyMaxMS, 3)},
		{"GC pauses (count, total ms, p99 ms)", strconv.FormatUint(h.GCPauses, 10) + ", " + FormatFixed(h.GCPauseTotalMS, 2) + ", " + FormatFixed(h.GCPauseP99MS, 3)},
	}
	if h.StampDelayP99MS != nil {
		t.Rows = append(t.Rows, []string{"send-stamp delay p99 (ms)", FormatFixed(*h.StampDelayP99MS, 3)})
	}
	if hh := h.Host; hh != nil {
		t.Rows = append(t.Rows, []string{"host: other processes' cores / CPUs, steal", FormatFixed(hh.OtherCores, 2) + " / " + strconv.Itoa(hh.CPUs) + ", " + FormatFixed(100*hh.StealShare, 0) + " %"})
		if hh.CPUPressure != nil {
			t.Rows = append(t.Rows, []string{"host CPU pressure (some)", FormatFixed(100**hh.CPUPressure, 0) + " %"})
		}
	}
	t.Rows = append(t.Rows,
		[]string{"peak open streams / goroutines (sampled)", strconv.Itoa(h.PeakStreams) + " / " + strconv.Itoa(h.PeakGoroutines)},
		[]string{"memory per open stream (KB)", FormatFixed(h.MemoryPerStreamBytes/1024, 1)},
		[]string{"Go runtime memory base / peak (MB)", FormatFixed(float64(h.BaseMemoryBytes)/(1<<20), 1) + " / " + FormatFixed(float64(h.PeakMemoryBytes)/(1<<20), 1)},
	)
	t.Notes = append(t.Notes,
		"CPU: the whole process (with the embedded simulator in it); usable = min(GOMAXPROCS, affinity).",
		fmt.Sprintf("delayed: CPU > %s %% of the usable cores, or scheduling or send-stamp delay p99 > %s ms; saturated when the cause is the client's own CPU.",
			FormatFixed(100*h.ThresholdCPUShare, 0), FormatFixed(h.ThresholdDelayMS, 1)),
		"memory per stream: peak heap and stacks over the start, per stream; upper bound (garbage counts).")
	return &t
}
