package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/internal/scale/merge"
	"github.com/omnibench/omnibench/report"
)

type mergeOptions struct {
	out    string
	prefer string
	keep   []string
	format string
}

func newMergeCmd() *cobra.Command {
	o := &mergeOptions{}
	cmd := &cobra.Command{
		Use:   "merge SHARD.jsonl... --out merged.jsonl",
		Short: "Join the results files of the shards of one test (run --shard I/N) into one",
		Long: `merge checks that its files are the shards of one test (run --shard I/N with
the same seed, scenario, load, target and --start-at, every index 0..N-1 once)
and writes one results file that report, compare, replay and check --run read
like a one-process run's. It holds the shards' raw measured records, so its
percentiles, continuity rates and counts are exact, not approximated; evaluate
SLOs on it with "omnibench report merged.jsonl --slo ...".

Shard 0's --save-scrapes snapshots (SHARD.before.prom and SHARD.after.prom
beside SHARD.jsonl) are copied beside the output, the earliest before and the
latest after across shards, for "omnibench check BEFORE AFTER --run OUT".

A retried shard leaves two files of one index: merge refuses them unless told
which to keep (--keep FILE, or --prefer newest). Exit 2 when the files are not
the shards of one test, naming what differs or is missing.`,
		Example: `  omnibench merge results/shard-*.jsonl --out merged.jsonl
  omnibench merge shard-*.jsonl --prefer newest --out merged.jsonl
  omnibench report merged.jsonl --slo 'audio_ttfp_p95<500ms'`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.out == "" {
				return withExitCode(2, fmt.Errorf("--out: the merged results file is required"))
			}
			if err := report.CheckFormat(o.format, report.FormatTable, report.FormatMarkdown, report.FormatCSV); err != nil {
				return withExitCode(2, err)
			}
			shards := make([]merge.Shard, 0, len(args))
			for _, path := range args {
				s, err := merge.ReadShard(path)
				if err != nil {
					return withExitCode(2, err)
				}
				shards = append(shards, s)
			}
			res, err := merge.Merge(shards, merge.Options{Prefer: o.prefer, Keep: o.keep})
			if err != nil {
				return withExitCode(2, err)
			}
			snaps, err := res.WriteFiles(o.out)
			if err != nil {
				return err
			}
			t := res.Table()
			t.Notes = append(t.Notes, fmt.Sprintf("wrote %s (%d records)", strings.Join(append([]string{o.out}, snaps...), ", "), len(res.Records)))
			return report.Render(cmd.OutOrStdout(), o.format, t)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "merged results file to write (required)")
	f.StringVar(&o.prefer, "prefer", "", "of two files of one shard index, keep the "+merge.PreferNewest+" (by its header's started_at)")
	f.StringArrayVar(&o.keep, "keep", nil, "of two files of one shard index, keep this one (repeatable)")
	f.StringVar(&o.format, "format", "table", "output format: table, markdown or csv")
	return cmd
}
