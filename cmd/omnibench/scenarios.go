package main

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
)

// scenariosOptions holds the flags of `omnibench scenarios`.
type scenariosOptions struct {
	format string
}

// scenariosFormats are the --format values of the listing.
func scenariosFormats() []string {
	return []string{report.FormatTable, report.FormatMarkdown, report.FormatCSV, report.FormatJSON}
}

func newScenariosCmd() *cobra.Command {
	o := scenariosOptions{}
	cmd := &cobra.Command{
		Use:   "scenarios [NAME | FILE.yaml]",
		Short: "List the built-in workloads, print one, or check a scenario file",
		Long: `Without an argument, scenarios lists the built-in workloads (name, request
kind, model, description). With the name of a built-in it prints its YAML,
a starting point for your own file. With a path to a YAML file it loads and
validates the file (unknown fields and invalid values are reported with
their line) and prints the scenario as omnibench reads it, defaults filled in.`,
		Example: `  omnibench scenarios
  omnibench scenarios tts-short > my-tts.yaml
  omnibench scenarios ./my-tts.yaml`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return scenarios.Names(), cobra.ShellCompDirectiveDefault
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				return showScenario(cmd, args[0])
			}
			if err := report.CheckFormat(o.format, scenariosFormats()...); err != nil {
				return withExitCode(2, err)
			}
			return listScenarios(cmd, o)
		},
	}
	cmd.Flags().StringVar(&o.format, "format", report.FormatTable, "listing format: table, markdown, csv or json")
	_ = cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(scenariosFormats(), cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

// scenarioEntry is one line of the listing; also the JSON schema of
// `omnibench scenarios --format json`.
type scenarioEntry struct {
	Name        string `json:"name"`
	Kind        string `json:"kind"`
	Endpoint    string `json:"endpoint"`
	Model       string `json:"model"`
	AudioFormat string `json:"audio_format"`
	Description string `json:"description"`
}

func listScenarios(cmd *cobra.Command, o scenariosOptions) error {
	if err := report.CheckFormat(o.format, scenariosFormats()...); err != nil {
		return err
	}
	var entries []scenarioEntry
	for _, name := range scenarios.Names() {
		s, err := scenarios.Get(name)
		if err != nil {
			return err
		}
		entries = append(entries, scenarioEntry{
			Name: s.Name, Kind: s.Kind, Endpoint: s.EndpointPath(), Model: s.Model,
			AudioFormat: s.AudioFormat, Description: s.Description,
		})
	}
	out := cmd.OutOrStdout()
	if o.format == report.FormatJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(entries)
	}
	t := report.Table{
		Title:  "Built-in scenarios",
		Header: []string{"name", "kind", "format", "model", "description"},
		Notes: []string{
			"omnibench scenarios NAME prints a scenario's YAML; omnibench run --scenario NAME|FILE uses one.",
		},
	}
	for _, e := range entries {
		t.Rows = append(t.Rows, []string{e.Name, e.Kind, e.AudioFormat, e.Model, e.Description})
	}
	return report.Render(out, o.format, t)
}

// showScenario prints a built-in's YAML as shipped, or checks a scenario
// file and prints it as read.
func showScenario(cmd *cobra.Command, nameOrPath string) error {
	if slices.Contains(scenarios.Names(), nameOrPath) {
		src, err := scenarios.Source(nameOrPath)
		if err != nil {
			return err
		}
		_, err = cmd.OutOrStdout().Write(src)
		return err
	}
	// A scenario that does not load is unusable input, as it is for run.
	s, err := scenarios.Open(nameOrPath)
	if err != nil {
		return withExitCode(2, err)
	}
	if _, err := s.Prompts(); err != nil {
		return withExitCode(2, fmt.Errorf("scenario %s: %w", nameOrPath, err))
	}
	enc := yaml.NewEncoder(cmd.OutOrStdout())
	enc.SetIndent(2)
	if err := enc.Encode(s); err != nil {
		return fmt.Errorf("scenario %s: %w", nameOrPath, err)
	}
	return enc.Close()
}
