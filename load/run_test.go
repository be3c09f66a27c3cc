package load

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// seqRecorder collects the arrivals a job saw, safely across goroutines.
type seqRecorder struct {
	mu       sync.Mutex
	arrivals []Arrival
}

func (r *seqRecorder) add(a Arrival) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.arrivals = append(r.arrivals, a)
}

func (r *seqRecorder) sorted() []Arrival {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.arrivals)
	slices.SortFunc(out, func(a, b Arrival) int { return a.Seq - b.Seq })
	return out
}

func TestRunRejectsBadConfig(t *testing.T) {
	called := false
	_, err := Run(context.Background(), Config{Rate: 10}, func(context.Context, Arrival) { called = true })
	if err == nil {
		t.Fatal("no error for a run with neither requests nor duration")
	}
	if called {
		t.Error("job ran despite the invalid config")
	}
	if _, err := Run(context.Background(), Config{Concurrency: 1, Requests: 1}, nil); err == nil {
		t.Error("no error for a nil job")
	}
}

func TestConfigValidate(t *testing.T) {
	valid := []Config{
		{Concurrency: 1, Requests: 1},
		{Concurrency: 1, Duration: time.Second},
		{Rate: 1, Requests: 1},
		{Rate: 1, Arrival: Gamma, Burstiness: 0.3, Duration: time.Second},
		{Rate: 1, Arrival: Constant, Burstiness: 1, Requests: 1},
	}
	for _, c := range valid {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	invalid := []Config{
		{Requests: 1}, // closed loop without workers
		{Concurrency: -1, Rate: 1, Requests: 1},
		{Rate: -1, Requests: 1},
		{Rate: 1}, // no bound
		{Rate: 1, Arrival: "uniform", Requests: 1},
		{Rate: 1, Arrival: Poisson, Burstiness: 2, Requests: 1},
		{Rate: 1, Arrival: Gamma, Burstiness: -1, Requests: 1},
		{Rate: 1, Requests: 1, Warmup: -1},
		{Rate: 1, Requests: 1, MaxInflight: -1},
		{Rate: 1, Requests: 1, Grace: -time.Second},
		{Rate: 1, Requests: 1, LateThreshold: -time.Second},
		{Concurrency: 1, Requests: -1},
		{Concurrency: 1, Duration: -time.Second},
	}
	for _, c := range invalid {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestClosedLoopConcurrencyAndRequests(t *testing.T) {
	const workers, requests = 4, 200
	var inflight, peak atomic.Int64
	// The first `workers` jobs wait for each other, so the peak provably
	// reaches the worker count; the bound says it never exceeds it.
	var barrier sync.WaitGroup
	barrier.Add(workers)
	var rec seqRecorder
	st, err := Run(context.Background(), Config{Concurrency: workers, Requests: requests}, func(ctx context.Context, a Arrival) {
		n := inflight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		if a.Seq < workers {
			barrier.Done()
			barrier.Wait()
		}
		rec.add(a)
		inflight.Add(-1)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := peak.Load(); got != workers {
		t.Errorf("peak in-flight %d, want %d", got, workers)
	}
	if st.Started != requests || st.Completed != requests || st.Scheduled != requests || st.Planned != requests {
		t.Errorf("stats %+v, want %d planned, scheduled, started, completed", st, requests)
	}
	for i, a := range rec.sorted() {
		if a.Seq != i || a.Warmup || a.Intended != a.Launched || a.Lag() != 0 {
			t.Fatalf("arrival %d = %+v, want seq %d, not warm-up, no lag", i, a, i)
		}
	}
	if st.Mode != "closed" || st.Lags != nil || st.Late != 0 || st.Dropped != 0 {
		t.Errorf("closed-loop stats %+v", st)
	}
	if st.Window != st.Elapsed || st.AchievedRate <= 0 {
		t.Errorf("window %v, elapsed %v, rate %v", st.Window, st.Elapsed, st.AchievedRate)
	}
}

func TestClosedLoopDurationStop(t *testing.T) {
	const d = 50 * time.Millisecond
	var rec seqRecorder
	var jobs atomic.Int64
	st, err := Run(context.Background(), Config{Concurrency: 2, Duration: d}, func(ctx context.Context, a Arrival) {
		rec.add(a)
		jobs.Add(1)
	})
	if err != nil {
		t.Fatal(err)
	}
	arrivals := rec.sorted()
	if st.Started == 0 || st.Started != len(arrivals) || st.Completed != st.Started {
		t.Fatalf("started %d, completed %d, jobs ran %d", st.Started, st.Completed, len(arrivals))
	}
	for i, a := range arrivals {
		// A worker starts a job only when the duration has not yet passed.
		if a.Seq != i || a.Launched >= d {
			t.Fatalf("arrival %+v: want seq %d launched before %v", a, i, d)
		}
	}
	if st.Planned != 0 {
		t.Errorf("planned %d, want 0 for a duration-only closed loop", st.Planned)
	}
}

func TestOpenLoopRequestsStop(t *testing.T) {
	cfg := Config{Rate: 100_000, Arrival: Constant, Requests: 50}
	sched, err := NewSchedule(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var rec seqRecorder
	st, err := Run(context.Background(), cfg, func(ctx context.Context, a Arrival) { rec.add(a) })
	if err != nil {
		t.Fatal(err)
	}
	if st.Started != 50 || st.Completed != 50 || st.Scheduled != 50 || st.Dropped != 0 || len(st.Lags) != 50 {
		t.Fatalf("stats %+v", st)
	}
	for i, a := range rec.sorted() {
		if a.Seq != i || a.Intended != sched.Offsets[i] || a.Lag() < 0 {
			t.Fatalf("arrival %d = %+v, want intended %v and lag >= 0", i, a, sched.Offsets[i])
		}
	}
	if st.Mode != "open" || st.TargetRate != 100_000 {
		t.Errorf("mode %q, target %v", st.Mode, st.TargetRate)
	}
}

// With a fake clock the open loop is exact: every arrival at its offset,
// lags as programmed, the rate as scheduled.
func TestOpenLoopLagAndLate(t *testing.T) {
	ms := time.Millisecond
	clk := newFakeClock(0, 20*ms, 5*ms, 30*ms, 10*ms)
	cfg := Config{Rate: 100, Arrival: Constant, Requests: 5, LateThreshold: 10 * ms}
	var rec seqRecorder
	st, err := run(context.Background(), cfg, func(ctx context.Context, a Arrival) { rec.add(a) }, clk)
	if err != nil {
		t.Fatal(err)
	}
	// Arrival i is due at 10i ms; the clock then oversleeps by the
	// programmed amount. Each sleep targets the absolute offset, so lag does
	// not carry over: arrival 2 (due 20 ms) finds the clock at 30 ms (10 ms
	// late from arrival 1's oversleep) and oversleeps 5 ms more.
	wantLags := []time.Duration{0, 20 * ms, 15 * ms, 35 * ms, 35 * ms}
	if !slices.Equal(st.Lags, wantLags) {
		t.Errorf("lags %v, want %v", st.Lags, wantLags)
	}
	for i, a := range rec.sorted() {
		if a.Lag() != wantLags[i] || a.Intended != time.Duration(i)*10*ms {
			t.Errorf("arrival %+v, want intended %v lag %v", a, time.Duration(i)*10*ms, wantLags[i])
		}
	}
	if st.Late != 4 || st.MaxLag != 35*ms {
		t.Errorf("late %d max lag %v, want 4 and 35ms", st.Late, st.MaxLag)
	}
	// The last start (75 ms) is after the schedule's end (50 ms).
	if st.Window != 75*ms || st.AchievedRate != 5/0.075 {
		t.Errorf("window %v rate %v, want 75ms and %v", st.Window, st.AchievedRate, 5/0.075)
	}
}

func TestOpenLoopRateExact(t *testing.T) {
	st, err := run(context.Background(), Config{Rate: 100, Arrival: Constant, Requests: 10}, func(context.Context, Arrival) {}, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	if st.Window != 100*time.Millisecond || st.AchievedRate != 100 || st.Late != 0 || st.MaxLag != 0 {
		t.Errorf("stats %+v, want window 100ms, rate 100, no lag", st)
	}
}

func TestOpenLoopDurationStop(t *testing.T) {
	const d = 50 * time.Millisecond
	var rec seqRecorder
	st, err := run(context.Background(), Config{Rate: 1000, Arrival: Constant, Duration: d}, func(ctx context.Context, a Arrival) { rec.add(a) }, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	if st.Planned != 50 || st.Started != 50 || st.Completed != 50 || st.Window != d {
		t.Errorf("stats %+v, want 50 started in a 50ms window", st)
	}
	for _, a := range rec.sorted() {
		if a.Intended >= d {
			t.Errorf("arrival %+v at or after the duration", a)
		}
	}
}

func TestOpenLoopDropsAtMaxInflight(t *testing.T) {
	const requests, maxInflight = 10, 2
	release := make(chan struct{})
	var dropped []int // appended on the scheduling goroutine only
	var started atomic.Int64
	cfg := Config{
		Rate: 1e6, Arrival: Constant, Requests: requests, MaxInflight: maxInflight,
		OnDrop: func(a Arrival) {
			dropped = append(dropped, a.Seq)
			if len(dropped) == requests-maxInflight {
				close(release) // every arrival has been handled: let the blocked jobs go
			}
		},
	}
	st, err := Run(context.Background(), cfg, func(ctx context.Context, a Arrival) {
		started.Add(1)
		<-release
	})
	if err != nil {
		t.Fatal(err)
	}
	// The first two jobs block until the last arrival is handled, so every
	// other arrival finds the cap reached.
	if st.Started != maxInflight || st.Dropped != requests-maxInflight || st.Scheduled != requests || started.Load() != maxInflight {
		t.Errorf("stats %+v, want %d started and %d dropped", st, maxInflight, requests-maxInflight)
	}
	if want := []int{2, 3, 4, 5, 6, 7, 8, 9}; !slices.Equal(dropped, want) {
		t.Errorf("dropped seqs %v, want %v", dropped, want)
	}
	if len(st.Lags) != maxInflight {
		t.Errorf("%d lags, want one per started job", len(st.Lags))
	}
}

func TestWarmup(t *testing.T) {
	for _, cfg := range []Config{
		{Concurrency: 2, Requests: 5, Warmup: 3},
		{Rate: 1e6, Arrival: Constant, Requests: 5, Warmup: 3},
	} {
		t.Run(cfg.Mode(), func(t *testing.T) {
			var warmDone atomic.Int64
			var rec seqRecorder
			var early atomic.Bool
			st, err := Run(context.Background(), cfg, func(ctx context.Context, a Arrival) {
				rec.add(a)
				if a.Warmup {
					warmDone.Add(1)
				} else if warmDone.Load() != 3 {
					early.Store(true)
				}
			})
			if err != nil {
				t.Fatal(err)
			}
			if early.Load() {
				t.Error("a measured job started before warm-up finished")
			}
			arrivals := rec.sorted()
			if len(arrivals) != 8 {
				t.Fatalf("%d jobs ran, want 8", len(arrivals))
			}
			var warmStart, measuredStart time.Time
			for i, a := range arrivals {
				if a.Seq != i || a.Warmup != (i < 3) {
					t.Errorf("arrival %+v: want seq %d warmup %v", a, i, i < 3)
				}
				if a.Warmup {
					warmStart = a.Start
				} else {
					measuredStart = a.Start
				}
			}
			if !measuredStart.After(warmStart) {
				t.Error("the measured phase did not get a fresh start")
			}
			if cfg.Open() && arrivals[3].Intended != 0 {
				t.Errorf("first measured arrival intended at %v, want 0", arrivals[3].Intended)
			}
			if st.Started != 5 || st.Completed != 5 || st.WarmupStarted != 3 || st.WarmupCompleted != 3 {
				t.Errorf("stats %+v, want 5 measured and 3 warm-up", st)
			}
		})
	}
}

// After an interruption the grace period expires: blocked jobs see their
// context cancelled, and Run returns with the jobs counted as cancelled.
func TestInterruptGraceExpires(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, cfg := range []Config{
		{Concurrency: 2, Requests: 100, Grace: time.Millisecond},
		{Rate: 1e6, Arrival: Constant, Requests: 2, Grace: 0},
	} {
		t.Run(cfg.Mode(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var started sync.WaitGroup
			started.Add(2)
			go func() {
				started.Wait()
				cancel()
			}()
			st, err := Run(ctx, cfg, func(jobCtx context.Context, a Arrival) {
				started.Done()
				<-jobCtx.Done()
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if !st.Interrupted || st.Started != 2 || st.Cancelled != 2 || st.Completed != 0 {
				t.Errorf("stats %+v, want 2 started and cancelled", st)
			}
		})
	}
}

// Within the grace period, running jobs keep a live context and finish.
func TestInterruptGraceLetsJobsFinish(t *testing.T) {
	defer goleak.VerifyNone(t)
	for _, cfg := range []Config{
		{Concurrency: 2, Requests: 100, Grace: time.Hour},
		// 1/s: the third arrival is due in 1 s, so the scheduler is
		// sleeping when the interruption comes and must wake for it.
		{Rate: 1, Arrival: Constant, Requests: 100, MaxInflight: 1, Grace: time.Hour},
	} {
		t.Run(cfg.Mode(), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			release := make(chan struct{})
			started := make(chan struct{}, 100)
			var live atomic.Int64
			n := min(max(cfg.Concurrency, 1), 2)
			if cfg.Open() {
				n = 1
			}
			go func() {
				for range n {
					<-started
				}
				cancel()
				close(release)
			}()
			st, err := Run(ctx, cfg, func(jobCtx context.Context, a Arrival) {
				started <- struct{}{}
				<-release
				if jobCtx.Err() == nil {
					live.Add(1)
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if st.Started != n || st.Completed != n || st.Cancelled != 0 || live.Load() != int64(n) {
				t.Errorf("stats %+v, live %d, want %d started and completed with live contexts", st, live.Load(), n)
			}
		})
	}
}

func TestInterruptDuringWarmup(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var measured atomic.Int64
	st, err := Run(ctx, Config{Concurrency: 1, Requests: 5, Warmup: 3}, func(jobCtx context.Context, a Arrival) {
		if !a.Warmup {
			measured.Add(1)
		}
		cancel()
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if st.WarmupStarted != 1 || st.Started != 0 || measured.Load() != 0 {
		t.Errorf("stats %+v, want 1 warm-up job and no measured phase", st)
	}
}

func TestJobContextKeepsValues(t *testing.T) {
	type key struct{}
	ctx := context.WithValue(context.Background(), key{}, "v")
	var got atomic.Value
	if _, err := Run(ctx, Config{Concurrency: 1, Requests: 1}, func(jobCtx context.Context, a Arrival) {
		got.Store(jobCtx.Value(key{}))
	}); err != nil {
		t.Fatal(err)
	}
	if got.Load() != "v" {
		t.Errorf("job context value %v, want v", got.Load())
	}
}
