package exporter

import (
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// Label names the exporter adds. The constant labels identify the run; class
// is the one variable label of the load-generator families.
const (
	LabelEndpoint = "endpoint" // constant: the request path, e.g. /v1/chat/completions
	LabelScenario = "scenario" // constant: the scenario name
	// LabelShard is constant too, on a shard's series only (run --shard
	// I/N): the index, at most load.MaxShards values. Dashboards sum it away.
	LabelShard = "shard"
	LabelClass = "class" // errors_total: a results error class
	// LabelReason is loadgen_delay_cause's: a selfmon.Cause (none,
	// client_cpu, steal, host_busy, shared_with_server, scheduling).
	LabelReason = "reason"
)

// classOther is the class of an error whose class is not one of
// results.ErrorClasses, so a misbehaving client cannot grow the label set.
const classOther = "other"

// loadFamily indexes the load-generator table.
type loadFamily int

const (
	famScheduled loadFamily = iota
	famStarted
	famDropped
	famWarmup
	famLag
	famErrors
	famStalls
	famStalled
	famStallTime
	famQueue
	famCPU
	famCores
	famSched
	famGCPauses
	famGCPauseTime
	famMemory
	famSaturated
	famDelayCause
	famHostOther
	famHostPressure
	famHostSteal
	famTTFAAudible
	famLeadingSilence
	numLoadFamilies
)

// loadTable is the single definition of the load generator's health
// families (names without the prefix). They follow Prometheus naming (base
// unit "seconds"), unlike the design's "_s" families, which keep their
// names for compatibility with the server.
func loadTable() [numLoadFamilies]omnimetrics.FamilySpec {
	model := []string{omnimetrics.LabelModelName}
	return [numLoadFamilies]omnimetrics.FamilySpec{
		famScheduled: {Name: "arrivals_scheduled_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Measured arrivals that came due: started plus dropped"},
		famStarted: {Name: "arrivals_started_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Measured arrivals whose request was sent"},
		famDropped: {Name: "arrivals_dropped_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Open-loop arrivals dropped because --max-inflight requests were running"},
		famWarmup: {Name: "warmup_requests_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Warm-up requests sent; they are left out of every other family but num_requests_running"},
		famLag: {Name: "schedule_lag_seconds", Type: omnimetrics.TypeHistogram, Labels: model,
			Buckets: omnimetrics.SecondsFastBuckets(),
			Help:    "How late each measured request started relative to its schedule (0 in a closed loop)"},
		famErrors: {Name: "errors_total", Type: omnimetrics.TypeCounter,
			Labels: []string{omnimetrics.LabelModelName, LabelClass},
			Help:   "Failed measured requests by error class (connect, http_status, stream_error, idle_timeout, timeout, malformed, truncated, no_audio, cancelled, client_limit)"},
		famStalls: {Name: "stall_resume_stalls_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Playback stalls of the stall-and-resume player (pauses when the buffer runs dry, resumes on the next chunk)"},
		famStalled: {Name: "stall_resume_stalled_requests_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Responses during which the stall-and-resume player stalled at least once"},
		famStallTime: {Name: "stall_resume_stall_seconds", Type: omnimetrics.TypeHistogram, Labels: model,
			Buckets: omnimetrics.SecondsFastBuckets(),
			Help:    "Total stall time of the stall-and-resume player per response"},
		famQueue: {Name: "client_queue_seconds", Type: omnimetrics.TypeHistogram, Labels: model,
			Buckets: omnimetrics.SecondsFastBuckets(),
			Help:    "How long each measured request waited for a connection of the client (its connection bound reached); inside every latency"},
		famCPU: {Name: "loadgen_cpu_usage_ratio", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "The load generator process's CPU over the last sampling interval, as a share of the cores it may use (1 = all busy)"},
		famCores: {Name: "loadgen_usable_cores", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "Cores the load generator may use: GOMAXPROCS or the CPU affinity, whichever is fewer"},
		famSched: {Name: "loadgen_sched_latency_p99_seconds", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "99th percentile of the load generator's goroutine scheduling latency over the last sampling interval (runtime/metrics /sched/latencies:seconds)"},
		famGCPauses: {Name: "loadgen_gc_pauses_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Stop-the-world GC pauses of the load generator"},
		famGCPauseTime: {Name: "loadgen_gc_pause_seconds_total", Type: omnimetrics.TypeCounter, Labels: model,
			Help: "Time the load generator spent in stop-the-world GC pauses"},
		famMemory: {Name: "loadgen_memory_bytes", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "Memory the load generator's Go runtime holds (mapped and not released)"},
		famSaturated: {Name: "loadgen_saturated", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "1 when the run's load generator was itself the bottleneck (its CPU over its threshold): its latencies include client delay and verdicts on them are refused; set at the end of the run"},
		famDelayCause: {Name: "loadgen_delay_cause", Type: omnimetrics.TypeGauge,
			Labels: []string{omnimetrics.LabelModelName, LabelReason},
			Help:   "1 for the cause of the run's load-generator delay (reason: none, client_cpu, steal, host_busy, shared_with_server, scheduling); set at the end of the run"},
		famHostOther: {Name: "loadgen_host_other_cpu_cores", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "Cores the machine's other processes kept busy over the last sampling interval (/proc/stat less the load generator's own CPU)"},
		famHostPressure: {Name: "loadgen_host_cpu_pressure_ratio", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "Share of the last sampling interval during which some task on the machine waited for a CPU (/proc/pressure/cpu some)"},
		famHostSteal: {Name: "loadgen_host_steal_ratio", Type: omnimetrics.TypeGauge, Labels: model,
			Help: "Share of the machine's CPU time the hypervisor took over the last sampling interval (/proc/stat steal)"},
		famTTFAAudible: {Name: "ttfa_audible_seconds", Type: omnimetrics.TypeHistogram, Labels: model,
			Buckets: omnimetrics.SecondsBuckets(),
			Help:    "Time to first audible audio: send to the chunk holding the first sample above the audible threshold (responses that became audible)"},
		famLeadingSilence: {Name: "leading_silence_seconds", Type: omnimetrics.TypeHistogram, Labels: model,
			Buckets: omnimetrics.SecondsFastBuckets(),
			Help:    "Audio before the first audible sample per response with audio (all of it when never audible)"},
	}
}

// Families returns the load-generator families the exporter adds to the
// core's (names without the prefix). The result is a fresh copy.
func Families() []omnimetrics.FamilySpec {
	t := loadTable()
	return t[:]
}
