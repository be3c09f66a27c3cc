package load

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseShard(t *testing.T) {
	env := func(v string) func(string) string {
		return func(name string) string {
			if name != ShardIndexEnv {
				t.Errorf("read $%s, want $%s", name, ShardIndexEnv)
			}
			return v
		}
	}
	for _, tc := range []struct {
		in, env string
		want    Shard
	}{{"0/1", "", Shard{0, 1}}, {"2/3", "", Shard{2, 3}}, {" 0/4 ", "", Shard{0, 4}}, {"auto/4", "3", Shard{3, 4}}, {"auto/2", "0", Shard{0, 2}}} {
		got, err := ParseShard(tc.in, env(tc.env))
		if err != nil || got != tc.want {
			t.Errorf("ParseShard(%q) with $%s=%q = %v, %v; want %v", tc.in, ShardIndexEnv, tc.env, got, err, tc.want)
		}
	}
	for _, tc := range []struct{ in, env, mention string }{
		{"3/3", "", "0 to 2"}, {"-1/3", "", "index"}, {"1", "", "INDEX/COUNT"}, {"0/0", "", "count"},
		{"0/x", "", "count"}, {"0/2000", "", "1024"}, {"auto/3", "", "not set"}, {"auto/3", "3", ShardIndexEnv},
		{"auto/3", "one", ShardIndexEnv},
	} {
		_, err := ParseShard(tc.in, env(tc.env))
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("ParseShard(%q) with $%s=%q: error %v, want one mentioning %q", tc.in, ShardIndexEnv, tc.env, err, tc.mention)
		}
	}
}

// part is checked against counting by hand: every item goes to exactly one
// shard, and the shares differ by at most one.
func TestShardPartSplitsEvenly(t *testing.T) {
	for n := 1; n <= 7; n++ {
		for total := 0; total <= 30; total++ {
			sum, lo, hi := 0, total, 0
			for i := range n {
				count := 0
				for k := range total {
					if k%n == i {
						count++
					}
				}
				got := Shard{Index: i, Count: n}.part(total)
				if got != count {
					t.Fatalf("shard %d/%d of %d = %d, counted %d", i, n, total, got, count)
				}
				sum += got
				lo, hi = min(lo, got), max(hi, got)
			}
			if sum != total || hi-lo > 1 {
				t.Fatalf("%d over %d shards: sum %d, shares %d..%d", total, n, sum, lo, hi)
			}
		}
	}
}

// runShards runs every shard of cfg on its own fake clock and returns all
// measured arrivals, started or dropped, sorted by Seq.
func runShards(t *testing.T, cfg Config, n int) (all []Arrival, warmups int) {
	t.Helper()
	for i := range n {
		c := cfg
		c.Shard = Shard{Index: i, Count: n}
		var rec seqRecorder
		c.OnDrop = rec.add // a dropped arrival is still the schedule's
		if _, err := run(context.Background(), c, func(_ context.Context, a Arrival) { rec.add(a) }, newFakeClock()); err != nil {
			t.Fatalf("shard %d/%d: %v", i, n, err)
		}
		for _, a := range rec.sorted() {
			if a.Warmup {
				warmups++
				continue
			}
			if (a.Seq-cfg.Warmup)%n != i {
				t.Errorf("shard %d/%d ran seq %d", i, n, a.Seq)
			}
			all = append(all, a)
		}
	}
	slices.SortFunc(all, func(a, b Arrival) int { return a.Seq - b.Seq })
	return all, warmups
}

// The union of an open loop's shards is the one-process schedule: the
// same sequence numbers with the same intended offsets (dropped arrivals,
// which depend on timing, are counted with the started ones).
func TestOpenLoopShardsUnionIsTheSchedule(t *testing.T) {
	for _, cfg := range []Config{
		{Rate: 50, Arrival: Poisson, Seed: 7, Requests: 23, Warmup: 2},
		{Rate: 40, Arrival: Gamma, Burstiness: 0.5, Seed: 3, Duration: time.Second},
		{Rate: 100, Arrival: Constant, Requests: 10, MaxInflight: 6},
	} {
		var one seqRecorder
		cfg.OnDrop = one.add
		if _, err := run(context.Background(), cfg, func(_ context.Context, a Arrival) { one.add(a) }, newFakeClock()); err != nil {
			t.Fatal(err)
		}
		var want []Arrival
		for _, a := range one.sorted() {
			if !a.Warmup {
				want = append(want, a)
			}
		}
		for _, n := range []int{1, 2, 3, 5} {
			got, warmups := runShards(t, cfg, n)
			if warmups != n*cfg.Warmup {
				t.Errorf("%d shards ran %d warm-ups, want %d each", n, warmups, cfg.Warmup)
			}
			if len(got) != len(want) {
				t.Fatalf("%+v over %d shards: %d arrivals, one process %d", cfg, n, len(got), len(want))
			}
			for k := range want {
				if got[k].Seq != want[k].Seq || got[k].Intended != want[k].Intended {
					t.Fatalf("%d shards: arrival %d = seq %d at %v, one process seq %d at %v",
						n, k, got[k].Seq, got[k].Intended, want[k].Seq, want[k].Intended)
				}
			}
		}
	}
}

// A closed loop's shards split the request budget: together they run
// every sequence number of the one-process run once.
func TestClosedLoopShardsSplitTheBudget(t *testing.T) {
	cfg := Config{Concurrency: 5, Requests: 17, Warmup: 3}
	for _, n := range []int{1, 2, 3, 5} {
		got, _ := runShards(t, cfg, n)
		var seqs []int
		for _, a := range got {
			seqs = append(seqs, a.Seq)
		}
		want := make([]int, cfg.Requests)
		for k := range want {
			want[k] = cfg.Warmup + k
		}
		if !slices.Equal(seqs, want) {
			t.Errorf("%d shards ran seqs %v, want %v", n, seqs, want)
		}
	}
	for i, want := range []int{2, 2, 1} {
		if got := (Config{Concurrency: 5, Requests: 17, Shard: Shard{i, 3}}).shardPart(); got.Concurrency != want || got.Requests != []int{6, 6, 5}[i] {
			t.Errorf("shard %d/3: concurrency %d requests %d", i, got.Concurrency, got.Requests)
		}
	}
}

func TestShardRefusesWhatCannotSplit(t *testing.T) {
	for _, tc := range []struct {
		cfg     Config
		mention string
	}{
		{Config{Concurrency: 2, Requests: 10, Shard: Shard{0, 3}}, "concurrency 2"},
		{Config{Concurrency: 4, Requests: 2, Shard: Shard{0, 3}}, "requests 2"},
		{Config{Rate: 5, Requests: 10, MaxInflight: 2, Shard: Shard{0, 3}}, "max inflight 2"},
		{Config{Rate: 5, Requests: 10, Shard: Shard{3, 3}}, "index"},
	} {
		err := tc.cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: error %v, want one mentioning %q", tc.cfg, err, tc.mention)
		}
	}
}

// Without StartAt, OnBegin is called once too, after the warm-up and
// before the first measured arrival (the progress line times -d from it).
func TestOnBeginWithoutStartAt(t *testing.T) {
	for _, cfg := range []Config{
		{Rate: 100, Arrival: Constant, Requests: 3, Warmup: 2},
		{Concurrency: 2, Requests: 3, Warmup: 2},
	} {
		var began []time.Duration
		var measuredBefore int
		var rec seqRecorder
		cfg.OnBegin = func(late time.Duration) { began, measuredBefore = append(began, late), len(rec.sorted()) }
		if _, err := run(context.Background(), cfg, func(_ context.Context, a Arrival) { rec.add(a) }, newFakeClock()); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(began, []time.Duration{0}) || measuredBefore != cfg.Warmup {
			t.Errorf("%s loop: OnBegin %v after %d arrivals; want once, late 0, after the %d warm-ups", cfg.Mode(), began, measuredBefore, cfg.Warmup)
		}
	}
}

// A shard early for StartAt sleeps until it and measures from it; a late
// one starts at once, measures from StartAt all the same (the schedule is
// not shifted) and reports how late it was, which shows in the lags.
func TestStartAt(t *testing.T) {
	const ms = time.Millisecond
	for _, tc := range []struct {
		name string
		at   time.Duration // StartAt relative to the clock's start
		late time.Duration
	}{{"early", 250 * ms, 0}, {"late", -40 * ms, 40 * ms}} {
		clk := newFakeClock()
		startAt := clk.Now().Add(tc.at)
		var began []time.Duration
		cfg := Config{Rate: 100, Arrival: Constant, Requests: 4, StartAt: startAt,
			OnBegin: func(late time.Duration) { began = append(began, late) }}
		var rec seqRecorder
		st, err := run(context.Background(), cfg, func(_ context.Context, a Arrival) { rec.add(a) }, clk)
		if err != nil {
			t.Fatal(err)
		}
		if st.StartLate != tc.late || !slices.Equal(began, []time.Duration{tc.late}) {
			t.Errorf("%s: late %v, OnBegin %v; want %v once", tc.name, st.StartLate, began, tc.late)
		}
		for i, a := range rec.sorted() {
			intended := time.Duration(i) * 10 * ms
			wantLag := max(0, tc.late-intended)
			if !a.Start.Equal(startAt) || a.Intended != intended || a.Lag() != wantLag {
				t.Errorf("%s: arrival %d starts %v intended %v lag %v; want %v, %v, %v",
					tc.name, i, a.Start.Sub(startAt), a.Intended, a.Lag(), 0, intended, wantLag)
			}
		}
	}
	// A closed loop measures from StartAt too.
	clk := newFakeClock()
	startAt := clk.Now().Add(time.Second)
	var rec seqRecorder
	if _, err := run(context.Background(), Config{Concurrency: 2, Requests: 3, StartAt: startAt}, func(_ context.Context, a Arrival) { rec.add(a) }, clk); err != nil {
		t.Fatal(err)
	}
	for _, a := range rec.sorted() {
		if !a.Start.Equal(startAt) {
			t.Errorf("closed-loop arrival %+v does not start at StartAt", a)
		}
	}
}

// An interrupt during the wait for StartAt ends the run without a
// measured arrival.
func TestStartAtInterruptible(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var rec seqRecorder
	st, err := Run(ctx, Config{Rate: 10, Requests: 3, StartAt: time.Now().Add(time.Hour)}, func(_ context.Context, a Arrival) { rec.add(a) })
	if err == nil || !st.Interrupted || len(rec.sorted()) != 0 {
		t.Errorf("err %v, stats %+v, %d arrivals; want an interrupted run with none", err, st, len(rec.sorted()))
	}
}

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"+30s":                        now.Add(30 * time.Second),
		"+0s":                         now,
		"2026-12-01T10:30:00Z":        now.Add(30 * time.Minute),
		"2026-12-01T11:30:00.5+01:00": now.Add(30*time.Minute + 500*time.Millisecond),
	} {
		got, err := ParseStartAt(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseStartAt(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "30s", "+-1s", "+x", "10:30", "2026-12-01 10:30:00"} {
		if _, err := ParseStartAt(bad, now); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
			t.Errorf("ParseStartAt(%q): error %v, want one naming the accepted forms", bad, err)
		}
	}
}
