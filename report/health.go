package report

import (
	"fmt"
	"strconv"

	"github.com/omnibench/omnibench/selfmon"
)

// saturationWarning is the warning table a run report starts with when the
// load generator was saturated; nil otherwise.
func saturationWarning(h *selfmon.Report) *Table {
	if h == nil || !h.Saturated {
		return nil
	}
	return &Table{Title: "WARNING", Header: []string{"warning"}, Rows: [][]string{{h.Warning()}}}
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
		{"CPU (cores busy / usable)", fmt.Sprintf("%s / %d (%s %%, peak %s %%)", ff(h.CPUCores, 2), h.Cores, ff(100*h.CPUShare, 0), ff(100*h.PeakCPUShare, 0))},
		{"scheduling latency p50 / p99 / max (ms)", ff(h.SchedLatencyP50MS, 3) + " / " + ff(h.SchedLatencyP99MS, 3) + " / " + ff(h.SchedLatencyMaxMS, 3)},
		{"GC pauses (count, total ms, p99 ms)", strconv.FormatUint(h.GCPauses, 10) + ", " + ff(h.GCPauseTotalMS, 2) + ", " + ff(h.GCPauseP99MS, 3)},
	}
	if h.StampDelayP99MS != nil {
		t.Rows = append(t.Rows, []string{"send-stamp delay p99 (ms)", ff(*h.StampDelayP99MS, 3)})
	}
	t.Rows = append(t.Rows,
		[]string{"peak open streams / goroutines (sampled)", strconv.Itoa(h.PeakStreams) + " / " + strconv.Itoa(h.PeakGoroutines)},
		[]string{"memory per open stream (KB)", ff(h.MemoryPerStreamBytes/1024, 1)},
		[]string{"Go runtime memory base / peak (MB)", ff(float64(h.BaseMemoryBytes)/(1<<20), 1) + " / " + ff(float64(h.PeakMemoryBytes)/(1<<20), 1)},
	)
	t.Notes = append(t.Notes,
		"CPU: the whole process (with the embedded simulator in it); usable = min(GOMAXPROCS, affinity).",
		fmt.Sprintf("saturated: CPU > %s %% of the usable cores, or scheduling or send-stamp delay p99 > %s ms.",
			ff(100*h.ThresholdCPUShare, 0), ff(h.ThresholdDelayMS, 1)),
		"memory per stream: peak heap and stacks over the start, per stream; upper bound (garbage counts).")
	return &t
}
