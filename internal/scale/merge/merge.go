// Package merge joins the results files of the shards of one test
// (omnibench run --shard I/N) into one results file that every reader of
// results takes like a one-process run's.
//
// Nothing is approximated: the merged file holds the shards' raw measured
// records, so percentiles, continuity rates and counts computed from it are
// exactly those of one process over the same records. Before it writes
// anything, Merge checks that the files are the shards of one test (same
// seed, scenario, load, target, agreed start and shard count, every index
// present once, every record in its own shard's part of the schedule) and
// refuses with an error naming what differs or is missing.
package merge

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/scrape"
)

// Shard is one input: a shard's results file and the server snapshots it
// took, if any (only shard 0 scrapes; see runner).
type Shard struct {
	Path    string
	Header  results.Header
	Records []results.Record
	Before  *scrape.Snapshot // nil when the shard took none
	After   *scrape.Snapshot
}

// Prefer modes for two files of the same index (a retried shard).
const (
	PreferNone   = ""       // refuse
	PreferNewest = "newest" // the file whose header started_at is latest
)

// Options say which file to keep when two have the same shard index.
type Options struct {
	Prefer string   // PreferNone or PreferNewest
	Keep   []string // paths to keep for their index; wins over Prefer
}

// Result is the merged test.
type Result struct {
	Header results.Header
	// Records are every shard's records, shard by shard in index order and
	// in file order within a shard: exactly the concatenated files, so that
	// sums (whose floating-point rounding depends on the order) come out
	// bit-identical to a report over the concatenation.
	Records []results.Record
	// Before and After are the earliest before and the latest after
	// snapshot across the shards; nil (with ScrapeNote) when no shard took
	// one of them.
	Before, After *scrape.Snapshot
	ScrapeNote    string
	// Notes say what the merge decided (files left out for a retried index).
	Notes []string
}

// Error is an input that is not the shards of one test. Every problem
// found is listed, each naming the file and the field.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return "merge: not the shards of one test:\n  " + strings.Join(e.Problems, "\n  ")
}

// loadFlags are the run flags that define the test: shards that differ in
// one of them ran different tests. Per-process flags (--shard, --out,
// --metrics-addr, ...) may differ.
var loadFlags = []string{
	"scenario", "kind", "model", "voice", "audio-format", "modalities", "prompts", "extra-body", "pcm-sample-rate",
	"concurrency", "rate", "arrival", "burstiness", "requests", "duration", "warmup", "max-inflight", "seed",
	"ramp-up", "stages", "include-ramp", "timeout", "idle-timeout",
	"continuity-mode", "threshold", "prebuffer", "prebuffer-max-wait", "percentiles", "goodput",
}

// perProcessFlags are dropped from the merged header's flags: they describe
// how one shard ran, not the test.
var perProcessFlags = []string{"shard", "out", "summary", "save-scrapes", "metrics-addr", "metrics-out", "push", "html", "junit", "save-audio"}

// Merge checks the shards and joins them.
func Merge(shards []Shard, opts Options) (*Result, error) {
	if len(shards) == 0 {
		return nil, &Error{Problems: []string{"no input files"}}
	}
	if opts.Prefer != PreferNone && opts.Prefer != PreferNewest {
		return nil, fmt.Errorf("merge: prefer %q: want %q (or nothing, to refuse two files of one index)", opts.Prefer, PreferNewest)
	}
	var problems []string
	for _, s := range shards {
		if s.Header.ShardCount < 1 {
			problems = append(problems, fmt.Sprintf("%s: not a shard (its header has no shard_count: it was not run with --shard)", s.Path))
		}
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	chosen, notes, problems := pick(shards, opts)
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	ref := chosen[0]
	for _, s := range chosen[1:] {
		problems = append(problems, differences(ref, s)...)
	}
	if ref.Header.StartAt == "" {
		problems = append(problems, fmt.Sprintf("%s: no start_at: shards of one test need one agreed start (run --start-at), or their schedules are measured from different instants", ref.Path))
	}
	n := ref.Header.ShardCount
	seen := make([]bool, n)
	for _, s := range chosen {
		if i := s.Header.ShardIndex; i >= 0 && i < n {
			seen[i] = true
		} else {
			problems = append(problems, fmt.Sprintf("%s: shard_index %d outside 0..%d", s.Path, i, n-1))
		}
	}
	var missing []string
	for i, ok := range seen {
		if !ok {
			missing = append(missing, fmt.Sprint(i))
		}
	}
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("shard %s of %d missing (have %d files for %d shards)", strings.Join(missing, ", "), n, len(chosen), n))
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	slices.SortFunc(chosen, func(a, b Shard) int { return a.Header.ShardIndex - b.Header.ShardIndex })

	res := &Result{Notes: notes}
	info := &results.Merged{}
	warmup := ref.Header.Warmup
	bySeq := map[int]string{}
	for _, s := range chosen {
		taken := 0
		for _, r := range s.Records {
			if r.Warmup {
				// Every shard numbers its own warm-up from 0: the ids are
				// made unique, the records kept (the server saw them).
				r.ID = fmt.Sprintf("shard%d-%s", s.Header.ShardIndex, r.ID)
				res.Records = append(res.Records, r)
				info.Warmup++
				continue
			}
			if k := r.Seq - warmup; k < 0 || k%n != s.Header.ShardIndex {
				problems = append(problems, fmt.Sprintf("%s: record %s (seq %d) is not in shard %d/%d's part of the schedule", s.Path, r.ID, r.Seq, s.Header.ShardIndex, n))
				continue
			}
			if other, dup := bySeq[r.Seq]; dup {
				problems = append(problems, fmt.Sprintf("%s: seq %d also in %s", s.Path, r.Seq, other))
				continue
			}
			bySeq[r.Seq] = s.Path
			res.Records = append(res.Records, r)
			taken++
		}
		info.Shards = append(info.Shards, results.MergedShard{
			Index: s.Header.ShardIndex, File: s.Path, StartedAt: s.Header.StartedAt,
			StartLateS: s.Header.StartLateS, Records: taken,
		})
	}
	if len(problems) > 0 {
		return nil, &Error{Problems: problems}
	}
	info.StartSkewS = StartSkew(info.Shards)
	res.Header = mergedHeader(chosen, info)
	res.Before, res.After, res.ScrapeNote = snapshots(chosen)
	if res.Before != nil && res.ScrapeNote == "" {
		res.ScrapeNote = coverage(res)
	}
	return res, nil
}

// StartSkew is the spread of the shards' measured starts: all started at
// the agreed time plus their lateness, so the skew is the latest lateness
// less the earliest (as far as the nodes' clocks agree).
func StartSkew(shards []results.MergedShard) float64 {
	if len(shards) == 0 {
		return 0
	}
	lo, hi := shards[0].StartLateS, shards[0].StartLateS
	for _, s := range shards[1:] {
		lo, hi = min(lo, s.StartLateS), max(hi, s.StartLateS)
	}
	return hi - lo
}

// pick chooses one file per index: the only one, the one in opts.Keep, or
// the newest with PreferNewest; otherwise it reports the clash.
func pick(shards []Shard, opts Options) (chosen []Shard, notes, problems []string) {
	byIndex := map[int][]Shard{}
	var order []int
	for _, s := range shards {
		i := s.Header.ShardIndex
		if _, ok := byIndex[i]; !ok {
			order = append(order, i)
		}
		byIndex[i] = append(byIndex[i], s)
	}
	keep := map[string]bool{}
	for _, k := range opts.Keep {
		keep[filepath.Clean(k)] = true
	}
	for _, i := range order {
		group := byIndex[i]
		if len(group) == 1 {
			chosen = append(chosen, group[0])
			continue
		}
		paths := make([]string, len(group))
		for j, s := range group {
			paths[j] = s.Path
		}
		var kept []Shard
		for _, s := range group {
			if keep[filepath.Clean(s.Path)] {
				kept = append(kept, s)
			}
		}
		switch {
		case len(kept) == 1:
			chosen = append(chosen, kept[0])
			notes = append(notes, fmt.Sprintf("shard %d: kept %s (--keep) of %s", i, kept[0].Path, strings.Join(paths, ", ")))
		case len(kept) > 1:
			problems = append(problems, fmt.Sprintf("shard %d: --keep names %d files of this index; keep one", i, len(kept)))
		case opts.Prefer == PreferNewest:
			newest, err := newestOf(group)
			if err != nil {
				problems = append(problems, fmt.Sprintf("shard %d: %v", i, err))
				continue
			}
			chosen = append(chosen, newest)
			notes = append(notes, fmt.Sprintf("shard %d: kept the newest, %s (started %s), of %s", i, newest.Path, newest.Header.StartedAt, strings.Join(paths, ", ")))
		default:
			problems = append(problems, fmt.Sprintf("shard %d: %d files (%s), a retried shard? Say which to keep: --keep FILE or --prefer newest", i, len(group), strings.Join(paths, ", ")))
		}
	}
	return chosen, notes, problems
}

func newestOf(group []Shard) (Shard, error) {
	var best Shard
	var bestAt time.Time
	for j, s := range group {
		at, err := time.Parse(time.RFC3339Nano, s.Header.StartedAt)
		if err != nil {
			return Shard{}, fmt.Errorf("%s: started_at %q is not an RFC 3339 time, so the newest cannot be told", s.Path, s.Header.StartedAt)
		}
		if j == 0 || at.After(bestAt) {
			best, bestAt = s, at
		}
	}
	return best, nil
}

// differences lists the test-defining fields in which s differs from ref.
func differences(ref, s Shard) []string {
	var out []string
	diff := func(field string, a, b any) {
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s %v, but %s (shard %d) has %v", s.Path, field, b, ref.Path, ref.Header.ShardIndex, a))
		}
	}
	r, h := ref.Header, s.Header
	diff("shard_count", r.ShardCount, h.ShardCount)
	diff("seed", r.Seed, h.Seed)
	diff("scenario", r.Scenario, h.Scenario)
	diff("mode", r.Mode, h.Mode)
	diff("concurrency", r.Concurrency, h.Concurrency)
	diff("rate", r.Rate, h.Rate)
	diff("arrival", r.Arrival, h.Arrival)
	diff("target", r.Target, h.Target)
	diff("start_at", r.StartAt, h.StartAt)
	diff("warmup", r.Warmup, h.Warmup)
	diff("schema_version", r.SchemaVersion, h.SchemaVersion)
	for _, f := range loadFlags {
		a, aok := r.Flags[f]
		b, bok := h.Flags[f]
		if aok != bok || a != b {
			out = append(out, fmt.Sprintf("%s: flag --%s %s, but %s (shard %d) has %s", s.Path, f, flagText(b, bok), ref.Path, ref.Header.ShardIndex, flagText(a, aok)))
		}
	}
	return out
}

func flagText(v string, set bool) string {
	if !set {
		return "unset"
	}
	return fmt.Sprintf("%q", v)
}

// mergedHeader is shard 0's header made the whole test's, its scrape
// lines (Header.Scrapes) with it.
func mergedHeader(chosen []Shard, info *results.Merged) results.Header {
	h := chosen[0].Header
	h.ShardIndex, h.ShardCount, h.StartLateS = 0, 0, 0
	for _, s := range chosen[1:] {
		if s.Header.StartedAt < h.StartedAt { // RFC 3339 UTC strings sort by time
			h.StartedAt = s.Header.StartedAt
		}
	}
	flags := make(map[string]string, len(h.Flags))
	for k, v := range h.Flags {
		if !slices.Contains(perProcessFlags, k) {
			flags[k] = v
		}
	}
	h.Flags = flags
	h.Merged = info
	h.Client = mergedClient(chosen)
	return h
}

// mergedClient joins the shards' load-generator verdicts: saturated when
// any shard was (its reasons named by shard), not saturated when every
// shard says so, unknown (nil) when a shard's file has no verdict.
func mergedClient(chosen []Shard) *results.ClientHealth {
	out := &results.ClientHealth{}
	known := true
	for _, s := range chosen {
		c := s.Header.Client
		if c == nil {
			known = false
			continue
		}
		out.ClientDelayMS = max(out.ClientDelayMS, c.ClientDelayMS)
		if c.Saturated {
			out.Saturated = true
			for _, r := range c.Reasons {
				out.Reasons = append(out.Reasons, fmt.Sprintf("shard %d: %s", s.Header.ShardIndex, r))
			}
		}
	}
	if !known && !out.Saturated {
		return nil
	}
	return out
}

// snapshots takes the earliest before and the latest after snapshot.
func snapshots(shards []Shard) (before, after *scrape.Snapshot, note string) {
	for _, s := range shards {
		if s.Before != nil && (before == nil || s.Before.FetchedAt.Before(before.FetchedAt)) {
			before = s.Before
		}
		if s.After != nil && (after == nil || s.After.FetchedAt.After(after.FetchedAt)) {
			after = s.After
		}
	}
	switch {
	case before == nil && after == nil:
		note = "no shard took a server snapshot (only shard 0 scrapes; keep its --save-scrapes files beside its results), so the merge has no server deltas"
	case before == nil || after == nil:
		note = "no shard saw both a before and an after snapshot, so the merge has no server deltas"
		before, after = nil, nil
	case !after.FetchedAt.After(before.FetchedAt):
		note = fmt.Sprintf("the latest after snapshot (%s) is not later than the earliest before (%s)", after.FetchedAt, before.FetchedAt)
		before, after = nil, nil
	}
	return before, after, note
}

// coverage says when the snapshots do not enclose every measured request
// ("" when they do): the before snapshot must precede the first send and
// the after snapshot follow the last response's end, both on the agreed
// start's clock. Warm-up is not checked: it has no agreed clock.
func coverage(res *Result) string {
	start, err := time.Parse(time.RFC3339Nano, res.Header.StartAt)
	if err != nil {
		return fmt.Sprintf("start_at %q is not an RFC 3339 time: cannot tell whether the snapshots enclose the test", res.Header.StartAt)
	}
	first, last := math.Inf(1), math.Inf(-1)
	for _, r := range res.Records {
		if !r.Warmup {
			first, last = min(first, r.SentS), max(last, r.SentS+r.E2ES)
		}
	}
	if math.IsInf(first, 0) {
		return ""
	}
	at := func(s float64) time.Time { return start.Add(time.Duration(s * float64(time.Second))) }
	switch {
	case res.Before.FetchedAt.After(at(first)):
		return fmt.Sprintf("the before snapshot (%s) was taken after the first request was sent (%s): the server deltas miss the start of the test",
			res.Before.FetchedAt.Format(time.RFC3339Nano), at(first).UTC().Format(time.RFC3339Nano))
	case res.After.FetchedAt.Before(at(last)):
		return fmt.Sprintf("the after snapshot (%s) was taken before the last response ended (%s): the server deltas miss the end of the test; give shard 0 a longer --settle",
			res.After.FetchedAt.Format(time.RFC3339Nano), at(last).UTC().Format(time.RFC3339Nano))
	}
	return ""
}

// ScrapePrefix is where a shard's --save-scrapes files are expected beside
// its results file: results path without ".jsonl".
func ScrapePrefix(resultsPath string) string {
	return strings.TrimSuffix(resultsPath, ".jsonl")
}

// IsInput reports whether err is an input problem (exit 2).
func IsInput(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
