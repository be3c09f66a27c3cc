package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/spelling"
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
	// A command that does not exist is unusable input (exit 2). Cobra
	// reports one only when the root takes no arguments of its own; this
	// keeps its wording and suggestions, and `omnibench` alone still
	// prints the help.
	root.SuggestionsMinimumDistance = 2
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) == 0 {
			return nil
		}
		return unknownCommand(cmd, args[0])
	}
	root.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	root.AddCommand(
		// Subcommands register here, one constructor per command file.
		newRunCmd(nil),
		newReportCmd(),
		newCompareCmd(),
		newReplayCmd(),
		newScenariosCmd(),
		newServeCmd(),
		newScrapeCmd(),
		newDiffCmd(),
		newCheckCmd(),
		newSweepCmd(nil),
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
	addCompletionCmd(root)
	// So is a flag that does not parse, on every command.
	forEachCommand(root, func(c *cobra.Command) { c.SetFlagErrorFunc(flagError) })
	return root
}

// forEachCommand calls fn for c and every command under it.
func forEachCommand(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		forEachCommand(sub, fn)
	}
}

// unknownCommand is the error of a command name that does not exist, with
// cobra's suggestions.
func unknownCommand(cmd *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, cmd.CommandPath())
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return withExitCode(2, fmt.Errorf("%s (see omnibench --help)", msg))
}

// flagError is the error of a flag that does not parse (exit 2). An unknown
// flag gets the nearest known ones as suggestions; on the root, after a
// word that is no command (`omnibench runn --url X`), the unknown command
// is the error: the flag is unknown only because the command is.
func flagError(cmd *cobra.Command, err error) error {
	if !cmd.HasParent() {
		if args := cmd.Flags().Args(); len(args) > 0 {
			return unknownCommand(cmd, args[0])
		}
	}
	var unknown *pflag.NotExistError
	if errors.As(err, &unknown) && unknown.GetSpecifiedName() != "" {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		cmd.InheritedFlags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		slices.Sort(names)
		names = slices.Compact(names) // a persistent flag is in both sets
		err = fmt.Errorf("%w%s", err, spelling.Phrase("--", spelling.Nearest(unknown.GetSpecifiedName(), names)))
	}
	return withExitCode(2, err)
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
