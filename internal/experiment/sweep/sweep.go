package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/omnibench/omnibench/internal/run/slo"
)

// Saturation decides when a level is clearly past the server's capacity, so
// a sweep does not go on to run heavier levels that can only be worse.
type Saturation struct {
	// MaxErrorRate: a level whose error rate exceeds it is saturated. 1 or
	// more never stops on errors.
	MaxErrorRate float64
	// TTFPGrowth: a level whose median TTFP is more than this factor of the
	// previous level's, while request throughput rose by less than
	// MinThroughputGain, is saturated (latency growing without bound: more
	// load only queues). 0 disables the test.
	TTFPGrowth float64
}

// MinThroughputGain is the relative throughput increase that excuses a TTFP
// growth: a server that still does 10% more work is not saturated.
const MinThroughputGain = 0.10

// DefaultSaturation stops above 50% errors or at a fourfold TTFP growth.
func DefaultSaturation() Saturation { return Saturation{MaxErrorRate: 0.5, TTFPGrowth: 4} }

// Check reports whether cur is saturated, and why. prev is the level run
// before it (nil for the first level).
func (s Saturation) Check(prev *Point, cur Point) (reason string, saturated bool) {
	f := cur.Figures
	if s.MaxErrorRate < 1 && f.ErrorRate > s.MaxErrorRate {
		return fmt.Sprintf("error rate %s (%d of %d requests failed) is above the limit %s",
			pctText(f.ErrorRate), f.Failed, f.Requests, pctText(s.MaxErrorRate)), true
	}
	if prev == nil || s.TTFPGrowth <= 0 {
		return "", false
	}
	p := prev.Figures
	if !(p.TTFPP50MS > 0) || math.IsNaN(f.TTFPP50MS) {
		return "", false
	}
	growth := f.TTFPP50MS / p.TTFPP50MS
	if growth <= s.TTFPGrowth {
		return "", false
	}
	gain := math.NaN()
	if p.RequestThroughput > 0 && !math.IsNaN(f.RequestThroughput) {
		gain = f.RequestThroughput/p.RequestThroughput - 1
	}
	if gain >= MinThroughputGain {
		return "", false
	}
	gainText := "unknown"
	if !math.IsNaN(gain) {
		gainText = fmt.Sprintf("%+.0f%%", gain*100)
	}
	return fmt.Sprintf("TTFP p50 grew %.1fx (%.0f ms to %.0f ms) while request throughput changed %s (%.3g to %.3g req/s): latency is growing without more work being done",
		growth, p.TTFPP50MS, f.TTFPP50MS, gainText, p.RequestThroughput, f.RequestThroughput), true
}

func pctText(v float64) string { return fmt.Sprintf("%.3g%%", v*100) }

// Options configure a sweep.
type Options struct {
	Axis   Axis
	Levels []float64 // run in increasing order
	SLOs   []slo.SLO // evaluated at every level; none is fine
	// Saturation, when set, stops the sweep after the first saturated level.
	Saturation *Saturation
	// OnPoint, when set, is called after every level (progress).
	OnPoint func(Point)
}

// Stop says why a sweep ended before its last level.
type Stop struct {
	Level   float64   `json:"level"`   // the saturated level (it was run)
	Reason  string    `json:"reason"`  // e.g. "error rate 62% (31 of 50 requests failed) is above the limit 50%"
	Skipped []float64 `json:"skipped"` // levels not run
}

// Result is a finished (or stopped) sweep.
type Result struct {
	Axis   Axis
	SLOs   []slo.SLO
	Points []Point // in run (increasing) order
	Stop   *Stop   // nil when every level ran
}

// Sweep runs every level in increasing order. It returns the points gathered
// so far together with any error of a run (an interrupted run's partial
// point is included, marked Partial).
func Sweep(ctx context.Context, opts Options, run RunFunc) (*Result, error) {
	if opts.Axis != Concurrency && opts.Axis != Rate {
		return nil, fmt.Errorf("sweep: unknown axis %q", opts.Axis)
	}
	if len(opts.Levels) == 0 {
		return nil, errors.New("sweep: no levels")
	}
	levels := slices.Clone(opts.Levels)
	slices.Sort(levels)
	levels = slices.Compact(levels)
	res := &Result{Axis: opts.Axis, SLOs: opts.SLOs}
	for i, lv := range levels {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		m, err := run(ctx, lv)
		if err != nil {
			if m.Summary != nil {
				p := Measure(lv, m, opts.SLOs)
				p.Partial = true
				res.Points = append(res.Points, p)
			}
			return res, fmt.Errorf("sweep: level %s: %w", opts.Axis.Format(lv), err)
		}
		p := Measure(lv, m, opts.SLOs)
		res.Points = append(res.Points, p)
		if opts.OnPoint != nil {
			opts.OnPoint(p)
		}
		if opts.Saturation == nil {
			continue
		}
		var prev *Point
		if len(res.Points) > 1 {
			prev = &res.Points[len(res.Points)-2]
		}
		if reason, sat := opts.Saturation.Check(prev, p); sat && i < len(levels)-1 {
			if p.ClientSaturated != "" {
				reason += "; but the load generator was saturated at this level, so this may be the client's limit, not the server's"
			}
			res.Stop = &Stop{Level: lv, Reason: reason, Skipped: slices.Clone(levels[i+1:])}
			return res, nil
		}
	}
	return res, nil
}

// AllPass reports whether every level met every SLO.
func (r *Result) AllPass() bool {
	for _, p := range r.Points {
		if !p.Pass() {
			return false
		}
	}
	return true
}

// StopNote is the sentence a report prints for an early stop, or "".
func (r *Result) StopNote() string {
	if r.Stop == nil {
		return ""
	}
	skipped := make([]string, len(r.Stop.Skipped))
	for i, v := range r.Stop.Skipped {
		skipped[i] = r.Axis.Format(v)
	}
	return fmt.Sprintf("stopped early at %s %s: %s; not run: %s",
		r.Axis, r.Axis.Format(r.Stop.Level), r.Stop.Reason, strings.Join(skipped, ", "))
}
