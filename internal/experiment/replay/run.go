package replay

import (
	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
)

// DefaultThresholdS is the continuity threshold when Options names none, the
// reference benchmark's 0.1 s.
const DefaultThresholdS = 0.1

// Options chooses how responses are judged.
type Options struct {
	Thresholds []float64       // continuity thresholds in seconds; empty means [DefaultThresholdS]
	Mode       continuity.Mode // underrun counting of Simulate
	Prebuffer  continuity.PrerollConfig
}

func (o Options) thresholds() []float64 {
	if len(o.Thresholds) == 0 {
		return []float64{DefaultThresholdS}
	}
	return o.Thresholds
}

// Response is the replay of one trace. The continuity fields have the same
// shape (and JSON) as a run's results.Continuity, so a replayed response reads
// like a recorded one.
type Response struct {
	ID     string  `json:"id"`
	Chunks int     `json:"chunks"`
	AudioS float64 `json:"audio_s"` // seconds of audio in the response
	results.Continuity
}

// PlayerSummary aggregates one player model over all responses.
type PlayerSummary struct {
	MeanStartupDelayS float64 `json:"mean_startup_delay_s"`
	MaxStartupDelayS  float64 `json:"max_startup_delay_s"`
	WithStalls        int     `json:"with_stalls"` // responses that stalled at least once
	MeanStalls        float64 `json:"mean_stalls"`
	MeanTotalStallS   float64 `json:"mean_total_stall_s"`
	MaxTotalStallS    float64 `json:"max_total_stall_s"`
	LongestStallS     float64 `json:"longest_stall_s"` // the longest single stall in any response
}

// Summary aggregates a replay. Means are over responses; with no responses
// every figure is zero and ContinuousRate is empty.
type Summary struct {
	Responses  int       `json:"responses"`
	AudioS     float64   `json:"audio_s"` // total seconds of audio
	Mode       string    `json:"mode"`
	Thresholds []float64 `json:"thresholds_s"`
	// ContinuousRate is the fraction of responses whose max underrun is within
	// each threshold, keyed by continuity.ThresholdLabel (integer ms).
	ContinuousRate     map[string]float64 `json:"continuous_rate"`
	WithUnderrun       int                `json:"with_underrun"` // responses with at least one underrun event
	MeanMaxUnderrunS   float64            `json:"mean_max_underrun_s"`
	MaxMaxUnderrunS    float64            `json:"max_max_underrun_s"`
	MeanUnderrunEvents float64            `json:"mean_underrun_events"`
	PrebufferS         float64            `json:"prebuffer_s"`
	PrebufferMaxWaitS  float64            `json:"prebuffer_max_wait_s"`
	StallResume        PlayerSummary      `json:"stall_resume"`
	Preroll            PlayerSummary      `json:"preroll"`
}

// Run judges every trace with Simulate, StallResume and Preroll and sums up.
func Run(in []Trace, opts Options) ([]Response, Summary) {
	ths := opts.thresholds()
	sum := Summary{
		Responses:         len(in),
		Mode:              opts.Mode.String(),
		Thresholds:        ths,
		ContinuousRate:    map[string]float64{},
		PrebufferS:        opts.Prebuffer.BufferS,
		PrebufferMaxWaitS: opts.Prebuffer.MaxWaitS,
	}
	out := make([]Response, 0, len(in))
	var sr, pr playerAcc
	for _, tr := range in {
		res := continuity.Simulate(tr.Input, opts.Mode)
		stall := continuity.StallResume(tr.Input)
		pre := continuity.Preroll(tr.Input, opts.Prebuffer)
		resp := Response{
			ID:     tr.ID,
			Chunks: len(tr.Input.Bytes),
			AudioS: tr.Input.DurationS(),
			Continuity: results.Continuity{
				Mode:           opts.Mode.String(),
				MaxUnderrunS:   res.MaxUnderrunS,
				UnderrunEvents: res.UnderrunEvents,
				OK:             make(map[string]bool, len(ths)),
				StallResume:    ptr(results.PlayerResult(stall)),
				Preroll:        ptr(results.PlayerResult(pre)),
			},
		}
		for _, th := range ths {
			ok := res.Continuous(th)
			resp.OK[continuity.ThresholdLabel(th)] = ok
			if ok {
				sum.ContinuousRate[continuity.ThresholdLabel(th)]++
			}
		}
		sum.AudioS += resp.AudioS
		if res.UnderrunEvents > 0 {
			sum.WithUnderrun++
		}
		sum.MeanMaxUnderrunS += res.MaxUnderrunS
		sum.MaxMaxUnderrunS = max(sum.MaxMaxUnderrunS, res.MaxUnderrunS)
		sum.MeanUnderrunEvents += float64(res.UnderrunEvents)
		sr.add(stall)
		pr.add(pre)
		out = append(out, resp)
	}
	if n := float64(len(in)); n > 0 {
		for k := range sum.ContinuousRate {
			sum.ContinuousRate[k] /= n
		}
		for _, th := range ths {
			// Thresholds nobody met still get an explicit 0.
			if _, seen := sum.ContinuousRate[continuity.ThresholdLabel(th)]; !seen {
				sum.ContinuousRate[continuity.ThresholdLabel(th)] = 0
			}
		}
		sum.MeanMaxUnderrunS /= n
		sum.MeanUnderrunEvents /= n
	}
	sum.StallResume = sr.summary(len(in))
	sum.Preroll = pr.summary(len(in))
	return out, sum
}

type playerAcc struct{ s PlayerSummary }

func (a *playerAcc) add(p continuity.PlayerResult) {
	a.s.MeanStartupDelayS += p.StartupDelayS
	a.s.MaxStartupDelayS = max(a.s.MaxStartupDelayS, p.StartupDelayS)
	if p.Stalls > 0 {
		a.s.WithStalls++
	}
	a.s.MeanStalls += float64(p.Stalls)
	a.s.MeanTotalStallS += p.TotalStallS
	a.s.MaxTotalStallS = max(a.s.MaxTotalStallS, p.TotalStallS)
	a.s.LongestStallS = max(a.s.LongestStallS, p.LongestStallS)
}

func (a *playerAcc) summary(n int) PlayerSummary {
	s := a.s
	if n > 0 {
		s.MeanStartupDelayS /= float64(n)
		s.MeanStalls /= float64(n)
		s.MeanTotalStallS /= float64(n)
	}
	return s
}

func ptr[T any](v T) *T { return &v }
