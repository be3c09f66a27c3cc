// Package mergetest holds the checks that a merged test is the one-process
// test: the proofs on one machine (cmd/omnibench) and on Kubernetes
// (internal/kubee2e) assert the same things, from the same code.
package mergetest

import (
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scrape"
)

// Schedule checks that the merged records hold every sequence number of
// cfg's test once and, in an open loop, each at the one-process schedule's
// intended offset to the microsecond. It returns them by sequence number.
func Schedule(t testing.TB, recs []results.Record, cfg load.Config) []results.Record {
	t.Helper()
	bySeq := slices.Clone(recs)
	slices.SortFunc(bySeq, func(a, b results.Record) int { return a.Seq - b.Seq })
	if len(bySeq) != cfg.Requests {
		t.Fatalf("merged %d records, want %d", len(bySeq), cfg.Requests)
	}
	var sched load.Schedule
	if cfg.Open() {
		var err error
		if sched, err = load.NewSchedule(cfg); err != nil {
			t.Fatal(err)
		}
	}
	for k, r := range bySeq {
		if r.Seq != k {
			t.Fatalf("merged record %d has seq %d", k, r.Seq)
		}
		if cfg.Open() {
			got := time.Duration(math.Round(r.IntendedS*1e6)) * time.Microsecond
			if want := sched.Offsets[k].Round(time.Microsecond); got != want {
				t.Errorf("seq %d intended at %v, the one-process schedule at %v", k, got, want)
			}
		}
	}
	return bySeq
}

// Prompts checks that each merged request's prompt, as the server counted
// its tokens, is the one the one-process run (reference) sent under the
// same sequence number, and that the prompts differ enough for the check to
// tell them apart.
func Prompts(t testing.TB, merged, reference []results.Record) {
	t.Helper()
	tokens := map[int]int{}
	for _, r := range reference {
		tokens[r.Seq] = r.PromptTokens
	}
	distinct := map[int]bool{}
	for _, r := range merged {
		distinct[r.PromptTokens] = true
		if r.PromptTokens == 0 || r.PromptTokens != tokens[r.Seq] {
			t.Errorf("seq %d: %d prompt tokens, the one-process run %d", r.Seq, r.PromptTokens, tokens[r.Seq])
		}
	}
	if len(distinct) < 2 {
		t.Errorf("every prompt has %v tokens: the prompt check would not tell prompts apart", distinct)
	}
}

// Snapshots reads the before and after snapshots merge wrote beside the
// merged results file (shard 0's, saved as .prom, .om or .pb by the format
// the server served).
func Snapshots(t testing.TB, mergedPath string) (before, after *scrape.Snapshot) {
	t.Helper()
	read := func(role string) *scrape.Snapshot {
		paths, _ := filepath.Glob(strings.TrimSuffix(mergedPath, ".jsonl") + "." + role + ".*")
		if len(paths) != 1 {
			t.Fatalf("merged %s snapshots: %v, want one", role, paths)
		}
		snap, err := scrape.ReadSnapshot(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		return snap
	}
	return read("before"), read("after")
}

// ServerDeltas checks that the server's counters between the snapshots
// moved by the merged counts: every request succeeded, and the success and
// audio frame deltas equal the merged records'. It returns the successes.
func ServerDeltas(t testing.TB, before, after *scrape.Snapshot, recs []results.Record) (ok int) {
	t.Helper()
	bf, err := before.Families()
	if err != nil {
		t.Fatal(err)
	}
	af, err := after.Families()
	if err != nil {
		t.Fatal(err)
	}
	d := scrape.Diff(bf, af)
	var frames int
	for _, r := range recs {
		if r.OK() {
			ok++
		}
		frames += int(r.AudioFrames)
	}
	if ok != len(recs) || frames == 0 {
		t.Errorf("%d of %d requests succeeded with %d frames", ok, len(recs), frames)
	}
	if got, found := d.CounterDelta("requests_success_total", nil); !found || got != float64(ok) {
		t.Errorf("server requests_success_total delta %v (found %v), merged successes %d", got, found, ok)
	}
	if got, found := d.CounterDelta("audio_frames_total", nil); !found || got != float64(frames) {
		t.Errorf("server audio_frames_total delta %v (found %v), merged frames %d", got, found, frames)
	}
	return ok
}
