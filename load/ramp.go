package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// PhaseRamp marks an arrival that started while the load was still changing
// (Arrival.Phase, results.Record.Phase): a closed loop's ramp-up or a
// stage whose target moves, an open loop's rate ramp. The steady phase has
// no mark.
const PhaseRamp = "ramp"

// Stage is one step of a closed loop's worker target, as k6's stages: over
// Duration the number of active workers moves linearly from the previous
// stage's target (0 before the first stage) to Target.
type Stage struct {
	Duration time.Duration
	Target   int
}

// ParseStages parses a stage list such as "30s:100,2m:100,30s:0" (duration
// and target per stage, comma-separated). Errors name the stage.
func ParseStages(s string) ([]Stage, error) {
	var out []Stage
	for i, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		ds, ts, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("stage %d %q: want DURATION:TARGET, e.g. 30s:100", i+1, part)
		}
		d, err := time.ParseDuration(strings.TrimSpace(ds))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("stage %d %q: duration %q must be a positive duration such as 30s", i+1, part, ds)
		}
		n, err := strconv.Atoi(strings.TrimSpace(ts))
		if err != nil || n < 0 {
			return nil, fmt.Errorf("stage %d %q: target %q must be a whole number of workers >= 0", i+1, part, ts)
		}
		out = append(out, Stage{Duration: d, Target: n})
	}
	return out, nil
}

// FormatStages is the inverse of ParseStages.
func FormatStages(stages []Stage) string {
	parts := make([]string, len(stages))
	for i, s := range stages {
		parts[i] = s.Duration.String() + ":" + strconv.Itoa(s.Target)
	}
	return strings.Join(parts, ",")
}

// segment is one linear piece of a closed loop's worker target: from
// target a at offset from to target b at offset to.
type segment struct {
	from, to time.Duration
	a, b     float64
}

// ramp reports whether the target changes over the segment.
func (s segment) ramp() bool { return s.a != s.b }

// segments is the worker target of a closed loop as linear pieces, or nil
// when every worker runs from the start (no ramp-up, no stages). A ramp-up
// without stages is one rising piece then a flat one to the end of time.
func (c Config) segments() []segment {
	switch {
	case len(c.Stages) > 0:
		out := make([]segment, 0, len(c.Stages))
		var at time.Duration
		prev := 0.0
		for _, s := range c.Stages {
			out = append(out, segment{from: at, to: at + s.Duration, a: prev, b: float64(s.Target)})
			at += s.Duration
			prev = float64(s.Target)
		}
		return out
	case c.RampUp > 0 && !c.Open():
		n := float64(c.Concurrency)
		return []segment{{from: 0, to: c.RampUp, a: 0, b: n}, {from: c.RampUp, to: math.MaxInt64, a: n, b: n}}
	}
	return nil
}

// stagesEnd is the end of the last stage (0 without stages).
func (c Config) stagesEnd() time.Duration {
	var d time.Duration
	for _, s := range c.Stages {
		d += s.Duration
	}
	return d
}

// interval is a span [from, to) of offsets.
type interval struct{ from, to time.Duration }

// workerIntervals is when closed-loop worker k (1-based) may start jobs:
// while the target exceeds k-1, so with a rising target worker k starts the
// moment the target reaches k-1 (worker 1 at once, worker N at
// (N-1)/N of the ramp: the workers start evenly over it), and with a falling
// one it stops taking jobs when the target drops to k-1 (a running job
// finishes). nil segments: always.
func workerIntervals(segs []segment, k int) []interval {
	if segs == nil {
		return []interval{{0, math.MaxInt64}}
	}
	h := float64(k - 1)
	var out []interval
	add := func(from, to time.Duration) {
		if to <= from {
			return
		}
		if n := len(out); n > 0 && out[n-1].to == from {
			out[n-1].to = to
			return
		}
		out = append(out, interval{from, to})
	}
	for _, s := range segs {
		span := float64(s.to - s.from)
		switch {
		case s.a > h && s.b > h:
			add(s.from, s.to)
		case s.a <= h && h < s.b: // rising through h
			add(s.from+time.Duration(math.Ceil((h-s.a)/(s.b-s.a)*span)), s.to)
		case s.b <= h && h < s.a: // falling through h
			add(s.from, s.from+time.Duration(math.Floor((s.a-h)/(s.a-s.b)*span)))
		}
	}
	return out
}

// nextActive is the first offset at or after off inside one of the
// intervals; ok is false when there is none.
func nextActive(iv []interval, off time.Duration) (at time.Duration, ok bool) {
	for _, v := range iv {
		if off < v.to {
			return max(off, v.from), true
		}
	}
	return 0, false
}

// phaseAt is the phase of a closed-loop arrival launched at off.
func phaseAt(segs []segment, off time.Duration) string {
	for _, s := range segs {
		if off >= s.from && off < s.to {
			if s.ramp() {
				return PhaseRamp
			}
			return ""
		}
	}
	return ""
}

// rateRamp is an open loop's linear rate ramp: the rate moves from r0 at
// offset 0 to r1 at offset T (seconds), then stays at r1.
type rateRamp struct{ r0, r1, t float64 }

// integral is the expected number of arrivals before offset x seconds:
// the integral of the rate from 0 to x.
func (r rateRamp) integral(x float64) float64 {
	if x <= r.t {
		return r.r0*x + (r.r1-r.r0)*x*x/(2*r.t)
	}
	return r.integral(r.t) + r.r1*(x-r.t)
}

// at inverts integral: the offset (seconds) by which s arrivals are
// expected. Arrival i of a unit-rate process at operational time s is at
// at(s) in real time (the time change that makes a rate-1 process one of
// the ramp's rate).
func (r rateRamp) at(s float64) float64 {
	if s <= 0 {
		return 0
	}
	if full := r.integral(r.t); s > full {
		return r.t + (s-full)/r.r1
	}
	// Solve r0 x + a x^2 / 2 = s with a = (r1 - r0) / T, in the form that
	// is stable for a near 0, a < 0 and r0 = 0.
	a := (r.r1 - r.r0) / r.t
	return 2 * s / (r.r0 + math.Sqrt(r.r0*r.r0+2*a*s))
}

// ParseRate parses an open-loop rate: "20" (arrivals per second) or a
// range "1:20" for a linear rate ramp from 1 to 20 over Config.RampUp. It
// returns the ramp's start (0 for a single rate) and the rate.
func ParseRate(s string) (start, rate float64, err error) {
	num := func(v string) (float64, error) {
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return 0, fmt.Errorf("rate %q: want a number of arrivals per second >= 0, or a ramp START:END such as 1:20", s)
		}
		return f, nil
	}
	a, b, isRange := strings.Cut(s, ":")
	if !isRange {
		rate, err = num(s)
		return 0, rate, err
	}
	if start, err = num(a); err != nil {
		return 0, 0, err
	}
	if rate, err = num(b); err != nil {
		return 0, 0, err
	}
	if rate == 0 {
		return 0, 0, fmt.Errorf("rate %q: a ramp must end at a rate > 0", s)
	}
	return start, rate, nil
}
