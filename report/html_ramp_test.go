package report

import (
	"strings"
	"testing"
)

// TestHTMLRampBand: a run with a ramp shades the ramp phase on the
// over-time charts, named in each legend, from the first ramp arrival to
// the first measured one; a run without a ramp shades nothing.
func TestHTMLRampBand(t *testing.T) {
	h := sampleHeader("tts-short")
	overTime := []string{"request-rate", "in-flight", "errors-over-time"}
	for _, withRamp := range []bool{true, false} {
		recs := sampleRecords(400, 5)
		rampEnd := 0.0
		if withRamp {
			for i := range recs[:100] {
				if !recs[i].Warmup {
					recs[i].Phase = "ramp"
					rampEnd = recs[i].SentS
				}
			}
		}
		root := parsePage(t, render(t, HTMLReport{Title: "ramp", Header: h, Sections: RunSections(sampleRunReport(recs, h), recs)}))
		got := charts(t, root)
		for _, id := range overTime {
			svg := got[id]
			if svg == nil {
				t.Fatalf("no chart %q", id)
			}
			bands := svg.all(func(n *node) bool { return n.name == "rect" && n.attrs["class"] == "band" })
			legend := strings.Contains(svg.textOf(), "ramp phase")
			switch {
			case withRamp && (len(bands) != 1 || !legend):
				t.Errorf("ramp run: chart %q has %d bands, legend %v; want one band named in the legend", id, len(bands), legend)
			case !withRamp && (len(bands) != 0 || legend):
				t.Errorf("run without a ramp: chart %q has %d bands, legend %v; want none", id, len(bands), legend)
			}
		}
		if withRamp && rampEnd <= 0 {
			t.Fatal("the sample marks no ramp arrival after time 0")
		}
	}
}
