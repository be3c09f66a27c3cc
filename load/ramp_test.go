package load

import (
	"context"
	"math"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestParseStages(t *testing.T) {
	got, err := ParseStages("30s:100, 2m:100,30s:0")
	want := []Stage{{30 * time.Second, 100}, {2 * time.Minute, 100}, {30 * time.Second, 0}}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseStages: %v, %v; want %v", got, err, want)
	}
	if s := FormatStages(got); s != "30s:100,2m0s:100,30s:0" {
		t.Errorf("FormatStages: %q", s)
	}
	for _, bad := range []string{"", "30s", "0s:10", "-1s:10", "30s:-1", "30s:x", "x:10", "30s:10,,1m:0"} {
		if _, err := ParseStages(bad); err == nil {
			t.Errorf("ParseStages(%q) accepted it", bad)
		}
	}
}

func TestRampConfigValidate(t *testing.T) {
	valid := []Config{
		{Concurrency: 4, Requests: 4, RampUp: time.Second},
		{Stages: []Stage{{time.Second, 3}, {time.Second, 0}}, Duration: 2 * time.Second},
		{Rate: 20, RateStart: 1, RampUp: time.Minute, Duration: time.Minute},
		{Rate: 20, RampUp: time.Minute, Requests: 10}, // from 0
		{Rate: 1, RateStart: 20, RampUp: time.Minute, Requests: 10},
	}
	for _, c := range valid {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	invalid := []Config{
		{Concurrency: 1, Requests: 1, RampUp: -time.Second},
		{Concurrency: 1, Requests: 1, RateStart: 2},                                                  // closed loop
		{Rate: 20, RateStart: 1, Requests: 1},                                                        // range without ramp
		{Rate: 20, RateStart: math.NaN(), RampUp: time.Second, Requests: 1},                          // NaN
		{Rate: 20, Stages: []Stage{{time.Second, 1}}, Requests: 1},                                   // stages in an open loop
		{Stages: []Stage{{time.Second, 1}}, RampUp: time.Second, Requests: 1},                        // both
		{Stages: []Stage{{time.Second, 0}}, Requests: 1},                                             // never a worker
		{Stages: []Stage{{0, 2}}, Requests: 1},                                                       // zero duration
		{Stages: []Stage{{time.Second, -2}, {time.Second, 2}}, Duration: 2 * time.Second},            // negative
		{Stages: []Stage{{time.Second, 4}}, Duration: time.Second, Shard: Shard{Index: 0, Count: 2}}, // sharded
	}
	for _, c := range invalid {
		if err := c.Validate(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
}

func TestPeakConcurrency(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want int
	}{
		{Config{Concurrency: 2000, Requests: 1}, 2000},
		{Config{Stages: []Stage{{time.Second, 10}, {time.Second, 300}, {time.Second, 0}}, Duration: time.Second}, 300},
		{Config{Rate: 5, MaxInflight: 64, Requests: 1}, 64},
		{Config{Rate: 5, Requests: 1}, 0},
		// A shard's part: arrivals k with k mod 4 = 1 of 10 workers (1, 5, 9).
		{Config{Concurrency: 10, Requests: 10, Shard: Shard{Index: 1, Count: 4}}, 3},
		{Config{Rate: 5, MaxInflight: 64, Requests: 8, Shard: Shard{Index: 0, Count: 4}}, 16},
	} {
		if got := tc.cfg.PeakConcurrency(); got != tc.want {
			t.Errorf("%+v: peak %d, want %d", tc.cfg, got, tc.want)
		}
	}
}

// TestWorkerIntervals checks the worker start and stop offsets against
// hand-computed values: a ramp-up starts worker i (0-based) at i*R/N; a
// k6 stage list 30s:100,2m:100,30s:0 starts worker k (1-based) at
// 30s*(k-1)/100 and stops it at 150s + 30s*(101-k)/100.
func TestWorkerIntervals(t *testing.T) {
	ramp := Config{Concurrency: 4, RampUp: 100 * time.Millisecond, Requests: 1}
	for i := range 4 {
		iv := workerIntervals(ramp.segments(), i+1)
		want := time.Duration(i) * 25 * time.Millisecond
		if len(iv) != 1 || iv[0].from != want || iv[0].to != math.MaxInt64 {
			t.Errorf("ramp-up worker %d: %v, want [%v, forever)", i, iv, want)
		}
	}
	stages, _ := ParseStages("30s:100,2m:100,30s:0")
	cfg := Config{Stages: stages, Duration: 3 * time.Minute}
	for _, k := range []int{1, 2, 50, 100} {
		iv := workerIntervals(cfg.segments(), k)
		from := 30 * time.Second * time.Duration(k-1) / 100
		to := 150*time.Second + 30*time.Second*time.Duration(101-k)/100
		if len(iv) != 1 || iv[0].from != from || iv[0].to != to {
			t.Errorf("stage worker %d: %v, want [%v, %v)", k, iv, from, to)
		}
	}
	if iv := workerIntervals(cfg.segments(), 101); len(iv) != 0 {
		t.Errorf("worker 101 of a 100 peak runs: %v", iv)
	}
	// Up, down, up again: worker 2 runs twice.
	upDown := Config{Stages: []Stage{{time.Second, 2}, {time.Second, 0}, {time.Second, 2}}, Duration: 3 * time.Second}
	iv := workerIntervals(upDown.segments(), 2)
	want := []interval{{500 * time.Millisecond, 1500 * time.Millisecond}, {2500 * time.Millisecond, 3 * time.Second}}
	if !slices.Equal(iv, want) {
		t.Errorf("up-down-up worker 2: %v, want %v", iv, want)
	}
	if at, ok := nextActive(iv, 1600*time.Millisecond); !ok || at != 2500*time.Millisecond {
		t.Errorf("nextActive after the dip: %v %v", at, ok)
	}
	if _, ok := nextActive(iv, 3*time.Second); ok {
		t.Error("nextActive after the last stage")
	}
	if phaseAt(cfg.segments(), 10*time.Second) != PhaseRamp || phaseAt(cfg.segments(), time.Minute) != "" || phaseAt(cfg.segments(), 170*time.Second) != PhaseRamp {
		t.Error("phases of 30s:100,2m:100,30s:0 at 10s, 60s, 170s: want ramp, steady, ramp")
	}
}

// TestRateRampOffsets checks a constant-arrival rate ramp 1 -> 20 req/s over
// 2 minutes against an independent computation: arrival i is where the
// integral of the rate, summed numerically in 1 ms steps, first reaches i.
func TestRateRampOffsets(t *testing.T) {
	cfg := Config{Rate: 20, RateStart: 1, RampUp: 2 * time.Minute, Arrival: Constant, Duration: 3 * time.Minute}
	sched, err := NewSchedule(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rate := func(x float64) float64 {
		if x >= 120 {
			return 20
		}
		return 1 + 19*x/120
	}
	// Expected arrivals: 1*120 + 19*120/2 = 1260 in the ramp, 20*60 after.
	if n := len(sched.Offsets); n != 1260+1200 {
		t.Fatalf("%d arrivals, want %d", n, 1260+1200)
	}
	const step = 1e-3
	var area, x float64
	for i, off := range sched.Offsets {
		for area < float64(i) {
			area += step * (rate(x) + rate(x+step)) / 2 // trapezoid
			x += step
		}
		if d := math.Abs(off.Seconds() - x); d > 2*step {
			t.Fatalf("arrival %d at %v, the integral reaches %d at %.4fs", i, off, i, x)
		}
	}
	if sched.RampEnd != 2*time.Minute {
		t.Errorf("ramp end %v", sched.RampEnd)
	}
	// Seeded and reproducible, for every process.
	for _, arr := range Arrivals() {
		c := cfg
		c.Arrival, c.Seed = arr, 7
		a, err1 := NewSchedule(c)
		b, err2 := NewSchedule(c)
		if err1 != nil || err2 != nil || !slices.Equal(a.Offsets, b.Offsets) {
			t.Errorf("%s: schedules differ or fail: %v %v", arr, err1, err2)
		}
		if !slices.IsSorted(a.Offsets) || a.Offsets[0] != 0 {
			t.Errorf("%s: offsets not sorted from 0", arr)
		}
		// A ramp from 1 req/s: far fewer arrivals in the first 10 s than in
		// the last 10 s of the ramp (1..2.6 vs 18.4..20 req/s expected).
		early, late := 0, 0
		for _, o := range a.Offsets {
			switch {
			case o < 10*time.Second:
				early++
			case o >= 110*time.Second && o < 120*time.Second:
				late++
			}
		}
		if !(late > 3*early) {
			t.Errorf("%s: %d arrivals in the first 10 s, %d in the last 10 s of the ramp", arr, early, late)
		}
	}
	// From 0 and downwards.
	for _, r := range []rateRamp{{0, 10, 5}, {20, 1, 60}} {
		for _, s := range []float64{0.5, 3, 17, r.integral(r.t), r.integral(r.t) + 4} {
			if got := r.integral(r.at(s)); math.Abs(got-s) > 1e-9*math.Max(1, s) {
				t.Errorf("%+v: integral(at(%v)) = %v", r, s, got)
			}
		}
	}
}

// TestOpenLoopRampPhases: an open loop marks the arrivals of its rate ramp.
func TestOpenLoopRampPhases(t *testing.T) {
	cfg := Config{Rate: 100, RateStart: 10, RampUp: time.Second, Arrival: Constant, Requests: 200}
	var rec seqRecorder
	st, err := run(context.Background(), cfg, func(_ context.Context, a Arrival) { rec.add(a) }, newFakeClock())
	if err != nil {
		t.Fatal(err)
	}
	ramp := 0
	for _, a := range rec.sorted() {
		if (a.Phase == PhaseRamp) != (a.Intended < time.Second) {
			t.Errorf("arrival %d at %v: phase %q", a.Seq, a.Intended, a.Phase)
		}
		if a.Phase == PhaseRamp {
			ramp++
		}
	}
	// 10 + 90/2 = 55 arrivals expected in the ramp: offsets 0..54.
	if ramp != 55 || st.RampStarted != ramp {
		t.Errorf("%d ramp arrivals, Stats %d; want 55", ramp, st.RampStarted)
	}
}

// TestClosedLoopRampUp: with a ramp-up, worker i cannot start before
// i*R/N. Every job blocks until all N have started, so each worker runs
// exactly one and the i-th start is bounded below by worker i's slot (a
// sleep never ends early); the phase follows the launch offset.
func TestClosedLoopRampUp(t *testing.T) {
	const n = 4
	const rampUp = 40 * time.Millisecond
	var (
		mu      sync.Mutex
		started int
		all     = make(chan struct{})
		rec     seqRecorder
	)
	job := func(ctx context.Context, a Arrival) {
		rec.add(a)
		mu.Lock()
		started++
		if started == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-ctx.Done():
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Run(ctx, Config{Concurrency: n, Requests: n, RampUp: rampUp}, job)
	if err != nil {
		t.Fatal(err)
	}
	arr := rec.sorted()
	slices.SortFunc(arr, func(a, b Arrival) int { return int(a.Launched - b.Launched) })
	ramp := 0
	for i, a := range arr {
		if min := time.Duration(i) * rampUp / n; a.Launched < min {
			t.Errorf("start %d at %v, before its slot at %v", i, a.Launched, min)
		}
		if (a.Phase == PhaseRamp) != (a.Launched < rampUp) {
			t.Errorf("start %d at %v: phase %q", i, a.Launched, a.Phase)
		}
		if a.Phase == PhaseRamp {
			ramp++
		}
	}
	if st.Started != n || st.RampStarted != ramp {
		t.Errorf("stats: started %d ramp %d, counted %d ramp", st.Started, st.RampStarted, ramp)
	}
}

// TestRampDoesNotOutliveTheCount: a count bound reached before the ramp ends
// wakes the sleeping workers (an hour-long ramp would otherwise hold the run).
func TestRampDoesNotOutliveTheCount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := Run(ctx, Config{Concurrency: 8, Requests: 3, RampUp: time.Hour}, func(context.Context, Arrival) {})
	if err != nil || st.Started != 3 {
		t.Fatalf("started %d, err %v", st.Started, err)
	}
}

// TestStagesEndTheRun: a stage list bounds a closed loop by its total length
// and marks the moving stages.
func TestStagesEndTheRun(t *testing.T) {
	stages := []Stage{{20 * time.Millisecond, 2}, {20 * time.Millisecond, 2}}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var rec seqRecorder
	st, err := Run(ctx, Config{Stages: stages, Duration: time.Hour}, func(_ context.Context, a Arrival) {
		rec.add(a)
		time.Sleep(time.Millisecond) // a job takes time, so the loop is bounded in count
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range rec.sorted() {
		if a.Launched >= 40*time.Millisecond {
			t.Errorf("arrival %d launched at %v, after the last stage", a.Seq, a.Launched)
		}
		if (a.Phase == PhaseRamp) != (a.Launched < 20*time.Millisecond) {
			t.Errorf("arrival %d at %v: phase %q", a.Seq, a.Launched, a.Phase)
		}
	}
	if st.Started == 0 || st.Started != len(rec.sorted()) {
		t.Errorf("started %d", st.Started)
	}
}

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in          string
		start, rate float64
	}{{"20", 0, 20}, {"0", 0, 0}, {"2.5", 0, 2.5}, {"1:20", 1, 20}, {"20:1", 20, 1}, {"0:8", 0, 8}} {
		s, r, err := ParseRate(tc.in)
		if err != nil || s != tc.start || r != tc.rate {
			t.Errorf("ParseRate(%q) = %v, %v, %v", tc.in, s, r, err)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1:", ":2", "1:0", "NaN", "1:2:3", "inf"} {
		if _, _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) accepted it", bad)
		}
	}
}
