package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

func newRootCmd(version string) *cobra.Command {
	root := &cobra.Command{
		Use:   "omnibench",
		Short: "Benchmark streaming speech/omni servers and validate their Prometheus metrics",
		Long: `omnibench fires streaming chat and speech requests at a vLLM-Omni (or any
OpenAI-compatible) server, timestamps every audio chunk, computes TTFP, RTF and
playback continuity, scrapes /metrics before and after, and compares what the
server says with what the client measured. Without --url it runs against its
own embedded simulator.`,
		Example: `  omnibench run -n 20                 # a first run against the embedded simulator
  omnibench run --url http://127.0.0.1:8000 --scenario tts-short --out run.jsonl
  omnibench check http://127.0.0.1:8000/metrics
  omnibench sweep -c 1,2,4,8 --url http://127.0.0.1:8000`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Every command's stdout and stderr go through its redactor, and
		// no command starts with input that cannot go on the wire.
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if err := redactOutputs(cmd, args); err != nil {
				return err
			}
			return checkWireInput(cmd, args)
		},
	}
	// A flag that does not parse is unusable input, like any other bad flag.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
	// So is a command that does not exist. Cobra reports one only when the
	// root takes no arguments of its own; these two keep its wording and
	// suggestions but exit 2, and `omnibench` alone still prints the help.
	root.SuggestionsMinimumDistance = 2
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			msg += "; did you mean " + strings.Join(s, " or ") + "?"
		}
		return withExitCode(2, fmt.Errorf("%s (see omnibench --help)", msg))
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.AddCommand(
		// Subcommands register here, one constructor per command file.
		newRunCmd(),
		newReportCmd(),
		newCompareCmd(),
		newReplayCmd(),
		newScenariosCmd(),
		newServeCmd(),
		newScrapeCmd(),
		newDiffCmd(),
		newCheckCmd(),
		newSweepCmd(),
		newCapacityCmd(),
		newABCmd(),
		newMergeCmd(),
		newKubeCmd(),
	)
	addHelp(root)        // help topics, the help command and gen-docs
	finishCommands(root) // help defaults and value completions of every command
	redactErrors(root)   // returned errors are redacted like the output
	// Wrong arguments to any command are unusable input too.
	for _, c := range root.Commands() {
		if c.Args != nil {
			c.Args = usageArgs(c.Args)
		}
	}
	return root
}

// usageArgs marks an argument-count error as unusable input (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return withExitCode(2, err)
		}
		return nil
	}
}
