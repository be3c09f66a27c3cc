package main

import (
	"testing"

	"github.com/spf13/cobra"
)

// parseOnly executes cmd with args; the command's run hook stops it before
// anything runs.
func parseOnly(t *testing.T, cmd *cobra.Command, args ...string) {
	t.Helper()
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		t.Fatalf("%s %q: %v", cmd.Name(), args, err)
	}
}

// run's flags reach the plan: the flags given replace the scenario's
// values, the others keep them.
func TestRunFlagsParseWithoutRunning(t *testing.T) {
	t.Parallel()
	var got *runOptions
	cmd := newRunCmd(func(o *runOptions) error { got = o; return nil })
	parseOnly(t, cmd, "--scenario", "tts-short", "-c", "3", "-n", "7", "--voice", "flag-voice")
	if got == nil {
		t.Fatal("the run hook was not called")
	}
	cfg, sc, err := got.plan(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Load.Concurrency != 3 || cfg.Load.Requests != 7 || sc.Voice != "flag-voice" || sc.Name != "tts-short" {
		t.Errorf("load %+v, scenario %s voice %q: want -c 3, -n 7 and --voice over tts-short", cfg.Load, sc.Name, sc.Voice)
	}
	if cfg.Target != "" {
		t.Errorf("target %q: want none (the embedded simulator)", cfg.Target)
	}
}

// sweep's level flags replace run's -c, and its own defaults (no scrape
// per level) hold.
func TestSweepFlagsParseWithoutRunning(t *testing.T) {
	t.Parallel()
	var got *sweepOptions
	cmd := newSweepCmd(func(o *sweepOptions) error { got = o; return nil })
	parseOnly(t, cmd, "-c", "1:4", "-n", "5", "--slo", "e2e_p50<10s")
	if got == nil {
		t.Fatal("the run hook was not called")
	}
	if got.concurrency != "1:4" || got.run.requests != 5 || got.run.scrape != "off" || len(got.slos) != 1 {
		t.Errorf("options %+v: want levels 1:4, -n 5, --scrape off and one --slo", got)
	}
	cfg, _, err := got.run.plan(cmd.Flags())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Load.Requests != 5 {
		t.Errorf("load %+v: want -n 5 per level", cfg.Load)
	}
}
