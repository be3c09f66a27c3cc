package report

import (
	"slices"
	"strings"
	"testing"
)

// TestHTMLSweepLevelsTable checks the sweep page's levels table: one table
// (not a second one holding a leftover figure), few enough columns to fit
// the page, every figure header with its unit, and a column each for the
// SLO verdict and for whether the load generator kept up.
func TestHTMLSweepLevelsTable(t *testing.T) {
	levels, slos := sampleSweep()
	levels[4].SLO, levels[4].SLOMissed = "MISS", "audio_ttfp_p95 = 1220 ms, limit <= 1000 ms"
	levels[5].ClientSaturated = "client CPU 97% of its cores"
	root := parsePage(t, render(t, HTMLReport{Title: "sweep", Sections: SweepSections(levels, slos)}))
	tables := levelTablesOf(root)
	if len(tables) != 1 {
		t.Fatalf("%d levels tables, want one", len(tables))
	}
	table := tables[0]
	header := cellsOf(table, "th")
	want := []string{"concurrency (streams)", "TTFP p50 (ms)", "TTFP p95 (ms)", "e2e p95 (ms)", "continuous (%)", "throughput (req/s)", "errors (%)", "SLOs", "load generator"}
	if !slices.Equal(header, want) {
		t.Fatalf("header %q, want %q", header, want)
	}
	rows := table.all(func(n *node) bool { return n.name == "tr" })[1:]
	if len(rows) != len(levels) {
		t.Fatalf("%d rows, want one per level (%d)", len(rows), len(levels))
	}
	for i, r := range rows {
		cells := cellsOf(r, "td")
		slo, gen := cells[len(cells)-2], cells[len(cells)-1]
		wantSLO, wantGen := "pass", "kept up"
		switch i {
		case 4:
			wantSLO = "MISS [1]"
		case 5:
			wantGen = "saturated [2]"
		}
		if slo != wantSLO || gen != wantGen {
			t.Errorf("level %v: SLO %q, load generator %q; want %q, %q", levels[i].X, slo, gen, wantSLO, wantGen)
		}
	}
	if got := cellsOf(rows[3], "td")[4]; got != "97.2" {
		t.Errorf("continuity of level 8 = %q, want a percentage 97.2", got)
	}
	text := root.textOf()
	if !strings.Contains(text, "[1] concurrency (streams) 16: audio_ttfp_p95 = 1220 ms, limit <= 1000 ms") {
		t.Error("the missed level's footnote does not say by how much")
	}
	if !strings.Contains(text, "[2] concurrency (streams) 32: client CPU 97% of its cores") {
		t.Error("the saturated level's footnote does not say why")
	}
}

// TestHTMLSweepLevelsTableWithoutSLOs: no SLO column of dashes.
func TestHTMLSweepLevelsTableWithoutSLOs(t *testing.T) {
	levels, _ := sampleSweep()
	for i := range levels {
		levels[i].SLO = ""
	}
	root := parsePage(t, render(t, HTMLReport{Title: "sweep", Sections: SweepSections(levels, nil)}))
	for _, table := range levelTablesOf(root) {
		if header := cellsOf(table, "th"); slices.Contains(header, "SLOs") {
			t.Errorf("header %q has an SLO column without SLOs", header)
		}
	}
}

// levelTablesOf are the page's tables captioned "Levels...".
func levelTablesOf(root *node) []*node {
	return root.all(func(n *node) bool {
		if n.name != "table" {
			return false
		}
		caps := n.all(func(c *node) bool { return c.name == "caption" })
		return len(caps) == 1 && strings.HasPrefix(caps[0].textOf(), "Levels")
	})
}

// cellsOf is the text of n's cells of the element name (th or td).
func cellsOf(n *node, name string) []string {
	var out []string
	for _, c := range n.all(func(c *node) bool { return c.name == name }) {
		out = append(out, strings.TrimSpace(c.textOf()))
	}
	return out
}
