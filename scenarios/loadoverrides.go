package scenarios

import (
	"errors"
	"fmt"
	"time"

	"github.com/omnibench/omnibench/load"
)

// check refuses a load flag outside its bounds, naming the flag and the
// value given. Only given settings are checked: an absent one is a default.
func (l LoadOverrides) check() error {
	type bound struct {
		flag  string
		given bool
		value any
		bad   bool
		want  string
	}
	var bounds []bound
	if l.Concurrency != nil {
		bounds = append(bounds, bound{"concurrency", true, *l.Concurrency, *l.Concurrency < 1, "at least 1"})
	}
	if l.Requests != nil {
		bounds = append(bounds, bound{"requests", true, *l.Requests, *l.Requests < 0, "0 or more (0 = no count bound)"})
	}
	if l.Warmup != nil {
		bounds = append(bounds, bound{"warmup", true, *l.Warmup, *l.Warmup < 0, "0 or more"})
	}
	if l.Duration != nil {
		bounds = append(bounds, bound{"duration", true, *l.Duration, *l.Duration < 0, "0 or more"})
	}
	bounds = append(bounds,
		bound{"max-inflight", true, l.MaxInflight, l.MaxInflight < 0, "0 or more (0 = no cap)"},
		bound{"ramp-up", true, l.RampUp, l.RampUp < 0, "0 or more"})
	for _, b := range bounds {
		if b.bad {
			return fmt.Errorf("--%s %v: must be %s", b.flag, b.value, b.want)
		}
	}
	return nil
}

// config is the run's load: the flags' settings over the scenario's
// defaults over the command's.
func (l LoadOverrides) config(sc LoadDefaults) (load.Config, error) {
	if err := l.check(); err != nil {
		return load.Config{}, err
	}
	lc := load.Config{
		Concurrency: sc.Concurrency,
		Rate:        sc.Rate,
		RateStart:   l.RateStart,
		RampUp:      l.RampUp,
		Arrival:     l.Arrival,
		Burstiness:  l.Burstiness,
		Duration:    sc.Duration,
		Warmup:      sc.Warmup,
		MaxInflight: l.MaxInflight,
		Seed:        l.Seed,
		Grace:       l.Grace,
	}
	if l.Concurrency != nil && *l.Concurrency > 0 {
		lc.Concurrency = *l.Concurrency
	} else if lc.Concurrency <= 0 {
		lc.Concurrency = DefaultConcurrency
	}
	if l.Rate != nil {
		lc.Rate = *l.Rate
	}
	if lc.Arrival == "" {
		lc.Arrival = sc.Arrival
	}
	if lc.Burstiness == 0 {
		lc.Burstiness = sc.Burstiness
	}
	if l.Warmup != nil {
		lc.Warmup = *l.Warmup
	}
	if err := l.bound(&lc, sc); err != nil {
		return lc, err
	}
	if lc.Rate > 0 && lc.Arrival == "" {
		lc.Arrival = load.Poisson
	}
	return lc, lc.Validate()
}

// bound sets what ends the run. A given bound (or a caller's preset, as
// ab's) replaces the scenario's bound of the same kind; a duration alone
// runs for the whole duration (the scenario's request count does not cut
// it short), stages run for their whole length, and a request count of 0
// is no count bound.
func (l LoadOverrides) bound(lc *load.Config, sc LoadDefaults) error {
	if l.Duration != nil {
		lc.Duration = *l.Duration
	}
	if l.Requests != nil {
		lc.Requests = *l.Requests
	}
	if l.Stages != "" {
		stages, err := load.ParseStages(l.Stages)
		if err != nil {
			return fmt.Errorf("--stages: %w", err)
		}
		if l.Concurrency != nil {
			return errors.New("--stages sets the workers over time: drop -c/--concurrency")
		}
		lc.Stages = stages
		var total time.Duration
		lc.Concurrency = 0
		for _, st := range stages {
			total += st.Duration
			lc.Concurrency = max(lc.Concurrency, st.Target) // the header's concurrency: the peak
		}
		if lc.Duration == 0 {
			lc.Duration = total // the stages bound the run (so -n is not defaulted)
		}
	}
	if lc.Requests == 0 && l.Stages == "" && l.Requests == nil && l.Duration == nil {
		lc.Requests = sc.Requests
	}
	if lc.Requests == 0 && lc.Duration == 0 {
		if l.Requests != nil {
			return errors.New("--requests 0 is no count bound: give --duration to bound the run")
		}
		lc.Requests = DefaultRequests
	}
	return nil
}
