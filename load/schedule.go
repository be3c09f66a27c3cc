package load

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"gonum.org/v1/gonum/stat/distuv"
)

// Schedule is the precomputed arrival plan of an open loop's measured phase.
type Schedule struct {
	// Offsets are the intended start times of the measured arrivals, from the
	// measured run start, non-decreasing; the first is 0.
	Offsets []time.Duration
	// End closes the arrival window: the offset the next arrival would have
	// had, capped at Config.Duration. Offered rate = len(Offsets) / End.
	End time.Duration
	// RampEnd is the end of the rate ramp (Config.RampUp, 0 without one):
	// arrivals before it are marked PhaseRamp.
	RampEnd time.Duration
}

// pcgStream is the second PCG word. It is fixed so that the schedule depends
// on Config.Seed alone; changing it changes every seeded schedule.
const pcgStream = 0x6f6d6e6962656e63 // "omnibenc"

// NewSchedule computes the measured schedule of an open-loop configuration:
// Requests arrivals, or every arrival before Duration, whichever is fewer.
// The same Config always gives the same Schedule.
func NewSchedule(cfg Config) (Schedule, error) {
	if err := cfg.Validate(); err != nil {
		return Schedule{}, err
	}
	if !cfg.Open() {
		return Schedule{}, fmt.Errorf("load: a schedule needs rate > 0 (open loop)")
	}
	// Refuse before allocating when a Duration-only run is certain to be too
	// long; the loop below also stops at MaxArrivals for random overshoot.
	expected := cfg.Rate * cfg.Duration.Seconds()
	if ramp, ok := cfg.rateRamp(); ok {
		expected = ramp.integral(cfg.Duration.Seconds())
	}
	if cfg.Requests == 0 && expected > MaxArrivals {
		return Schedule{}, fmt.Errorf("load: rate %v/s over %v needs about %.0f arrivals, more than the limit of %d; lower the rate or the duration, or set requests",
			cfg.Rate, cfg.Duration, expected, MaxArrivals)
	}
	capacity := cfg.Requests
	if capacity == 0 || (cfg.Duration > 0 && expected < float64(capacity)) {
		capacity = int(min(expected*1.05+16, MaxArrivals))
	}
	offsets := make([]time.Duration, 0, capacity)

	at := newOffsets(cfg)
	for i := 0; ; i++ {
		off, err := at(i)
		if err != nil {
			return Schedule{}, fmt.Errorf("load: arrival %d: %w", i, err)
		}
		if (cfg.Requests > 0 && i == cfg.Requests) || (cfg.Duration > 0 && off >= cfg.Duration) {
			end := off
			if cfg.Duration > 0 {
				end = min(end, cfg.Duration)
			}
			return Schedule{Offsets: offsets, End: end, RampEnd: cfg.RampUp}, nil
		}
		if i == MaxArrivals {
			return Schedule{}, fmt.Errorf("load: schedule exceeds %d arrivals before reaching duration %v; lower the rate or the duration, or set requests",
				MaxArrivals, cfg.Duration)
		}
		offsets = append(offsets, off)
	}
}

// newOffsets returns the offset of arrival i, to be called with i = 0, 1, 2...
// in order. Offsets are computed in float seconds from the run start and
// rounded to the nanosecond individually, so rounding never accumulates.
func newOffsets(cfg Config) func(i int) (time.Duration, error) {
	if ramp, ok := cfg.rateRamp(); ok {
		return rampOffsets(cfg, ramp)
	}
	rate := cfg.Rate
	if cfg.arrival() == Constant {
		// i/R directly rather than a running sum of 1/R: exact for every i.
		return func(i int) (time.Duration, error) { return seconds(float64(i) / rate) }
	}
	gap := newGaps(cfg.arrival(), rate, cfg.shape(), cfg.Seed)
	var t float64
	return func(i int) (time.Duration, error) {
		if i > 0 {
			t += gap()
		}
		return seconds(t)
	}
}

// newGaps returns a generator of random inter-arrival gaps in seconds, with
// mean 1/rate, seeded by seed.
func newGaps(arrival string, rate, shape float64, seed int64) func() float64 {
	src := rand.NewPCG(uint64(seed), pcgStream)
	if arrival == Poisson {
		rng := rand.New(src)
		return func() float64 { return rng.ExpFloat64() / rate }
	}
	// Gamma(shape k, rate k·R): mean 1/R, coefficient of variation 1/sqrt(k).
	g := distuv.Gamma{Alpha: shape, Beta: shape * rate, Src: src}
	return g.Rand
}

// seconds converts float seconds to a Duration, rounding to the nanosecond.
func seconds(s float64) (time.Duration, error) {
	ns := math.Round(s * 1e9)
	if ns >= math.MaxInt64 || math.IsNaN(ns) {
		return 0, fmt.Errorf("offset %vs overflows a time.Duration", s)
	}
	return time.Duration(ns), nil
}

// rateRamp is the open loop's rate ramp, if it has one.
func (c Config) rateRamp() (rateRamp, bool) {
	if !c.Open() || c.RampUp <= 0 {
		return rateRamp{}, false
	}
	return rateRamp{r0: c.RateStart, r1: c.Rate, t: c.RampUp.Seconds()}, true
}

// rampOffsets is newOffsets under a rate ramp: the arrival process is
// generated at rate 1 (operational time s, the same seeded gaps) and each
// arrival is moved to the real offset at which the ramp's integral reaches
// s. A constant process then puts arrival i exactly where i arrivals are
// expected; Poisson and gamma keep their shape relative to the local rate.
func rampOffsets(cfg Config, ramp rateRamp) func(i int) (time.Duration, error) {
	if cfg.arrival() == Constant {
		return func(i int) (time.Duration, error) { return seconds(ramp.at(float64(i))) }
	}
	gap := newGaps(cfg.arrival(), 1, cfg.shape(), cfg.Seed)
	var s float64
	return func(i int) (time.Duration, error) {
		if i > 0 {
			s += gap()
		}
		return seconds(ramp.at(s))
	}
}
