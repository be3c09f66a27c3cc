package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/stats"
)

// ABArm is one side of an A/B comparison: its name and the per-request
// samples of each metric (metric -> values), with each metric's unit.
type ABArm struct {
	Name    string
	Samples map[string][]float64
	Units   map[string]string
}

// ABSections builds an A/B report: the given tables, then for every metric
// either arm has, the two CDFs overlaid in two colours, A solid and B
// dashed, on shared axes (data-chart "ab-cdf-<metric>", the metric made
// safe by slug). Metrics named as in package summary come in its report
// order, others after them by name. Non-finite samples are left out.
func ABSections(a, b ABArm, tables []Table) []HTMLSection {
	an, bn := armName(a.Name, "A"), armName(b.Name, "B")
	var metrics []string
	for _, arm := range []ABArm{a, b} {
		for m := range arm.Samples {
			if !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	// Metrics the summary knows come in its report order, the rest by name.
	order := []string{summary.MetricTTFP, summary.MetricTTFT, summary.MetricE2E, summary.MetricTextGap,
		summary.MetricRTFLastChunk, summary.MetricRTFE2E, summary.MetricRTFServer, summary.MetricAudioRTF,
		summary.MetricDuration, summary.MetricUnderrun, summary.MetricStalls, summary.MetricStallTime,
		summary.MetricLag, summary.MetricStampDelay}
	rank := func(m string) int {
		if i := slices.Index(order, m); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortFunc(metrics, func(x, y string) int {
		if c := cmp.Compare(rank(x), rank(y)); c != 0 {
			return c
		}
		return strings.Compare(x, y)
	})
	var charts []chart
	for _, m := range metrics {
		unit := a.Units[m]
		if unit == "" {
			unit = b.Units[m]
		}
		xLabel := m
		if unit != "" {
			xLabel += " (" + unit + ")"
		}
		ax, ay, as := cdfPoints(a.Samples[m], maxCDFPoints)
		bx, by, bs := cdfPoints(b.Samples[m], maxCDFPoints)
		c := chart{id: "ab-cdf-" + slug(m), title: m + ": " + an + " vs " + bn, xLabel: xLabel,
			yLabel: "requests at or below (%)", yFrom0: true,
			series: []series{
				{name: fmt.Sprintf("%s (n=%d)", an, len(as)), xs: ax, ys: ay, step: true},
				{name: fmt.Sprintf("%s (n=%d)", bn, len(bs)), xs: bx, ys: by, step: true, dashed: true},
			}}
		var parts []string
		for _, arm := range []struct {
			name   string
			sorted []float64
		}{{an, as}, {bn, bs}} {
			if len(arm.sorted) == 0 {
				parts = append(parts, arm.name+": no samples")
				continue
			}
			parts = append(parts, fmt.Sprintf("%s: median %s, p95 %s%s", arm.name,
				fv(stats.Percentile(arm.sorted, 50)), fv(stats.Percentile(arm.sorted, 95)), unitSuffix(unit)))
		}
		c.caption = strings.Join(parts, "; ") + "."
		charts = append(charts, c)
	}
	out := []HTMLSection{}
	if len(tables) > 0 {
		out = append(out, HTMLSection{Title: "A/B comparison", Tables: tables})
	}
	sec := HTMLSection{Title: "Distributions: " + an + " vs " + bn, charts: charts}
	if len(metrics) == 0 {
		sec.Notes = []string{"Neither arm has samples to chart."}
	}
	return append(out, sec)
}

func armName(name, def string) string {
	if name == "" {
		return def
	}
	return name
}

func unitSuffix(unit string) string {
	if unit == "" {
		return ""
	}
	return " " + unit
}
