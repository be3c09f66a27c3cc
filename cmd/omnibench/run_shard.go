package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/scale/merge"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scrape"
)

// shardOptions are run's flags for one part of a test split over several
// processes (see `omnibench merge` and `omnibench kube render`).
type shardOptions struct {
	shard       string
	startAt     string
	saveScrapes string
}

func (s *shardOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&s.shard, "shard", "", "run shard I/N of the test (I from 0), or auto/N to take I from $"+load.ShardIndexEnv+" (a Kubernetes Indexed Job)")
	f.StringVar(&s.startAt, "start-at", "", "warm up, then wait until this wall-clock time (RFC 3339, or +30s from now) and measure from it; shards need NTP-synchronised clocks")
	f.StringVar(&s.saveScrapes, "save-scrapes", "", "write the server snapshots as PREFIX.before.prom and PREFIX.after.prom (.om, .pb by the format served; read by merge and check)")
}

// apply sets the shard and the agreed start on cfg.
func (s *shardOptions) apply(cfg *runner.Config) error {
	if s.shard != "" {
		sh, err := load.ParseShard(s.shard, os.Getenv)
		if err != nil {
			return fmt.Errorf("--shard: %w", err)
		}
		cfg.Load.Shard = sh
		if _, staged := cfg.Flags["stages"]; staged && sh.Sharded() {
			// Stage targets are worker counts of one process: every shard
			// would run all of them. Not split (yet): refuse, not N times the load.
			return fmt.Errorf("--shard with --stages: stage targets are not split over shards; give each shard its share of the targets, or use -c with --ramp-up")
		}
	}
	if s.startAt != "" {
		at, err := load.ParseStartAt(s.startAt, time.Now())
		if err != nil {
			return fmt.Errorf("--start-at: %w", err)
		}
		cfg.Load.StartAt = at
	}
	if err := cfg.Load.Validate(); err != nil {
		return fmt.Errorf("--shard %s: %w", s.shard, err)
	}
	return nil
}

// nameScrapes sets the files writeScrapes writes the snapshots to on the
// outcome, for the summary to point at.
func (s *shardOptions) nameScrapes(outcome *runner.Outcome) {
	if s.saveScrapes == "" {
		return
	}
	if outcome.Before != nil {
		outcome.BeforeFile = merge.SnapshotPath(s.saveScrapes, merge.RoleBefore, outcome.Before.ContentType)
	}
	if outcome.After != nil {
		outcome.AfterFile = merge.SnapshotPath(s.saveScrapes, merge.RoleAfter, outcome.After.ContentType)
	}
}

// writeScrapes writes the run's snapshots for --save-scrapes. A shard that
// does not scrape writes none, and says so.
func (s *shardOptions) writeScrapes(outcome *runner.Outcome, stderr io.Writer) error {
	if s.saveScrapes == "" {
		return nil
	}
	if outcome.Before == nil && outcome.After == nil {
		fmt.Fprintf(stderr, "omnibench: --save-scrapes: no snapshot to write (%s)\n", outcome.ScrapeNote)
		return nil
	}
	for _, snap := range []struct {
		s    *scrape.Snapshot
		role string
	}{{outcome.Before, merge.RoleBefore}, {outcome.After, merge.RoleAfter}} {
		if snap.s == nil {
			continue
		}
		if err := snap.s.WriteFile(merge.SnapshotPath(s.saveScrapes, snap.role, snap.s.ContentType)); err != nil {
			return fmt.Errorf("--save-scrapes: %w", err)
		}
	}
	return nil
}

// shardLabel is the exporter's shard label value: the index of a sharded
// run, "" otherwise.
func shardLabel(s load.Shard) string {
	if !s.Sharded() {
		return ""
	}
	return strconv.Itoa(s.Index)
}
