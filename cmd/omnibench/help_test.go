package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestHelpTexts checks every command's --help: it has examples, every flag
// states its default at most once, and a flag's value placeholder is a type
// or a NAME, never a command name (pflag takes the first `backquoted` word
// of a usage as the placeholder).
func TestHelpTexts(t *testing.T) {
	root := newRootCmd("test")
	commandNames := map[string]bool{}
	walkCommands(root, func(c *cobra.Command) { commandNames[c.Name()] = true })

	walkCommands(root, func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		path := c.CommandPath()
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example in --help", path)
		}
		var help bytes.Buffer
		c.SetOut(&help)
		if err := c.Help(); err != nil {
			t.Fatalf("%s --help: %v", path, err)
		}
		if !strings.Contains(help.String(), "Examples:\n") {
			t.Errorf("%s --help shows no examples:\n%s", path, help.String())
		}
		for _, line := range strings.Split(help.String(), "\n") {
			if strings.Count(line, "(default") > 1 {
				t.Errorf("%s: default stated twice: %s", path, strings.TrimSpace(line))
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if commandNames[name] || strings.HasPrefix(name, "omnibench") || strings.Contains(name, " ") {
				t.Errorf("%s --%s: value placeholder %q is not a type", path, f.Name, name)
			}
		})
	})
}
