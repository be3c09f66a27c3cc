package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/replay"
	"github.com/omnibench/omnibench/report"
)

// replayOptions holds the flags of `omnibench replay`.
type replayOptions struct {
	thresholds []string
	mode       string
	prebuffer  time.Duration
	maxWait    time.Duration
	format     string
}

func newReplayCmd() *cobra.Command {
	o := replayOptions{}
	cmd := &cobra.Command{
		Use:   "replay FILE",
		Short: "Re-run the playback continuity models over recorded chunk arrivals",
		Long: `replay reads recorded audio chunk timelines and judges whether each response
would have played without gaps, with three listener models:

  underrun      the reference never-pausing player (protocol section 7): the
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
	} else {
		file, err = replay.ReadFile(path)
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
		return writeReplayJSON(out, file, responses, sum)
	}
	return report.Render(out, o.format, replayTables(file, opts, responses, sum)...)
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
		th, err := parseSeconds(s)
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

// parseSeconds accepts seconds as a number ("0.1") or a Go duration ("100ms").
func parseSeconds(s string) (float64, error) {
	s = strings.TrimSpace(s)
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		d, derr := time.ParseDuration(s)
		if derr != nil {
			return 0, fmt.Errorf("%q: want seconds (0.1) or a duration (100ms)", s)
		}
		v = d.Seconds()
	}
	if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q: must be a finite, non-negative time", s)
	}
	return v, nil
}

// replayJSON is the --format json document: the file read, one entry per
// response (the same continuity shape as a run's results records) and the
// summary. Times are seconds.
type replayJSON struct {
	File      string            `json:"file"`
	Format    string            `json:"format"` // "trace" or "results"
	Skipped   map[string]int    `json:"skipped,omitempty"`
	Responses []replay.Response `json:"responses"`
	Summary   replay.Summary    `json:"summary"`
}

func writeReplayJSON(w io.Writer, file *replay.File, responses []replay.Response, sum replay.Summary) error {
	b, err := json.MarshalIndent(replayJSON{File: file.Name, Format: file.Format, Skipped: file.Skipped, Responses: responses, Summary: sum}, "", "  ")
	if err != nil {
		return fmt.Errorf("replay: encode JSON: %w", err)
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func replayTables(file *replay.File, opts replay.Options, responses []replay.Response, sum replay.Summary) []report.Table {
	header := []string{"id", "chunks", "audio s", "max underrun ms", "events"}
	for _, th := range opts.Thresholds {
		header = append(header, "ok <="+continuity.ThresholdLabel(th)+"ms")
	}
	header = append(header, "stall-resume stalls", "stall-resume total ms", "pre-roll start ms", "pre-roll stalls", "pre-roll total ms")
	per := report.Table{Title: "Responses (" + file.Name + ")", Header: header}
	for _, r := range responses {
		row := []string{r.ID, strconv.Itoa(r.Chunks), fmt.Sprintf("%.2f", r.AudioS), ms(r.MaxUnderrunS), strconv.Itoa(r.UnderrunEvents)}
		for _, th := range opts.Thresholds {
			row = append(row, yesNo(r.OK[continuity.ThresholdLabel(th)]))
		}
		row = append(row,
			strconv.Itoa(r.StallResume.Stalls), ms(r.StallResume.TotalStallS),
			ms(r.Preroll.StartupDelayS), strconv.Itoa(r.Preroll.Stalls), ms(r.Preroll.TotalStallS))
		per.Rows = append(per.Rows, row)
	}

	s := report.Table{Title: "Summary", Header: []string{"metric", "value"}}
	add := func(k, v string) { s.Rows = append(s.Rows, []string{k, v}) }
	add("responses", strconv.Itoa(sum.Responses))
	if len(file.Skipped) > 0 {
		add("skipped", skippedText(file.Skipped))
	}
	add("audio s", fmt.Sprintf("%.2f", sum.AudioS))
	for _, th := range opts.Thresholds {
		l := continuity.ThresholdLabel(th)
		add("continuous <="+l+"ms", fmt.Sprintf("%.1f%%", 100*sum.ContinuousRate[l]))
	}
	add("responses with underrun", strconv.Itoa(sum.WithUnderrun))
	add("mean max underrun ms", ms(sum.MeanMaxUnderrunS))
	add("worst max underrun ms", ms(sum.MaxMaxUnderrunS))
	add("mean underrun events", fmt.Sprintf("%.2f", sum.MeanUnderrunEvents))
	for _, p := range []struct {
		name string
		s    replay.PlayerSummary
	}{{"stall-resume", sum.StallResume}, {"pre-roll", sum.Preroll}} {
		if p.name == "pre-roll" {
			add("pre-roll mean start-up ms", ms(p.s.MeanStartupDelayS))
			add("pre-roll max start-up ms", ms(p.s.MaxStartupDelayS))
		}
		add(p.name+" responses with stalls", strconv.Itoa(p.s.WithStalls))
		add(p.name+" mean stalls", fmt.Sprintf("%.2f", p.s.MeanStalls))
		add(p.name+" mean total stall ms", ms(p.s.MeanTotalStallS))
		add(p.name+" max total stall ms", ms(p.s.MaxTotalStallS))
		add(p.name+" longest stall ms", ms(p.s.LongestStallS))
	}
	modeNote := "mode default: times relative to the first arrival; a deficit counts only when it is at least one sample frame"
	if opts.Mode == continuity.Reference {
		modeNote = "mode reference: bit-compatible with the vLLM-Omni reference benchmark (what servers export), rounding residue included"
	}
	wait := "no wait limit"
	if opts.Prebuffer.MaxWaitS > 0 {
		wait = "waits at most " + ms(opts.Prebuffer.MaxWaitS) + " ms"
	}
	s.Notes = []string{
		"underrun: never-pausing player from the first chunk (protocol section 7); continuous = max underrun <= threshold",
		modeNote,
		"stall-resume: starts at the first chunk, pauses when dry; pre-roll: buffers " + ms(opts.Prebuffer.BufferS) + " ms first (" + wait + ")",
	}
	return []report.Table{per, s}
}

func ms(s float64) string { return fmt.Sprintf("%.1f", s*1000) }

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// skippedText lists skip reasons in a stable order: "failed 1, warmup 2".
func skippedText(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + " " + strconv.Itoa(m[k])
	}
	return strings.Join(parts, ", ")
}
