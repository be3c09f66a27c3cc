package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// flagGroupKey is the flag annotation that names a flag's group.
const flagGroupKey = "omnibench_group"

// flagGroupOrder is the order of the group sections in --help.
func flagGroupOrder() []string {
	return []string{groupTarget, groupWorkload, groupLoad, groupClient, groupContinuity,
		groupReport, groupScrape, groupWebSocket, groupTLS, groupSimulator}
}

// addGroup adds the flags register declares to f, marked as group's: the
// command's --help lists them under the group's heading.
func addGroup(f *pflag.FlagSet, group string, register func(*pflag.FlagSet)) {
	g := pflag.NewFlagSet(group, pflag.ContinueOnError)
	register(g)
	g.VisitAll(func(fl *pflag.Flag) {
		if fl.Annotations == nil {
			fl.Annotations = map[string][]string{}
		}
		fl.Annotations[flagGroupKey] = []string{group}
	})
	f.AddFlagSet(g)
}

// groupFlags splits fs by group: the flags of no group first (heading
// "Flags"), then each group's, in flagGroupOrder. Empty groups are left out.
func groupFlags(fs *pflag.FlagSet) (headings []string, sets []*pflag.FlagSet) {
	byGroup := map[string]*pflag.FlagSet{}
	fs.VisitAll(func(fl *pflag.Flag) {
		group := ""
		if g := fl.Annotations[flagGroupKey]; len(g) == 1 {
			group = g[0]
		}
		if byGroup[group] == nil {
			byGroup[group] = pflag.NewFlagSet(group, pflag.ContinueOnError)
		}
		byGroup[group].AddFlag(fl)
	})
	for _, group := range append([]string{""}, flagGroupOrder()...) {
		set := byGroup[group]
		if set == nil || !set.HasAvailableFlags() {
			continue
		}
		heading := "Flags"
		if group != "" {
			heading = group + " flags"
		}
		headings, sets = append(headings, heading), append(sets, set)
	}
	return headings, sets
}

// groupedUsage is cobra's usage of a command without subcommands, with
// the command's own flags listed group by group.
func groupedUsage(c *cobra.Command) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Usage:\n  %s", c.UseLine())
	if len(c.Aliases) > 0 {
		fmt.Fprintf(&b, "\n\nAliases:\n  %s", c.NameAndAliases())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\n\nExamples:\n%s", c.Example)
	}
	headings, sets := groupFlags(c.LocalFlags())
	for i, set := range sets {
		fmt.Fprintf(&b, "\n\n%s:\n%s", headings[i], strings.TrimRight(set.FlagUsages(), " \t\n"))
	}
	if c.HasAvailableInheritedFlags() {
		fmt.Fprintf(&b, "\n\nGlobal Flags:\n%s", strings.TrimRight(c.InheritedFlags().FlagUsages(), " \t\n"))
	}
	b.WriteString("\n")
	_, err := fmt.Fprint(c.OutOrStderr(), b.String())
	return err
}
