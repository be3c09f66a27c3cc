package load

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Run issues arrivals per cfg and calls job for each, then waits for every
// job to return. It returns an error without running anything when cfg is
// invalid, and Stats plus an error wrapping ctx.Err() when ctx was cancelled
// during the run (see the package doc for the grace period).
func Run(ctx context.Context, cfg Config, job Job) (Stats, error) {
	return run(ctx, cfg, job, &realClock{})
}

// counters are the outcomes of one phase, updated by concurrent jobs.
type counters struct {
	started, completed, cancelled, ramp atomic.Int64
}

// runner holds what every phase of one run shares.
type runner struct {
	cfg    Config
	job    Job
	clk    clock
	jobCtx context.Context // detached from the run's ctx; cancelled after the grace period
}

func run(ctx context.Context, cfg Config, job Job, clk clock) (Stats, error) {
	if job == nil {
		return Stats{}, errors.New("load: nil job")
	}
	if err := cfg.Validate(); err != nil {
		return Stats{}, err
	}
	// Compute the schedule before warm-up so a bad configuration fails before
	// any request is sent.
	var sched Schedule
	if cfg.Open() {
		var err error
		if sched, err = NewSchedule(cfg); err != nil {
			return Stats{}, err
		}
		sched = cfg.Shard.Of(sched)
	}
	job, cfg.OnDrop = cfg.shardJob(job)
	cfg = cfg.shardPart()

	// Jobs must outlive an interruption by the grace period, so their
	// context keeps ctx's values but not its cancellation.
	jobCtx, cancelJobs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelJobs()
	stopGrace := watchGrace(ctx, cfg.Grace, abortOf(ctx), cancelJobs)
	r := &runner{cfg: cfg, job: job, clk: clk, jobCtx: jobCtx}

	st := Stats{Mode: cfg.Mode(), Planned: cfg.Requests, LateThreshold: cfg.lateThreshold(), TargetRate: cfg.Rate}
	if cfg.Open() {
		st.Planned = len(sched.Offsets)
	}
	if cfg.Warmup > 0 {
		var warm counters
		r.closedLoop(ctx, phase{start: clk.Now(), first: 0, count: cfg.Warmup, warmup: true, workers: cfg.warmupWorkers()}, &warm)
		st.WarmupStarted = int(warm.started.Load())
		st.WarmupCompleted = int(warm.completed.Load())
	}
	if ctx.Err() == nil {
		if cfg.Open() {
			r.openLoop(ctx, sched, &st)
		} else {
			var c counters
			start := r.begin(ctx, &st)
			duration := cfg.Duration
			if end := cfg.stagesEnd(); end > 0 && (duration == 0 || end < duration) {
				duration = end // the run ends with the last stage
			}
			r.closedLoop(ctx, phase{start: start, first: cfg.Warmup, count: cfg.Requests, duration: duration,
				workers: cfg.workers(), segments: cfg.segments()}, &c)
			st.Started = int(c.started.Load())
			st.Scheduled = st.Started
			st.Completed = int(c.completed.Load())
			st.Cancelled = int(c.cancelled.Load())
			st.RampStarted = int(c.ramp.Load())
			st.Elapsed = clk.Now().Sub(start)
			st.Window = st.Elapsed
		}
		st.AchievedRate = rate(st.Started, st.Window)
	}
	stopGrace()

	if err := ctx.Err(); err != nil {
		st.Interrupted = true
		return st, fmt.Errorf("load: run interrupted after %d of %d measured arrivals (%d warm-up): %w",
			st.Scheduled, st.Planned, st.WarmupStarted, err)
	}
	return st, nil
}

// watchGrace cancels the jobs' context grace after ctx is done, or at once
// when abort (WithAbort) is closed after that. The returned stop function
// ends the watcher and waits for it; call it once every job has returned.
func watchGrace(ctx context.Context, grace time.Duration, abort <-chan struct{}, cancelJobs context.CancelFunc) (stop func()) {
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-ctx.Done():
		case <-done:
			return
		}
		if grace <= 0 {
			cancelJobs()
			return
		}
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-t.C:
			cancelJobs()
		case <-abort:
			cancelJobs()
		case <-done:
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// call runs the job and files its outcome.
func (r *runner) call(a Arrival, c *counters) {
	r.job(r.jobCtx, a)
	if r.jobCtx.Err() != nil {
		c.cancelled.Add(1)
	} else {
		c.completed.Add(1)
	}
}

// phase is one closed-loop stretch of a run.
type phase struct {
	start    time.Time
	first    int           // Seq of the phase's first arrival
	count    int           // arrivals to issue; 0 = until duration
	duration time.Duration // 0 = until count
	warmup   bool
	workers  int
	// segments is the worker target over time (nil: every worker from the
	// start); see Config.segments.
	segments []segment
}

// workerClock is the clock one closed-loop worker sleeps on: the real clock
// keeps one timer per sleeper, so each worker gets its own.
func (r *runner) workerClock() clock {
	if _, ok := r.clk.(*realClock); ok {
		return &realClock{}
	}
	return r.clk
}

// closedLoop runs p.workers workers that each start jobs back to back until
// the phase's count or duration is reached or ctx is done. It returns when
// every worker (and so every job) has returned.
func (r *runner) closedLoop(ctx context.Context, p phase, c *counters) {
	var next atomic.Int64
	var wg sync.WaitGroup
	// Workers waiting for their ramp slot sleep on sleepCtx, which ends
	// with ctx or as soon as the count is used up, so that a count bound
	// reached early does not leave the run waiting for the ramp.
	sleepCtx, countDone := context.WithCancel(ctx)
	defer countDone()
	for k := range p.workers {
		active := workerIntervals(p.segments, k+1)
		wg.Go(func() {
			clk := r.workerClock()
			for ctx.Err() == nil {
				// Check time before claiming a sequence number, so a stop
				// leaves no gap in Seq.
				off := clk.Now().Sub(p.start)
				if p.duration > 0 && off >= p.duration {
					return
				}
				at, ok := nextActive(active, off)
				if !ok {
					return // ramped down for good
				}
				if at > off {
					if p.duration > 0 && at >= p.duration {
						return
					}
					if err := clk.SleepUntil(sleepCtx, p.start.Add(at)); err != nil {
						return
					}
					continue // re-check the stops after the sleep
				}
				i := int(next.Add(1) - 1)
				if p.count > 0 && i >= p.count {
					countDone()
					return
				}
				c.started.Add(1)
				a := Arrival{Seq: p.first + i, Warmup: p.warmup, Start: p.start, Intended: off, Launched: off}
				if a.Phase = phaseAt(p.segments, off); a.Phase == PhaseRamp {
					c.ramp.Add(1)
				}
				r.call(a, c)
			}
		})
	}
	wg.Wait()
}

// openLoop issues the schedule's arrivals on time from this one goroutine,
// each job in its own goroutine, then waits for every job.
func (r *runner) openLoop(ctx context.Context, sched Schedule, st *Stats) {
	var (
		c          counters
		inflight   atomic.Int64
		wg         sync.WaitGroup
		threshold  = st.LateThreshold
		lastLaunch time.Duration
	)
	st.Lags = make([]time.Duration, 0, len(sched.Offsets))
	start := r.begin(ctx, st)
	window := time.Duration(-1)
	for i, off := range sched.Offsets {
		// Sleep to an absolute time from the run start: oversleeping one
		// arrival does not delay the next.
		if err := r.clk.SleepUntil(ctx, start.Add(off)); err != nil || ctx.Err() != nil {
			window = r.clk.Now().Sub(start)
			break
		}
		launched := r.clk.Now().Sub(start)
		a := Arrival{Seq: r.cfg.Warmup + i, Start: start, Intended: off, Launched: launched}
		if off < sched.RampEnd {
			a.Phase = PhaseRamp
		}
		st.Scheduled++
		if r.cfg.MaxInflight > 0 && inflight.Load() >= int64(r.cfg.MaxInflight) {
			st.Dropped++
			if r.cfg.OnDrop != nil {
				r.cfg.OnDrop(a)
			}
			continue
		}
		inflight.Add(1)
		c.started.Add(1)
		if a.Phase == PhaseRamp {
			c.ramp.Add(1)
		}
		lag := a.Lag()
		st.Lags = append(st.Lags, lag)
		st.MaxLag = max(st.MaxLag, lag)
		if lag > threshold {
			st.Late++
		}
		lastLaunch = launched
		wg.Go(func() {
			defer inflight.Add(-1)
			r.call(a, &c)
		})
	}
	if window < 0 { // not interrupted: the whole schedule was issued
		window = max(sched.End, lastLaunch)
	}
	wg.Wait()
	st.Elapsed = r.clk.Now().Sub(start)
	st.Window = window
	st.Started = int(c.started.Load())
	st.Completed = int(c.completed.Load())
	st.Cancelled = int(c.cancelled.Load())
	st.RampStarted = int(c.ramp.Load())
}
