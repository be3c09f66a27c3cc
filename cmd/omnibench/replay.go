package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/experiment/replay"
	"github.com/omnibench/omnibench/report"
)

// replayOptions holds the flags of `omnibench replay`.
type replayOptions struct {
	thresholds []string
	mode       string
	prebuffer  time.Duration
	maxWait    time.Duration
	format     string
	wide       bool
}

func newReplayCmd() *cobra.Command {
	o := replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run the playback continuity models over recorded chunk arrivals",
		Long: `replay reads recorded audio chunk timelines and judges whether each response
would have played without gaps, with three listener models:

  underrun      the reference never-pausing player (docs/reference/continuity.md): the
                worst playback deficit (max underrun) and the number of late
                chunks; a response is continuous when its max underrun is at
                most --threshold
  stall-resume  a player that starts at the first chunk and pauses whenever it
                runs dry: stalls, total and longest stall
  pre-roll      a player that first buffers --prebuffer of audio (or waits at
                most --prebuffer-max-wait), then plays like stall-resume

FILE is either a trace file, one response per JSON line:
  {"id":"r1","sample_rate":24000,"arrivals_s":[0.21,0.27],"bytes":[2880,2880]}
(optional "sample_width", bytes per sample, default 2, and "channels",
default 1; arrivals are seconds, non-decreasing), or the results file of
"omnibench run" (warm-up and failed requests are skipped). "-" reads stdin.

--mode reference reproduces the reference exactly, floating-point residue
included (what servers export); --mode default takes times relative to the
first arrival and counts a deficit only when it is at least one sample frame.

Exit status: 0 done, 2 unusable input (bad flags, unreadable or malformed file).`,
		Example: `  omnibench replay traces.jsonl
  omnibench replay run.jsonl --threshold 100ms --threshold 0.25 --format markdown
  omnibench replay run.jsonl --mode reference --prebuffer 300ms --prebuffer-max-wait 1s --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.ExactArgs(1)(cmd, args); err != nil {
				return withExitCode(2, err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, o, args[0])
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&o.thresholds, "threshold", []string{"0.1"}, "continuity threshold, seconds (0.1) or a duration (100ms); repeatable or comma-separated")
	f.StringVar(&o.mode, "mode", continuity.Default.String(), "underrun counting: default or reference")
	f.DurationVar(&o.prebuffer, "prebuffer", 200*time.Millisecond, "audio the pre-roll player buffers before it starts")
	f.DurationVar(&o.maxWait, "prebuffer-max-wait", 0, "longest the pre-roll player waits after the first chunk (0 = until --prebuffer is full)")
	f.StringVar(&o.format, "format", report.FormatTable, "output format: table, markdown, json or csv")
	addWideFlag(f, &o.wide)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(replayFormats(), cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"default", "reference"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func replayFormats() []string {
	return []string{report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV}
}

func runReplay(cmd *cobra.Command, o replayOptions, path string) error {
	opts, err := o.replayOptions()
	if err != nil {
		return withExitCode(2, err)
	}
	var file *replay.File
	if path == "-" {
		file, err = replay.Read("stdin", cmd.InOrStdin())
	} else if file, err = replay.ReadFile(path); err != nil {
		err = notResultsFile(path, err, false)
	}
	if err != nil {
		return withExitCode(2, err)
	}
	if len(file.Traces) == 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "omnibench replay: %s holds no response to replay\n", file.Name)
	}
	responses, sum := replay.Run(file.Traces, opts)
	out := cmd.OutOrStdout()
	if o.format == report.FormatJSON {
		return replay.WriteJSON(out, file, responses, sum)
	}
	return renderTables(out, o.format, o.wide, replay.Tables(file, opts, responses, sum)...)
}

// replayOptions validates the flags and turns them into replay.Options.
func (o replayOptions) replayOptions() (replay.Options, error) {
	var opts replay.Options
	if err := report.CheckFormat(o.format, replayFormats()...); err != nil {
		return opts, err
	}
	mode, err := continuity.ParseMode(o.mode)
	if err != nil {
		return opts, fmt.Errorf("--mode: %w", err)
	}
	opts.Mode = mode
	seen := map[string]bool{}
	for _, s := range o.thresholds {
		th, err := continuity.ParseThreshold(s)
		if err != nil {
			return opts, fmt.Errorf("--threshold: %w", err)
		}
		// 0.1 and 100ms are the same threshold: one column, not two.
		if l := continuity.ThresholdLabel(th); !seen[l] {
			seen[l] = true
			opts.Thresholds = append(opts.Thresholds, th)
		}
	}
	if len(opts.Thresholds) == 0 {
		return opts, fmt.Errorf("--threshold: at least one threshold is needed")
	}
	if o.prebuffer < 0 || o.maxWait < 0 {
		return opts, fmt.Errorf("--prebuffer %v / --prebuffer-max-wait %v: must not be negative", o.prebuffer, o.maxWait)
	}
	opts.Prebuffer = continuity.PrerollConfig{BufferS: o.prebuffer.Seconds(), MaxWaitS: o.maxWait.Seconds()}
	return opts, nil
}
