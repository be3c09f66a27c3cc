package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/helptopics"
	"github.com/omnibench/omnibench/internal/spelling"
)

// addHelp gives root the general help topics (`omnibench help slo`), a help
// command that knows them and suggests the closest name for a typo, and the
// hidden gen-docs command that writes the same help into docs/.
func addHelp(root *cobra.Command) {
	for _, t := range helptopics.All() {
		// A command without Run and subcommands is what cobra lists as an
		// additional help topic.
		root.AddCommand(&cobra.Command{Use: t.Name, Short: t.Short, Long: t.Text()})
	}
	root.SetHelpCommand(newHelpCmd())
	root.AddCommand(newGenDocsCmd())
}

// newHelpCmd replaces cobra's help command, which answers an unknown name
// with the whole usage and exit status 0, by one that says what it did not
// find, suggests the closest command or topic and exits 2.
func newHelpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command | topic]",
		Short: "Help about any command, or a general topic",
		Long: `Help prints the help of a command (the same as its --help) or of a general
topic: exit-status, slo (the --slo grammar) or figures (what a run reports).`,
		Example: `  omnibench help run
  omnibench help slo
  omnibench help exit-status`,
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return helpNames(cmd.Root()), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 {
				return withExitCode(2, unknownHelp(root, args))
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		},
	}
}

// helpNames lists what `omnibench help` can be asked about: the commands
// and the topics.
func helpNames(root *cobra.Command) []string {
	var names []string
	for _, c := range root.Commands() {
		if c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand() {
			names = append(names, c.Name())
		}
	}
	return names
}

// unknownHelp says that `omnibench help args...` names nothing, with the
// names closest to the first unknown word.
func unknownHelp(root *cobra.Command, args []string) error {
	word := strings.Join(args, " ")
	close := spelling.Nearest(args[0], helpNames(root))
	if len(close) > 0 {
		return fmt.Errorf("unknown help topic %q; did you mean %s? (see omnibench help)", word, strings.Join(close, " or "))
	}
	var topics []string
	for _, t := range helptopics.All() {
		topics = append(topics, t.Name)
	}
	return fmt.Errorf("unknown help topic %q: the topics are %s, and omnibench help lists the commands", word, strings.Join(topics, ", "))
}

// finishCommands applies what every command's help and completion share,
// once all commands and their flags exist: each default printed once, and
// the value completions.
func finishCommands(root *cobra.Command) {
	walkCommands(root, func(c *cobra.Command) {
		c.Flags().VisitAll(stateDefaultOnce)
		registerCompletions(c)
	})
}

// walkCommands calls fn for cmd and every command below it.
func walkCommands(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, c := range cmd.Commands() {
		walkCommands(c, fn)
	}
}

// stateDefaultOnce keeps pflag from adding "(default [])" or "(default -1)"
// to a flag whose usage already states its default in words (because the
// real default comes from the scenario or the URL): pflag prints DefValue
// unless it is the zero value of the flag's type.
func stateDefaultOnce(f *pflag.Flag) {
	if !strings.Contains(f.Usage, "(default ") {
		return
	}
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "count":
		f.DefValue = "0"
	case "duration":
		f.DefValue = "0s"
	case "bool":
		f.DefValue = "false"
	case "stringSlice", "intSlice", "stringArray":
		f.DefValue = "[]"
	default:
		f.DefValue = ""
	}
}
