package main

import (
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
		// Every command's stdout and stderr go through its redactor.
		PersistentPreRunE: redactOutputs,
	}
	// A flag that does not parse is unusable input, like any other bad flag.
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withExitCode(2, err) })
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
	finishCommands(root) // help defaults and value completions of every command
	redactErrors(root)   // returned errors are redacted like the output
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
