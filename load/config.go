package load

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Arrival processes of an open loop.
const (
	Constant = "constant" // one arrival every 1/Rate
	Poisson  = "poisson"  // exponential gaps with mean 1/Rate
	Gamma    = "gamma"    // gamma gaps, shape Burstiness, mean 1/Rate
)

// Arrivals lists the arrival process names in documentation order.
func Arrivals() []string { return []string{Constant, Poisson, Gamma} }

// DefaultLateThreshold is the lag beyond which an open-loop arrival counts as
// late when Config.LateThreshold is 0. 10 ms is well above Go's timer error on
// an idle machine and well below the latencies being measured, so a late count
// above zero means the load generator itself fell behind.
const DefaultLateThreshold = 10 * time.Millisecond

// MaxArrivals bounds a precomputed open-loop schedule (80 MB of offsets). A
// Duration-only run whose Rate × Duration would need more is refused.
const MaxArrivals = 10_000_000

// Config describes one run. The zero value is not valid: set Concurrency
// (closed loop) or Rate (open loop), and Requests or Duration.
type Config struct {
	Concurrency int           // closed loop: workers; open loop: warm-up workers only
	Rate        float64       // arrivals per second; 0 = closed loop
	Arrival     string        // Constant, Poisson or Gamma; "" = Poisson (open loop only)
	Burstiness  float64       // gamma shape; 0 = 1. Constant and Poisson accept only 0 or 1
	Seed        int64         // seeds the schedule; equal seeds give equal schedules
	Requests    int           // measured arrivals; 0 = no count bound
	Duration    time.Duration // measured-phase length; 0 = no time bound
	Warmup      int           // warm-up arrivals before the measured phase
	MaxInflight int           // open loop: cap on running jobs, arrivals beyond it are dropped; 0 = no cap
	Grace       time.Duration // after ctx is cancelled, how long running jobs keep their context

	// RampUp: in a closed loop, workers start evenly over it instead of at
	// once; in an open loop, the rate rises linearly from RateStart to Rate
	// over it. Arrivals in it are marked PhaseRamp.
	RampUp time.Duration
	// RateStart is an open loop's rate at offset 0 of a ramp (RampUp > 0);
	// 0 ramps up from nothing. A rate ramp down (RateStart > Rate) is valid.
	RateStart float64
	// Stages is a closed loop's worker target over time (k6 stages): the
	// run ends with the last stage, Concurrency is ignored and the peak
	// target sets the worker count. Arrivals in a stage whose target moves
	// are marked PhaseRamp.
	Stages []Stage

	// LateThreshold is the lag above which an open-loop arrival counts as
	// late; 0 means DefaultLateThreshold.
	LateThreshold time.Duration
	// OnDrop, when set, is called for each dropped arrival, synchronously on
	// the scheduling goroutine: it must return quickly (record and go).
	OnDrop func(a Arrival)

	// Shard makes this run one part of a test split over several processes
	// (see Shard); the zero value runs the whole test.
	Shard Shard
	// StartAt, when set, is the wall-clock start of the measured phase, the
	// same for every shard: the run warms up, sleeps until StartAt and
	// measures intended offsets from it (Stats.StartLate says how late it
	// began when StartAt had passed). Shards on different machines agree
	// only as well as the machines' clocks do (NTP-synchronised nodes).
	StartAt time.Time
	// OnBegin, when set, is called once right before the first measured
	// arrival is due, with Stats.StartLate (0 without StartAt).
	OnBegin func(late time.Duration)
}

// Open reports whether the configuration is an open loop.
func (c Config) Open() bool { return c.Rate > 0 }

// Mode is "open" or "closed", the names results.Header.Mode uses.
func (c Config) Mode() string {
	if c.Open() {
		return "open"
	}
	return "closed"
}

// Validate reports every invalid field, naming it.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("load: "+format, args...)) }

	if math.IsNaN(c.Rate) || math.IsInf(c.Rate, 0) || c.Rate < 0 {
		bad("rate must be a finite number >= 0 (0 = closed loop), got %v", c.Rate)
	}
	if c.Concurrency < 0 {
		bad("concurrency must be >= 0, got %d", c.Concurrency)
	} else if c.Rate == 0 && c.Concurrency == 0 && len(c.Stages) == 0 {
		bad("concurrency must be >= 1 in a closed loop (rate 0)")
	}
	switch c.Arrival {
	case "", Constant, Poisson, Gamma:
	default:
		bad("arrival must be one of %v, got %q", Arrivals(), c.Arrival)
	}
	switch {
	case math.IsNaN(c.Burstiness) || math.IsInf(c.Burstiness, 0) || c.Burstiness < 0:
		bad("burstiness must be a finite number > 0 (0 = 1), got %v", c.Burstiness)
	case c.Arrival != Gamma && c.Burstiness != 0 && c.Burstiness != 1:
		bad("burstiness %v needs arrival %q (arrival is %q)", c.Burstiness, Gamma, c.arrival())
	}
	if c.Requests < 0 {
		bad("requests must be >= 0, got %d", c.Requests)
	}
	if c.Duration < 0 {
		bad("duration must be >= 0, got %v", c.Duration)
	}
	if c.Requests == 0 && c.Duration == 0 {
		bad("set requests or duration (or both) to bound the run")
	}
	if c.Open() && c.Requests > MaxArrivals {
		bad("requests %d exceed the open-loop schedule limit of %d", c.Requests, MaxArrivals)
	}
	// The schedule refuses this too, but only once the run starts: a
	// configuration that cannot be scheduled is unusable input.
	if expected := c.Rate * c.Duration.Seconds(); c.Open() && c.Requests == 0 && expected > MaxArrivals {
		bad("rate %v/s over %v needs about %.0f arrivals, more than the limit of %d; lower the rate or the duration, or set requests",
			c.Rate, c.Duration, expected, MaxArrivals)
	}
	if c.Warmup < 0 {
		bad("warmup must be >= 0, got %d", c.Warmup)
	}
	if c.MaxInflight < 0 {
		bad("max inflight must be >= 0 (0 = no cap), got %d", c.MaxInflight)
	}
	if c.Grace < 0 {
		bad("grace must be >= 0, got %v", c.Grace)
	}
	if c.RampUp < 0 {
		bad("ramp-up must be >= 0, got %v", c.RampUp)
	}
	switch {
	case math.IsNaN(c.RateStart) || math.IsInf(c.RateStart, 0) || c.RateStart < 0:
		bad("ramp start rate must be a finite number >= 0, got %v", c.RateStart)
	case c.RateStart > 0 && !c.Open():
		bad("a ramp start rate (%v) needs an open loop (rate > 0)", c.RateStart)
	case c.RateStart > 0 && c.RampUp == 0:
		bad("a rate range %v:%v needs a ramp-up duration to move over", c.RateStart, c.Rate)
	}
	if len(c.Stages) > 0 {
		if c.Open() {
			bad("stages drive a closed loop's workers; an open loop ramps its rate with a rate range and ramp-up")
		}
		if c.RampUp > 0 {
			bad("set ramp-up or stages, not both (a stage list starts with its own ramp)")
		}
		if c.Shard.Sharded() {
			bad("stages are not split over shards; give each shard its own stage list, or use --ramp-up")
		}
		peak := 0
		for i, st := range c.Stages {
			if st.Duration <= 0 || st.Target < 0 {
				bad("stage %d: duration %v must be > 0 and target %d >= 0", i+1, st.Duration, st.Target)
			}
			peak = max(peak, st.Target)
		}
		if peak == 0 {
			bad("stages %s never start a worker: some target must be >= 1", FormatStages(c.Stages))
		}
	}
	if c.LateThreshold < 0 {
		bad("late threshold must be >= 0 (0 = %v), got %v", DefaultLateThreshold, c.LateThreshold)
	}
	errs = append(errs, c.shardErrors()...)
	return errors.Join(errs...)
}

// arrival is the effective arrival process name.
func (c Config) arrival() string {
	if c.Arrival == "" {
		return Poisson
	}
	return c.Arrival
}

// shape is the effective gamma shape.
func (c Config) shape() float64 {
	if c.Burstiness == 0 {
		return 1
	}
	return c.Burstiness
}

func (c Config) lateThreshold() time.Duration {
	if c.LateThreshold == 0 {
		return DefaultLateThreshold
	}
	return c.LateThreshold
}

// workers is the closed loop's worker count: the peak stage target with
// stages, else Concurrency.
func (c Config) workers() int {
	if len(c.Stages) == 0 {
		return c.Concurrency
	}
	peak := 0
	for _, s := range c.Stages {
		peak = max(peak, s.Target)
	}
	return peak
}

// PeakConcurrency is the most requests the load can have in flight at once,
// which is how many connections the client needs: the closed loop's
// workers (the peak stage target with stages), the open loop's MaxInflight.
// 0 means unbounded (an open loop without MaxInflight, whose concurrency is
// set by the server's latency). A shard's is its part of the test's.
func (c Config) PeakConcurrency() int {
	c = c.shardPart()
	if c.Open() {
		return c.MaxInflight
	}
	return max(c.workers(), c.warmupWorkers())
}

// warmupWorkers is how many warm-up jobs run at once.
func (c Config) warmupWorkers() int {
	n := max(c.workers(), 1)
	if c.Open() && c.MaxInflight > 0 {
		n = min(n, c.MaxInflight)
	}
	return n
}

// StoppedByCount reports whether a run with both bounds (Requests and
// Duration) ended because it reached Requests before Duration passed, so the
// caller can say the run was shorter than asked. st is the run's Stats.
func (c Config) StoppedByCount(st Stats) bool {
	if c.Requests == 0 || c.Duration == 0 || st.Interrupted || st.Scheduled < c.Requests {
		return false
	}
	// A closed loop checks the time before claiming each request: reaching
	// the count means the time had not run out. An open-loop schedule holds
	// Requests arrivals whether or not they fill the duration.
	return !c.Open() || st.Window < c.Duration
}
