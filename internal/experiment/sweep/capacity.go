package sweep

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/omnibench/omnibench/internal/run/slo"
)

// DefaultMaxRuns bounds a capacity search when the caller does not.
const DefaultMaxRuns = 12

// DefaultResolution is the search resolution of an axis: one stream, or
// half a request per second.
func DefaultResolution(a Axis) float64 {
	if a == Rate {
		return 0.5
	}
	return 1
}

// DefaultMax is the highest level a search brackets up to: 1024 streams or
// 1000 requests per second.
func DefaultMax(a Axis) float64 {
	if a == Rate {
		return 1000
	}
	return 1024
}

// SearchOptions configure a capacity search. Zero values take the defaults.
type SearchOptions struct {
	Axis       Axis
	SLOs       []slo.SLO // required: what "holds" means
	Start      float64   // first level; default 1
	Max        float64   // highest level run; default DefaultMax(Axis)
	Resolution float64   // stop when passing and failing levels are this close; default DefaultResolution(Axis)
	MaxRuns    int       // run budget; default DefaultMaxRuns
	// OnStep, when set, is called after every run (progress).
	OnStep func(Step)
}

// Phase of a search.
type Phase string

// Phases.
const (
	PhaseBracket Phase = "bracket" // doubling from the start level
	PhaseBisect  Phase = "bisect"  // halving the interval between pass and fail
)

// Step is one run of a search.
type Step struct {
	Run   int // 1-based
	Phase Phase
	Point Point
}

// End says why a search ended.
type End string

// Ends.
const (
	EndResolved   End = "resolved"    // the passing and failing levels are within the resolution
	EndMaxLevel   End = "max-level"   // the highest level allowed passed: capacity is at least that
	EndMaxRuns    End = "max-runs"    // the run budget ran out before the resolution was reached
	EndStartFails End = "start-fails" // the start level already missed an SLO
	// EndClientSaturated: a level missed an SLO while the load generator
	// was saturated, so the miss may be the client's; the search stops
	// rather than report the client's knee as the server's capacity.
	EndClientSaturated End = "client-saturated"
)

// Search is the outcome of a capacity search.
type Search struct {
	Axis       Axis
	SLOs       []slo.SLO
	Start      float64
	Max        float64
	Resolution float64
	MaxRuns    int

	Steps []Step // the search path, in run order
	// Found is set when some level met every SLO; Capacity is the highest.
	Found    bool
	Capacity float64
	// Fail is the lowest level above Capacity that missed an SLO (the
	// start level when none passed); NaN when no level failed.
	Fail float64
	End  End // "" when a run error ended the search
}

// Runs is the number of runs made.
func (s *Search) Runs() int { return len(s.Steps) }

// WithDefaults returns the options with zero fields filled, and an error
// naming every invalid field. Capacity calls it first; callers may call it
// to validate input before starting anything.
func (o SearchOptions) WithDefaults() (SearchOptions, error) {
	if o.Axis != Concurrency && o.Axis != Rate {
		return o, fmt.Errorf("capacity: unknown axis %q", o.Axis)
	}
	if o.Start == 0 {
		o.Start = 1
	}
	if o.Max == 0 {
		o.Max = max(DefaultMax(o.Axis), o.Start)
	}
	if o.Resolution == 0 {
		o.Resolution = DefaultResolution(o.Axis)
	}
	if o.MaxRuns == 0 {
		o.MaxRuns = DefaultMaxRuns
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("capacity: "+format, args...)) }
	if len(o.SLOs) == 0 {
		bad("no SLOs: the search needs at least one objective to decide pass or fail")
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	whole := func(v float64) bool { return v == math.Trunc(v) }
	switch {
	case !finite(o.Start) || o.Start <= 0:
		bad("start %v must be greater than 0", o.Start)
	case o.Axis == Concurrency && (!whole(o.Start) || o.Start < 1):
		bad("start %v: concurrency is a whole number of at least 1", o.Start)
	case o.Start > o.Axis.Max():
		bad("start %v: more than %s, beyond what one client can drive", o.Start, o.Axis.Quantity(o.Axis.Max()))
	}
	switch {
	case !finite(o.Max) || o.Max < o.Start:
		bad("max %v must be at least the start %v", o.Max, o.Start)
	case o.Max > o.Axis.Max():
		bad("max %v: more than %s, beyond what one client can drive", o.Max, o.Axis.Quantity(o.Axis.Max()))
	case o.Axis == Concurrency && !whole(o.Max):
		bad("max %v: concurrency is a whole number", o.Max)
	}
	switch {
	case !finite(o.Resolution) || o.Resolution <= 0:
		bad("resolution %v must be greater than 0", o.Resolution)
	case o.Axis == Concurrency && !whole(o.Resolution):
		bad("resolution %v: concurrency resolution is a whole number", o.Resolution)
	}
	if o.MaxRuns < 1 {
		bad("max runs %d must be at least 1", o.MaxRuns)
	}
	return o, errors.Join(errs...)
}

// Capacity searches for the largest level at which every SLO holds: it
// doubles from Start until a level fails or Max passes, then bisects between
// the highest pass and the lowest fail until they are within Resolution, in
// at most MaxRuns runs. On a run error it returns the search so far (with End
// "") and the error.
func Capacity(ctx context.Context, opts SearchOptions, run RunFunc) (*Search, error) {
	opts, err := opts.WithDefaults()
	if err != nil {
		return nil, err
	}
	s := &Search{
		Axis: opts.Axis, SLOs: opts.SLOs, Start: opts.Start, Max: opts.Max,
		Resolution: opts.Resolution, MaxRuns: opts.MaxRuns, Fail: math.NaN(),
	}
	try := func(phase Phase, lv float64) (bool, error) {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		m, err := run(ctx, lv)
		if err != nil {
			if m.Summary != nil {
				p := Measure(lv, m, opts.SLOs)
				p.Partial = true
				s.Steps = append(s.Steps, Step{Run: len(s.Steps) + 1, Phase: phase, Point: p})
			}
			return false, fmt.Errorf("capacity: %s %s: %w", opts.Axis, opts.Axis.Format(lv), err)
		}
		st := Step{Run: len(s.Steps) + 1, Phase: phase, Point: Measure(lv, m, opts.SLOs)}
		s.Steps = append(s.Steps, st)
		if opts.OnStep != nil {
			opts.OnStep(st)
		}
		return st.Point.Pass(), nil
	}

	// Bracket: double from the start until a level fails.
	lv := opts.Start
	for {
		if s.Runs() >= opts.MaxRuns {
			s.End = EndMaxRuns
			return s, nil
		}
		pass, err := try(PhaseBracket, lv)
		if err != nil {
			return s, err
		}
		if !pass {
			s.Fail = lv
			if s.clientFail() {
				s.End = EndClientSaturated
				return s, nil
			}
			if !s.Found {
				s.End = EndStartFails
				return s, nil
			}
			break
		}
		s.Found, s.Capacity = true, lv
		if lv >= opts.Max {
			s.End = EndMaxLevel
			return s, nil
		}
		lv = min(tidy(lv*2), opts.Max)
	}

	// Bisect between the highest pass and the lowest fail.
	for s.Fail-s.Capacity > opts.Resolution*(1+1e-9) {
		if s.Runs() >= opts.MaxRuns {
			s.End = EndMaxRuns
			return s, nil
		}
		mid := tidy((s.Capacity + s.Fail) / 2)
		if opts.Axis == Concurrency {
			mid = s.Capacity + math.Floor((s.Fail-s.Capacity)/2)
		}
		pass, err := try(PhaseBisect, mid)
		if err != nil {
			return s, err
		}
		if pass {
			s.Capacity = mid
		} else {
			s.Fail = mid
			if s.clientFail() {
				s.End = EndClientSaturated
				return s, nil
			}
		}
	}
	s.End = EndResolved
	return s, nil
}

// clientFail reports whether the failing level was measured by a saturated
// load generator.
func (s *Search) clientFail() bool {
	st, ok := s.step(s.Fail)
	return ok && st.Point.ClientSaturated != ""
}

// step returns the last run at level lv, if any.
func (s *Search) step(lv float64) (Step, bool) {
	for i := len(s.Steps) - 1; i >= 0; i-- {
		if s.Steps[i].Point.Level == lv && !s.Steps[i].Point.Partial {
			return s.Steps[i], true
		}
	}
	return Step{}, false
}

// failText is "13 fails: <first missed SLO>".
func (s *Search) failText() string {
	st, ok := s.step(s.Fail)
	if !ok {
		return ""
	}
	msg := "an SLO missed"
	if f := st.Point.Failed(); len(f) > 0 {
		msg = f[0].Message
		if len(f) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(f)-1)
		}
	}
	return fmt.Sprintf("%s fails: %s", s.Axis.Format(s.Fail), msg)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Answer is the one-line answer, e.g.
//
//	capacity: 12 concurrent streams (13 fails: continuity_ok_rate = 0.91, limit >= 0.99: missed by 0.08 (8.1%)); resolution 1; 8 runs
func (s *Search) Answer() string {
	runs := plural(s.Runs(), "run", "runs")
	res := s.Axis.Format(s.Resolution)
	switch s.End {
	case EndResolved:
		return fmt.Sprintf("capacity: %s (%s); resolution %s; %s", s.Axis.Quantity(s.Capacity), s.failText(), res, runs)
	case EndStartFails:
		if s.Axis == Concurrency && s.Start <= 1 {
			return fmt.Sprintf("capacity: none: even 1 concurrent stream misses an SLO (%s); %s", s.failText(), runs)
		}
		return fmt.Sprintf("capacity: below %s: the start level already misses an SLO (%s); lower the start level; %s",
			s.Axis.Quantity(s.Start), s.failText(), runs)
	case EndMaxLevel:
		return fmt.Sprintf("capacity: at least %s: every SLO held at the highest level searched; raise the maximum to search further; %s",
			s.Axis.Quantity(s.Capacity), runs)
	case EndClientSaturated:
		lower := "unknown"
		if s.Found {
			lower = "at least " + s.Axis.Quantity(s.Capacity)
		}
		return fmt.Sprintf("capacity: %s; not searched further: at %s the load generator was saturated, so that SLO miss (%s) may be the client's, not the server's; shard the load over processes or machines; %s",
			lower, s.Axis.Format(s.Fail), s.failText(), runs)
	case EndMaxRuns:
		if math.IsNaN(s.Fail) {
			if !s.Found {
				return fmt.Sprintf("capacity: unknown: no run was allowed (%s)", runs)
			}
			return fmt.Sprintf("capacity: at least %s: no level failed within the budget of %s", s.Axis.Quantity(s.Capacity), runs)
		}
		return fmt.Sprintf("capacity: at least %s and below %s (%s); resolution %s not reached within the budget of %s",
			s.Axis.Quantity(s.Capacity), s.Axis.Format(s.Fail), s.failText(), res, runs)
	}
	if s.Found {
		return fmt.Sprintf("capacity: search interrupted after %s; at least %s so far", runs, s.Axis.Quantity(s.Capacity))
	}
	return fmt.Sprintf("capacity: search interrupted after %s, before any level passed", runs)
}

// Margins are the lines that follow the answer: how close the capacity
// level came to its tightest SLO, and every SLO the failing level missed.
func (s *Search) Margins() []string {
	var out []string
	if s.Found {
		if st, ok := s.step(s.Capacity); ok {
			if t, ok := st.Point.Tightest(); ok {
				out = append(out, fmt.Sprintf("margin at %s (highest passing): tightest SLO %s", s.Axis.Format(s.Capacity), t.Message))
			}
		}
	}
	if !math.IsNaN(s.Fail) {
		if st, ok := s.step(s.Fail); ok {
			var msgs []string
			for _, r := range st.Point.Failed() {
				msgs = append(msgs, r.Message)
			}
			if len(msgs) > 0 {
				out = append(out, fmt.Sprintf("at %s (lowest failing): %s", s.Axis.Format(s.Fail), strings.Join(msgs, "; ")))
			}
		}
	}
	return out
}
