package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/helptopics"
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
		if c.Hidden || c.Name() == "help" || c.IsAdditionalHelpTopicCommand() {
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

// TestHelpTopics checks that every general topic prints its text through
// `omnibench help TOPIC` and is listed in the root's help.
func TestHelpTopics(t *testing.T) {
	t.Parallel()
	for _, topic := range helptopics.All() {
		code, out, errOut := execHelp(t, "help", topic.Name)
		if code != 0 || errOut != "" {
			t.Errorf("help %s: exit %d, stderr %q", topic.Name, code, errOut)
		}
		if strings.TrimSpace(out) != strings.TrimSpace(topic.Text()) {
			t.Errorf("help %s printed %q, want the topic's text", topic.Name, out)
		}
	}
	_, rootHelp, _ := execHelp(t, "help")
	for _, want := range []string{"Additional help topics:", "exit-status", "figures", "slo "} {
		if !strings.Contains(rootHelp, want) {
			t.Errorf("omnibench help does not list %q:\n%s", want, rootHelp)
		}
	}
	if code, out, _ := execHelp(t, "help", "run"); code != 0 || !strings.Contains(out, "omnibench run [flags]") {
		t.Errorf("help run: exit %d:\n%s", code, out)
	}
	_, completions, _ := execHelp(t, "__complete", "help", "")
	for _, want := range []string{"\nslo\n", "\nfigures\n", "\nexit-status\n", "\nrun\n"} {
		if !strings.Contains("\n"+completions, want) {
			t.Errorf("help does not complete %q:\n%s", strings.TrimSpace(want), completions)
		}
	}
}

// TestHelpUnknownTopicSuggests checks that a name help does not know exits
// 2 with the closest names, or the list of topics when none is close.
func TestHelpUnknownTopicSuggests(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "slos"}, `unknown help topic "slos"; did you mean slo?`},
		{[]string{"help", "exit"}, `did you mean exit-status?`},
		{[]string{"help", "rnu"}, `did you mean run?`},
		{[]string{"help", "nosuch"}, `unknown help topic "nosuch": the topics are exit-status, slo, figures`},
		{[]string{"help", "run", "extra"}, `unknown help topic "run extra"`},
	} {
		code, said := execContract(t, tc.args...)
		if code != 2 || !strings.Contains(said, tc.want) {
			t.Errorf("%q: exit %d, said %q; want exit 2 and %q", tc.args, code, said, tc.want)
		}
	}
}

// execHelp runs `omnibench args...` and returns its exit status, stdout and
// stderr.
func execHelp(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	root := newRootCmd("test")
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.Execute()
	return exitCode(context.Background(), err), out.String(), errb.String()
}
