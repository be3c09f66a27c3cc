package main

import (
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

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
