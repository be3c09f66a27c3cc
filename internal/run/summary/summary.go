// Package summary folds the records of a run into the figures a report shows
// and a CI gate reads: latency and RTF distributions, continuity rates, audio
// throughput, goodput and error counts. The JSON form of Summary is the
// documented, versioned schema of `omnibench run --summary`; its Bench map
// uses the key names of the vLLM-Omni benchmark (mean_audio_ttfp_ms,
// p99_audio_rtf, audio_throughput, ...) with the same meaning.
package summary

import (
	"fmt"
	"math"
	"strconv"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/stats"
)

// DefaultPercentiles are reported when the caller does not choose.
func DefaultPercentiles() []float64 { return []float64{50, 90, 95, 99} }

// Options control what Compute reports.
type Options struct {
	Percentiles []float64 // default DefaultPercentiles()
	Thresholds  []float64 // continuity thresholds in seconds; default [0.1]
	Goodput     []Goodput // per-request SLOs for goodput; none = no goodput figure
	// IncludeRamp keeps the requests of a load ramp (Record.Phase "ramp")
	// in the figures; by default they are counted apart, like warm-up.
	IncludeRamp bool
}

// Metric names, in report order. Times are reported in milliseconds (TTFP,
// TTFT, e2e, lag, text gaps, stamp delay) or seconds (audio duration,
// underrun), matching the vLLM-Omni benchmark's units.
const (
	MetricTTFP = "ttfp_ms"
	// MetricTTFPFirstEvent is the vLLM-Omni benchmark's TTFP: for chat the
	// first audio event even when its content is empty, for speech the same
	// as MetricTTFP.
	MetricTTFPFirstEvent = "ttfp_first_event_ms"
	MetricTTFAAudible    = "ttfa_audible_ms"    // first audible sample's chunk (package onset)
	MetricLeadingSilence = "leading_silence_ms" // audio before the first audible sample
	MetricTTFT           = "ttft_ms"
	MetricE2E            = "e2e_ms"
	MetricTextGap        = "itl_ms"
	MetricRTFLastChunk   = "rtf_last_chunk"
	MetricRTFE2E         = "rtf_e2e"
	MetricRTFServer      = "rtf_server"
	MetricAudioRTF       = "audio_rtf" // the benchmark's definition: last chunk for chat, e2e for speech
	MetricDuration       = "audio_duration_s"
	MetricUnderrun       = "audio_underrun_s"
	MetricStalls         = "stall_resume_stalls"
	MetricStallTime      = "stall_resume_total_s"
	MetricLag            = "schedule_lag_ms"
	MetricStampDelay     = "stamp_delay_ms"
	// MetricQueue is the client queue time: the wait for a connection of
	// the client's transport (results.Record.QueueS).
	MetricQueue = "client_queue_ms"
)

// OriginMixed is Summary.LatencyOrigin when the measured records do not share
// one origin (records of different runs summarised together).
const OriginMixed = "mixed"

// Metric is the distribution of one per-request figure.
type Metric struct {
	Name    string        `json:"name"`
	Unit    string        `json:"unit"`
	Summary stats.Summary `json:"summary"`
}

// Continuity is the share of audio responses that played without a gap longer
// than Threshold under the reference player.
type Continuity struct {
	ThresholdMS string  `json:"threshold_ms"`
	OK          int     `json:"ok"`
	Of          int     `json:"of"`
	Rate        float64 `json:"rate"`
}

// Players summarises the listener-side player models.
type Players struct {
	Responses           int     `json:"responses"`
	StallResumeStalled  int     `json:"stall_resume_stalled"`   // responses with at least one stall
	StallResumeStalls   int     `json:"stall_resume_stalls"`    // stalls in all
	StallResumeTotalS   float64 `json:"stall_resume_total_s"`   // stall time in all
	StallResumeLongestS float64 `json:"stall_resume_longest_s"` // the longest single stall
	PrerollStalled      int     `json:"preroll_stalled"`
	PrerollStartupMeanS float64 `json:"preroll_startup_mean_s"`
}

// Requests counts outcomes. Warm-up requests are excluded everywhere else.
type Requests struct {
	Total     int `json:"total"` // measured requests sent
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Warmup    int `json:"warmup"`
	Ramp      int `json:"ramp,omitempty"` // ramp-phase requests left out (see Options.IncludeRamp)
	// ErrorRate is Failed / Total (0 when nothing was sent).
	ErrorRate float64 `json:"error_rate"`
	// Dropped counts open-loop arrivals refused by --max-inflight (never
	// sent, so not in Total); DropRate is Dropped / (Total + Dropped). The
	// runner sets both from the load generator (SetDropped); a summary
	// recomputed from a results file has no drops to count.
	Dropped   int            `json:"dropped"`
	DropRate  float64        `json:"drop_rate"`
	ByError   map[string]int `json:"by_error,omitempty"`       // error class -> count
	ByStatus  map[string]int `json:"by_http_status,omitempty"` // HTTP status of http_status errors
	ByFinish  map[string]int `json:"by_finish_reason,omitempty"`
	WithAudio int            `json:"with_audio"`
	// ChatWithAudio counts streamed chat responses that carried audio: what the
	// server's TTFP histogram should count.
	ChatWithAudio int `json:"chat_with_audio"`
}

// Audio totals.
type Audio struct {
	TotalDurationS float64 `json:"total_audio_duration_s"`
	TotalFrames    int64   `json:"total_audio_frames"`
	Throughput     float64 `json:"audio_throughput"` // audio seconds per wall second
	// Audio sent (spoken prompts, voice-cloning references) by the measured
	// requests: seconds and file bytes. The figures above are all output.
	InputDurationS float64 `json:"total_input_audio_s,omitempty"`
	InputBytes     int64   `json:"total_input_audio_bytes,omitempty"`
}

// Summary is everything a run report shows.
type Summary struct {
	SchemaVersion int    `json:"schema_version"`
	Mode          string `json:"mode"`
	// LatencyOrigin is the measured records' results.Record.LatencyOrigin
	// (OriginIntended or OriginSend), or "mixed" when they differ; FromIntended
	// is true when every measured record counts from its intended start.
	LatencyOrigin string         `json:"latency_origin,omitempty"`
	FromIntended  bool           `json:"latency_from_intended_start"`
	DurationS     float64        `json:"duration_s"` // first send to last response end
	RequestRate   float64        `json:"request_throughput"`
	Requests      Requests       `json:"requests"`
	Metrics       []Metric       `json:"metrics"`
	Continuity    []Continuity   `json:"continuity"`
	Players       Players        `json:"players"`
	Audio         Audio          `json:"audio"`
	Goodput       *GoodputResult `json:"goodput,omitempty"`
	Quality       *Quality       `json:"audio_quality,omitempty"`
	bench         *benchFigures  // the benchmark's figures, for Bench
	Percentiles   []float64      `json:"percentiles"`
	// Errors is the error set: one group per distinct (class, status,
	// message) of the failed measured requests, most frequent first, at most
	// MaxErrorGroups; ErrorsOmitted counts the failures in groups left out.
	Errors        []ErrorGroup `json:"errors,omitempty"`
	ErrorsOmitted int          `json:"errors_omitted,omitempty"`
	Warnings      []string     `json:"warnings,omitempty"`
}

// Metric returns the named metric's summary.
func (s *Summary) Metric(name string) (stats.Summary, bool) {
	for _, m := range s.Metrics {
		if m.Name == name {
			return m.Summary, true
		}
	}
	return stats.Summary{}, false
}

// Compute summarises the measured (non-warm-up) records: the figures of
// their Set (see ComputeSet), so that a results file and a live run share one
// computation.
func Compute(recs []results.Record, opts Options) *Summary {
	return ComputeSet(SetOf(recs), opts)
}

// ComputeSet summarises the measured (non-warm-up) requests of set.
func ComputeSet(set *Set, opts Options) *Summary {
	if len(opts.Percentiles) == 0 {
		opts.Percentiles = DefaultPercentiles()
	}
	if len(opts.Thresholds) == 0 {
		opts.Thresholds = []float64{0.1}
	}
	s := &Summary{
		SchemaVersion: results.SchemaVersion,
		Percentiles:   opts.Percentiles,
		Requests:      Requests{ByError: map[string]int{}, ByStatus: map[string]int{}, ByFinish: map[string]int{}},
	}
	v := newValues(opts.Thresholds)
	set.each(func(i int, r *Sample) { v.addRequest(s, set, opts, r, i) })
	s.FromIntended = s.LatencyOrigin == results.OriginIntended
	v.totals(s, set, opts)
	v.quality.finish(s, set)
	var sc scratch
	defer sc.free()
	// The bench block first: its standard deviations sum the values in the
	// order kept, which the distributions below then sort.
	s.bench = benchOf(set, opts.Percentiles, opts.IncludeRamp, &sc)
	addMetrics(s, set, opts, &sc)
	if len(opts.Goodput) > 0 {
		s.Goodput = computeGoodput(set, opts.Goodput, opts.IncludeRamp, s.DurationS)
	}
	for k := range s.Requests.ByStatus {
		if k == "0" {
			s.Warnings = append(s.Warnings, "http_status errors without a status code")
		}
	}
	return s
}

// values gathers, request by request, the counts and bounds of what
// ComputeSet summarises (the distributions are figures.go's).
type values struct {
	firstSend, lastEnd float64
	okCount            []int // per continuity threshold
	ofCount            int
	prerollStartup     float64
	labels             []string // the thresholds' labels
	quality            qualityValues
}

func newValues(thresholds []float64) *values {
	v := &values{
		firstSend: math.Inf(1), lastEnd: math.Inf(-1),
		okCount: make([]int, len(thresholds)),
		labels:  make([]string, len(thresholds)),
	}
	for i, th := range thresholds {
		v.labels[i] = continuity.ThresholdLabel(th)
	}
	return v
}

// addRequest counts one request of the set, its sample i, into s's counts and
// v's values.
func (v *values) addRequest(s *Summary, set *Set, opts Options, r *Sample, i int) {
	if r.Warmup() {
		s.Requests.Warmup++
		return
	}
	if r.Ramp() && !opts.IncludeRamp {
		s.Requests.Ramp++
		return
	}
	s.Requests.Total++
	switch s.LatencyOrigin {
	case "":
		s.LatencyOrigin = r.Origin()
	case r.Origin():
	default:
		s.LatencyOrigin = OriginMixed
	}
	s.Audio.InputDurationS += r.InputAudioS
	s.Audio.InputBytes += r.InputAudioBytes
	v.firstSend = math.Min(v.firstSend, r.SentS)
	v.lastEnd = math.Max(v.lastEnd, r.SentS+r.E2ES)
	if !set.OK(r) {
		s.Requests.Failed++
		class := set.ErrorClass(r)
		s.Requests.ByError[class]++
		if class == results.ErrHTTPStatus {
			s.Requests.ByStatus[strconv.Itoa(int(r.Status))]++
		}
		return
	}
	s.Requests.Completed++
	if f := set.FinishReason(r); f != "" {
		s.Requests.ByFinish[f]++
	}
	if r.HasAudio() {
		s.Requests.WithAudio++
		if set.ChatPath(r) {
			s.Requests.ChatWithAudio++
		}
		s.Audio.TotalDurationS += r.AudioDurationS
		s.Audio.TotalFrames += r.AudioFrames
		v.addContinuity(s, set, opts, r)
		v.quality.add(set, i)
	}
}

// addContinuity counts a completed request's continuity result and its
// players' stalls, when it has them.
func (v *values) addContinuity(s *Summary, set *Set, opts Options, r *Sample) {
	if r.flags&flagContinuity == 0 {
		return
	}
	v.ofCount++
	for j, l := range v.labels {
		if ok, _ := set.Continuous(r, l, opts.Thresholds[j]); ok {
			v.okCount[j]++
		}
	}
	if r.flags&flagStallResume != 0 {
		s.Players.Responses++
		if r.Stalls > 0 {
			s.Players.StallResumeStalled++
		}
		s.Players.StallResumeStalls += int(r.Stalls)
		s.Players.StallResumeTotalS += r.StallTotalS
		s.Players.StallResumeLongestS = math.Max(s.Players.StallResumeLongestS, r.StallLongestS)
	}
	if r.flags&flagPreroll != 0 {
		if r.flags&flagPrerollStalled != 0 {
			s.Players.PrerollStalled++
		}
		v.prerollStartup += r.PrerollStartupS
	}
}

// totals sets the figures of s taken over all the requests: the rates, the
// error set, the run's duration and throughput, the continuity rates.
func (v *values) totals(s *Summary, set *Set, opts Options) {
	if s.Players.Responses > 0 {
		s.Players.PrerollStartupMeanS = v.prerollStartup / float64(s.Players.Responses)
	}
	if s.Requests.Total > 0 {
		s.Requests.ErrorRate = float64(s.Requests.Failed) / float64(s.Requests.Total)
	}
	s.Errors, s.ErrorsOmitted = set.errorSet(opts.IncludeRamp)
	if s.ErrorsOmitted > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("error set: %d failures in messages beyond the %d most frequent are not listed", s.ErrorsOmitted, MaxErrorGroups))
	}
	s.Warnings = append(s.Warnings, set.capWarnings()...)
	if s.Requests.Total > 0 && v.lastEnd > v.firstSend {
		s.DurationS = v.lastEnd - v.firstSend
		s.RequestRate = float64(s.Requests.Completed) / s.DurationS
		s.Audio.Throughput = s.Audio.TotalDurationS / s.DurationS
	}
	for j, l := range v.labels {
		c := Continuity{ThresholdMS: l, OK: v.okCount[j], Of: v.ofCount}
		if v.ofCount > 0 {
			c.Rate = float64(v.okCount[j]) / float64(v.ofCount)
		}
		s.Continuity = append(s.Continuity, c)
	}
}

func (c Continuity) String() string {
	return fmt.Sprintf("%s ms: %d/%d", c.ThresholdMS, c.OK, c.Of)
}

// CheckPercentiles refuses percentiles outside (0, 100]: p0 is the minimum,
// reported already, and anything else is not a percentile. flag names the
// option in the error ("--percentiles").
func CheckPercentiles(flag string, ps []float64) error {
	for _, p := range ps {
		if !(p > 0 && p <= 100) {
			return fmt.Errorf("%s: percentile %v is outside (0, 100]", flag, p)
		}
	}
	return nil
}
