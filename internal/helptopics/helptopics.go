// Package helptopics holds the general help topics of the command line
// (`omnibench help exit-status`, `slo`, `figures`): text that belongs to no
// one command. The same text is printed by `omnibench help TOPIC` and
// written into the CLI reference (docs/cli/) by `omnibench gen-docs`, so the
// two cannot disagree.
//
// The text is Markdown kept readable as plain text in a terminal: headings,
// paragraphs and indented blocks, no tables.
package helptopics

import (
	"embed"
	"fmt"
	"strings"

	"github.com/omnibench/omnibench/internal/run/slo"
)

//go:embed *.md
var texts embed.FS

// Topic is one help topic.
type Topic struct {
	Name  string // as typed after `omnibench help`
	Short string // one line for the list of topics
	// extra appends text generated from the code's own tables.
	extra func() string
}

// All returns the topics in the order the help lists them.
func All() []Topic {
	return []Topic{
		{Name: "exit-status", Short: "What each exit status of omnibench means"},
		{Name: "slo", Short: "The --slo grammar: figures, operators, units", extra: sloFigureNames},
		{Name: "figures", Short: "The figures a run reports and how each is measured"},
	}
}

// Text returns the topic's Markdown, ending in a newline. Every topic of
// All has its file (a test checks it); a build without it says so instead
// of printing nothing.
func (t Topic) Text() string {
	b, err := texts.ReadFile(t.Name + ".md")
	if err != nil {
		return fmt.Sprintf("The help topic %s is missing from this build: %v\n", t.Name, err)
	}
	text := string(b)
	if t.extra != nil {
		text += "\n" + t.extra()
	}
	return text
}

// sloFigureNames lists the figure names the SLO parser accepts, from the
// parser's own table (slo.Figures), so the list cannot go stale.
func sloFigureNames() string {
	var b strings.Builder
	b.WriteString("## Figure names\n\n")
	for _, name := range slo.Figures() {
		b.WriteString("    " + name + "\n")
	}
	return b.String()
}
