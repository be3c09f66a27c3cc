package load

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ShardIndexEnv is the environment variable a "--shard auto/N" reads: the
// completion index Kubernetes gives each pod of an Indexed Job.
const ShardIndexEnv = "JOB_COMPLETION_INDEX"

// MaxShards bounds the shard count: far more load generators than one test
// needs, and few enough that the exporter's shard label stays bounded.
const MaxShards = 1024

// Shard is one part of a test split over Count load generators. The zero
// value (Count 0) is the whole test in one process.
//
// Arrival k of the test (k from 0, warm-up excluded) belongs to shard
// k mod Count and keeps its sequence number Warmup+k, so the union of the
// shards is the one-process run: in an open loop the same schedule (each
// shard takes every Count-th precomputed offset), in a closed loop the same
// sequence numbers (shard I numbers its j-th request Warmup+I+Count·j) with
// the concurrency and the request budget split as evenly as possible.
// Warm-up is per shard (each shard warms its own connections) and keeps the
// sequence numbers 0..Warmup-1 of the shard.
type Shard struct {
	Index int // 0..Count-1
	Count int // 0 or 1: not sharded
}

// Sharded reports whether the test is split over more than one process.
func (s Shard) Sharded() bool { return s.Count > 1 }

// String is the "I/N" form ParseShard reads ("" when not sharded).
func (s Shard) String() string {
	if s.Count == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ParseShard parses "I/N" (I from 0) or "auto/N", which takes I from the
// environment variable ShardIndexEnv through getenv.
func ParseShard(s string, getenv func(string) string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, fmt.Errorf("shard %q: want INDEX/COUNT such as 0/4, or auto/COUNT", s)
	}
	n, err := strconv.Atoi(ns)
	if err != nil || n < 1 || n > MaxShards {
		return Shard{}, fmt.Errorf("shard %q: count %q must be a whole number from 1 to %d", s, ns, MaxShards)
	}
	src := "index"
	if is == "auto" {
		src = "$" + ShardIndexEnv
		is = getenv(ShardIndexEnv)
		if is == "" {
			return Shard{}, fmt.Errorf("shard %q: $%s is not set (it is set in the pods of a Kubernetes Indexed Job)", s, ShardIndexEnv)
		}
	}
	i, err := strconv.Atoi(is)
	if err != nil || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard %q: %s %q must be a whole number from 0 to %d", s, src, is, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// part is how many of total items (numbered from 0) fall to this shard:
// those whose number k has k mod Count = Index.
func (s Shard) part(total int) int {
	if total <= s.Index {
		return 0
	}
	return (total - s.Index + s.Count - 1) / s.Count
}

// globalSeq maps the sequence number a shard's driver gave a measured
// arrival (warmup + j for its j-th) to the test's (warmup + Index + Count·j).
func (s Shard) globalSeq(warmup, local int) int {
	return warmup + s.Index + s.Count*(local-warmup)
}

// Of returns the shard's part of a schedule: the offsets whose index k has
// k mod Count = Index, unchanged, and the same End.
func (s Shard) Of(sched Schedule) Schedule {
	if !s.Sharded() {
		return sched
	}
	out := sched
	out.Offsets = make([]time.Duration, 0, s.part(len(sched.Offsets)))
	for k := s.Index; k < len(sched.Offsets); k += s.Count {
		out.Offsets = append(out.Offsets, sched.Offsets[k])
	}
	return out
}

// shardErrors reports what makes the configuration unusable as a shard.
func (c Config) shardErrors() []error {
	s := c.Shard
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("load: "+format, args...)) }
	switch {
	case s.Count < 0 || s.Count > MaxShards:
		bad("shard count must be from 1 to %d, got %d", MaxShards, s.Count)
	case s.Index < 0 || (s.Index > 0 && s.Index >= s.Count):
		bad("shard index must be from 0 to count-1, got %d of %d", s.Index, s.Count)
	case !s.Sharded():
	case c.Requests > 0 && c.Requests < s.Count:
		bad("requests %d are split over %d shards: they must be 0 (duration only) or at least the shard count", c.Requests, s.Count)
	case !c.Open() && c.Concurrency < s.Count:
		bad("concurrency %d is split over %d shards: it must be at least the shard count", c.Concurrency, s.Count)
	case c.Open() && c.MaxInflight > 0 && c.MaxInflight < s.Count:
		bad("max inflight %d is split over %d shards: it must be 0 or at least the shard count", c.MaxInflight, s.Count)
	}
	return errs
}

// shardPart is the configuration this shard's drivers run: the closed
// loop's concurrency and request budget, and the open loop's in-flight
// cap, split as evenly as possible (the first shards take the remainder).
// The open loop's schedule is computed from the whole test and filtered
// (Shard.Of), so Requests and Duration stay the test's there.
func (c Config) shardPart() Config {
	s := c.Shard
	if !s.Sharded() {
		return c
	}
	if c.Open() {
		c.MaxInflight = s.part(c.MaxInflight)
		return c
	}
	c.Concurrency = s.part(c.Concurrency)
	c.Requests = s.part(c.Requests)
	return c
}

// shardJob wraps job (and the drop hook) so that measured arrivals carry
// the test's sequence numbers rather than the shard's.
func (c Config) shardJob(job Job) (Job, func(Arrival)) {
	s, warmup, onDrop := c.Shard, c.Warmup, c.OnDrop
	if !s.Sharded() {
		return job, onDrop
	}
	mapped := func(a Arrival) Arrival {
		if !a.Warmup {
			a.Seq = s.globalSeq(warmup, a.Seq)
		}
		return a
	}
	var drop func(Arrival)
	if onDrop != nil {
		drop = func(a Arrival) { onDrop(mapped(a)) }
	}
	return func(ctx context.Context, a Arrival) { job(ctx, mapped(a)) }, drop
}

// begin is the start of the measured phase. Without Config.StartAt it is
// now. With it, begin sleeps until StartAt (interruptibly) and returns it
// as read on the monotonic clock, so that a wall-clock step during the run
// moves nothing; when StartAt has already passed it returns at once with
// StartAt itself, so the schedule is not shifted and the lateness shows in
// every arrival's lag. It records the lateness in st and calls OnBegin.
func (r *runner) begin(ctx context.Context, st *Stats) time.Time {
	now := r.clk.Now()
	if r.cfg.StartAt.IsZero() {
		if r.cfg.OnBegin != nil {
			r.cfg.OnBegin(0)
		}
		return now
	}
	// now carries a monotonic reading; Add keeps it.
	start := now.Add(r.cfg.StartAt.Sub(now))
	if err := r.clk.SleepUntil(ctx, start); err == nil {
		st.StartLate = max(0, r.clk.Now().Sub(start))
	}
	if r.cfg.OnBegin != nil {
		r.cfg.OnBegin(st.StartLate)
	}
	return start
}

// ParseStartAt parses an agreed start: an RFC 3339 time
// ("2026-12-01T10:30:00Z") or "+DURATION" from now ("+30s").
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(s, "+"); ok {
		d, err := time.ParseDuration(rest)
		if err != nil || d < 0 {
			return time.Time{}, fmt.Errorf("start-at %q: want an RFC 3339 time such as 2026-12-01T10:30:00Z, or +DURATION from now such as +30s", s)
		}
		return now.Add(d).Round(0), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("start-at %q: want an RFC 3339 time such as 2026-12-01T10:30:00Z, or +DURATION from now such as +30s: %w", s, err)
	}
	return t, nil
}
