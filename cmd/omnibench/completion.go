package main

import "github.com/spf13/cobra"

// registerCompletions registers value completions for cmd's flags.
func registerCompletions(cmd *cobra.Command) {}
