package main

import (
	"bytes"
	"strings"
	"testing"
)

// The commands that run the workload list their flags group by group: a
// flag appears once, under its group's heading.
func TestHelpGroupsFlags(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"run"}, {"sweep"}, {"capacity"}, {"ab"}} {
		root := newRootCmd("test")
		cmd, _, err := root.Find(args)
		if err != nil {
			t.Fatal(err)
		}
		var help bytes.Buffer
		cmd.SetOut(&help)
		if err := cmd.Help(); err != nil {
			t.Fatal(err)
		}
		text := help.String()
		for _, want := range []struct{ heading, flag string }{
			{"Workload flags:", "--model string"},
			{"Load flags:", "--warmup int"},
			{"Client flags:", "--idle-timeout duration"},
			{"Scrape flags:", "--settle duration"},
			{"TLS flags:", "--insecure"},
		} {
			i := strings.Index(text, "\n"+want.heading+"\n")
			if i < 0 {
				t.Errorf("%s --help has no %q section:\n%s", args[0], want.heading, text)
				continue
			}
			section, _, _ := strings.Cut(text[i+len(want.heading)+2:], "\n\n")
			if !strings.Contains(section, want.flag) || strings.Count(text, want.flag) != 1 {
				t.Errorf("%s --help: %s is not listed once, under %q", args[0], want.flag, want.heading)
			}
		}
	}
}
