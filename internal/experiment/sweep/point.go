package sweep

import (
	"context"
	"math"
	"slices"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// Measurement is what one run at a level produced.
type Measurement struct {
	Summary *summary.Summary
	// Set holds the run's requests (summary.Set); SLOs on figures the
	// summary lacks (an unreported percentile or continuity threshold) are
	// computed from it.
	Set *summary.Set
	// ClientSaturated is the run's load-generator warning when the client
	// itself was the bottleneck (selfmon.Report.Warning), "" otherwise:
	// such a level's latencies include client delay, and a miss there
	// decides nothing.
	ClientSaturated string
	// ClientWarning is the run's load-generator warning when something
	// else delayed it (a busy host, the server sharing its cores, steal,
	// scheduling): shown beside the level, it decides nothing either way.
	ClientWarning string
	// Attribution is where the run's mean latency went by the server's
	// metrics (breakdown.Attribution); nil when the run did not scrape.
	Attribution *breakdown.Attribution
}

// SetHealth files the run's load-generator verdict (nil: not watched):
// its warning is ClientSaturated when the client was the bottleneck,
// ClientWarning otherwise.
func (m *Measurement) SetHealth(h *selfmon.Report) {
	if h == nil {
		return
	}
	if h.Saturated {
		m.ClientSaturated = h.Warning()
	} else {
		m.ClientWarning = h.Warning()
	}
}

// RunFunc performs one run at level (a concurrency or a rate, by the axis
// the caller chose). It may return a Measurement together with an error (an
// interrupted run): the package keeps what was measured and stops.
type RunFunc func(ctx context.Context, level float64) (Measurement, error)

// Figures are the per-level figures of a sweep table. Times are in
// milliseconds, rates are fractions; NaN means no data (for example no
// response carried audio).
type Figures struct {
	Requests  int     // measured requests
	Completed int     // of which completed
	Failed    int     // of which failed
	ErrorRate float64 // Failed / Requests

	TTFPP50MS float64 // audio time to first packet, median
	TTFPP95MS float64
	E2EP95MS  float64

	// ContinuityOKRate is the share of audio responses that played without
	// a gap above ContinuityThresholdMS (100 ms when summarised, else the
	// first threshold summarised).
	ContinuityOKRate      float64
	ContinuityThresholdMS string

	RTFP50            float64 // real-time factor to the last chunk, median
	RequestThroughput float64 // completed requests per second
	AudioThroughput   float64 // audio seconds per wall-clock second
}

// HTML figure keys (report.SweepLevel.Figures), in table order.
const (
	KeyTTFPP50           = "audio_ttfp_p50"
	KeyTTFPP95           = "audio_ttfp_p95"
	KeyE2EP95            = "e2e_p95"
	KeyContinuity        = "continuity_ok_rate"
	KeyRTFP50            = "rtf_last_chunk_p50"
	KeyRequestThroughput = "request_throughput"
	KeyAudioThroughput   = "audio_throughput"
	KeyErrorRate         = "error_rate"
)

// FiguresOf reads the figures from a run summary. Percentiles the summary
// did not report (p50, p95 when --percentiles left them out) are computed
// from set with the summary's own method.
func FiguresOf(s *summary.Summary, set *summary.Set) Figures {
	nan := math.NaN()
	f := Figures{
		ErrorRate: nan, TTFPP50MS: nan, TTFPP95MS: nan, E2EP95MS: nan, ContinuityOKRate: nan,
		RTFP50: nan, RequestThroughput: nan, AudioThroughput: nan,
	}
	if s == nil {
		return f
	}
	f.Requests, f.Completed, f.Failed = s.Requests.Total, s.Requests.Completed, s.Requests.Failed
	if f.Requests > 0 {
		f.ErrorRate = float64(f.Failed) / float64(f.Requests)
	}
	if s.DurationS > 0 {
		f.RequestThroughput = s.RequestRate
		f.AudioThroughput = s.Audio.Throughput
	}
	var extra *summary.Summary // computed only when a percentile is missing
	pct := func(metric string, p float64) float64 {
		m, ok := s.Metric(metric)
		if !ok || m.N == 0 {
			return nan
		}
		if v, ok := m.Percentile(p); ok {
			return v
		}
		if extra == nil {
			if set == nil || set.Len() == 0 {
				return nan
			}
			extra = summary.ComputeSet(set, summary.Options{Percentiles: []float64{50, 95}})
		}
		m, ok = extra.Metric(metric)
		if !ok {
			return nan
		}
		v, _ := m.Percentile(p)
		return v
	}
	f.TTFPP50MS = pct(summary.MetricTTFP, 50)
	f.TTFPP95MS = pct(summary.MetricTTFP, 95)
	f.E2EP95MS = pct(summary.MetricE2E, 95)
	f.RTFP50 = pct(summary.MetricRTFLastChunk, 50)
	if i := slices.IndexFunc(s.Continuity, func(c summary.Continuity) bool { return c.ThresholdMS == "100" }); i >= 0 {
		f.setContinuity(s.Continuity[i])
	} else if len(s.Continuity) > 0 {
		f.setContinuity(s.Continuity[0])
	}
	return f
}

func (f *Figures) setContinuity(c summary.Continuity) {
	f.ContinuityThresholdMS = c.ThresholdMS
	if c.Of > 0 {
		f.ContinuityOKRate = float64(c.OK) / float64(c.Of)
	}
}

// Map returns the figures under the HTML report's keys (Key*), leaving out
// those without data.
func (f Figures) Map() map[string]float64 {
	out := map[string]float64{}
	put := func(k string, v float64) {
		if !math.IsNaN(v) && !math.IsInf(v, 0) {
			out[k] = v
		}
	}
	put(KeyTTFPP50, f.TTFPP50MS)
	put(KeyTTFPP95, f.TTFPP95MS)
	put(KeyE2EP95, f.E2EP95MS)
	put(KeyContinuity, f.ContinuityOKRate)
	put(KeyRTFP50, f.RTFP50)
	put(KeyRequestThroughput, f.RequestThroughput)
	put(KeyAudioThroughput, f.AudioThroughput)
	put(KeyErrorRate, f.ErrorRate)
	return out
}

// Point is the outcome of one run at one level.
type Point struct {
	Level   float64
	Figures Figures
	SLOs    []slo.Result // in the order the SLOs were given
	Summary *summary.Summary
	// Partial marks a run that ended in an error (an interrupt) after
	// measuring something: its figures are shown but decide nothing.
	Partial bool
	// ClientSaturated is Measurement.ClientSaturated: the level was
	// measured by a saturated load generator.
	ClientSaturated string
	// ClientWarning is Measurement.ClientWarning.
	ClientWarning string
	// Attribution is Measurement.Attribution.
	Attribution *breakdown.Attribution
}

// Measure evaluates a run at level against slos.
func Measure(level float64, m Measurement, slos []slo.SLO) Point {
	p := Point{Level: level, Figures: FiguresOf(m.Summary, m.Set), Summary: m.Summary,
		ClientSaturated: m.ClientSaturated, ClientWarning: m.ClientWarning, Attribution: m.Attribution}
	if len(slos) > 0 {
		p.SLOs = slo.EvaluateSet(slos, m.Summary, m.Set)
	}
	return p
}

// Pass reports whether every SLO held (true when there are none).
func (p Point) Pass() bool { return slo.AllPass(p.SLOs) }

// Failed returns the SLOs that missed, in order.
func (p Point) Failed() []slo.Result {
	var out []slo.Result
	for _, r := range p.SLOs {
		if !r.Pass {
			out = append(out, r)
		}
	}
	return out
}

// Tightest returns the passing SLO closest to its limit, relative to the
// limit (absolute when the limit is 0): the one that will break first.
func (p Point) Tightest() (slo.Result, bool) {
	best, bestRel, found := slo.Result{}, math.Inf(1), false
	for _, r := range p.SLOs {
		if !r.Pass || math.IsNaN(r.Margin) {
			continue
		}
		rel := r.Margin
		if r.SLO.Value != 0 {
			rel = r.Margin / math.Abs(r.SLO.Value)
		}
		if rel < bestRel {
			best, bestRel, found = r, rel, true
		}
	}
	return best, found
}
