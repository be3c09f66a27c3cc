package helptopics

import (
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/slo"
)

// TestEveryTopicHasItsText checks that each topic's file is embedded and
// starts with its heading.
func TestEveryTopicHasItsText(t *testing.T) {
	for _, topic := range All() {
		text := topic.Text()
		if !strings.HasPrefix(text, "# ") || strings.Contains(text, "missing from this build") {
			t.Errorf("topic %s: text %.80q", topic.Name, text)
		}
	}
}

// TestFiguresTopicDefinesEveryFigure checks the figures topic against the
// SLO parser's table: a figure added there without a definition here fails.
func TestFiguresTopicDefinesEveryFigure(t *testing.T) {
	var figures, sloTopic string
	for _, topic := range All() {
		switch topic.Name {
		case "figures":
			figures = topic.Text()
		case "slo":
			sloTopic = topic.Text()
		}
	}
	for _, name := range slo.Figures() {
		base := strings.TrimSuffix(name, "_<stat>")
		if !strings.Contains(figures, base) {
			t.Errorf("figure %s is not defined in the figures topic (figures.md)", base)
		}
		if !strings.Contains(sloTopic, "    "+name+"\n") {
			t.Errorf("figure %s is not listed in the slo topic", name)
		}
	}
}
