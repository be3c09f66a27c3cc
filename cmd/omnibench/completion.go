package main

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/omnibench/omnibench/check"
	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/wsclient"
)

// flagValues are the values shell completion offers for a flag, by flag
// name, wherever a command has it. A command that registered its own
// completion for a flag (check's --format, replay's --mode) keeps it.
var flagValues = map[string][]string{
	"format":          {report.FormatTable, report.FormatMarkdown, report.FormatJSON, report.FormatCSV},
	"kind":            scenarios.Kinds(),
	"ws-audio":        wsclient.SpeechModes(),
	"arrival":         {load.Constant, load.Poisson, load.Gamma},
	"continuity-mode": {continuity.Default.String(), continuity.Reference.String()},
	"accept":          acceptValues(),
	"scrape":          {"auto", "on", "off"},
	"audio-format":    {"wav", "pcm", "flac", "mp3", "opus"},
	"profile":         append(check.ProfileNames(), "none"),
	"by":              {"concurrency", "rate"},
}

// registerCompletions registers value completions for cmd's own flags.
func registerCompletions(cmd *cobra.Command) {
	f := cmd.Flags()
	for name, values := range flagValues {
		if f.Lookup(name) != nil {
			if _, ok := cmd.GetFlagCompletionFunc(name); !ok {
				_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions(slices.Clone(values), cobra.ShellCompDirectiveNoFileComp))
			}
		}
	}
	if f.Lookup("scenario") != nil {
		if _, ok := cmd.GetFlagCompletionFunc("scenario"); !ok {
			_ = cmd.RegisterFlagCompletionFunc("scenario", completeScenario)
		}
	}
}

// completeScenario offers the built-in scenario names and the scenario
// files (*.yaml, *.yml) matching what was typed so far.
func completeScenario(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, n := range scenarios.Names() {
		if strings.HasPrefix(n, toComplete) {
			out = append(out, n)
		}
	}
	for _, pattern := range []string{"*.yaml", "*.yml"} {
		files, _ := filepath.Glob(toComplete + pattern)
		out = append(out, files...)
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
