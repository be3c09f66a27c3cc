package selfmon

import (
	"fmt"
	"strings"
	"time"
)

// Thresholds decide when the load generator counts as saturated.
type Thresholds struct {
	// CPUShare is the mean share of the usable cores above which the
	// client is the bottleneck; 0 means DefaultCPUShare.
	CPUShare float64
	// Delay is the scheduling-latency and stamp-delay p99 above which the
	// client's own delay is in the latencies; 0 means DefaultDelay.
	Delay time.Duration
}

// Defaults of Thresholds: at 80 % of its cores a Go process's goroutines
// start queueing for a CPU, and 5 ms is well above an idle scheduler's
// latency (tens of µs) and well below the latencies being measured.
const (
	DefaultCPUShare = 0.8
	DefaultDelay    = 5 * time.Millisecond
)

func (t Thresholds) cpuShare() float64 {
	if t.CPUShare <= 0 {
		return DefaultCPUShare
	}
	return t.CPUShare
}

func (t Thresholds) delayMS() float64 {
	if t.Delay <= 0 {
		return float64(DefaultDelay) / float64(time.Millisecond)
	}
	return float64(t.Delay) / float64(time.Millisecond)
}

// Judge sets r's saturation verdict: saturated when the mean CPU exceeds
// th.CPUShare of the usable cores, or the scheduling latency p99 or the
// send-stamp delay p99 (stampP99MS, nil without a stamping server) exceeds
// th.Delay. ClientDelayMS is the larger of the two p99 delays.
func (r *Report) Judge(th Thresholds, stampP99MS *float64) {
	r.StampDelayP99MS = stampP99MS
	r.ThresholdCPUShare, r.ThresholdDelayMS = th.cpuShare(), th.delayMS()
	r.Reasons = nil
	r.ClientDelayMS = r.SchedLatencyP99MS
	if stampP99MS != nil {
		r.ClientDelayMS = max(r.ClientDelayMS, *stampP99MS)
	}
	if lim := th.cpuShare(); r.CPUShare > lim {
		r.Reasons = append(r.Reasons, fmt.Sprintf("CPU %.0f %% of %d cores > %.0f %%", 100*r.CPUShare, r.Cores, 100*lim))
	}
	lim := th.delayMS()
	if r.SchedLatencyP99MS > lim {
		r.Reasons = append(r.Reasons, fmt.Sprintf("goroutine scheduling latency p99 %s ms > %g ms", ms(r.SchedLatencyP99MS), lim))
	}
	if stampP99MS != nil && *stampP99MS > lim {
		r.Reasons = append(r.Reasons, fmt.Sprintf("send-stamp delay p99 %s ms > %g ms", ms(*stampP99MS), lim))
	}
	r.Saturated = len(r.Reasons) > 0
}

// Warning is the report's top-line warning for a saturated client, "" when
// it was not.
func (r *Report) Warning() string {
	if !r.Saturated {
		return ""
	}
	return fmt.Sprintf("the load generator was saturated (%s): latencies include up to %s ms of client delay; use fewer streams per process or shards",
		strings.Join(r.Reasons, "; "), ms(r.ClientDelayMS))
}

// ms formats milliseconds with one decimal, or three significant digits
// below 1 ms (so a sub-millisecond figure does not read 0.0).
func ms(v float64) string {
	if v < 1 {
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.1f", v)
}
