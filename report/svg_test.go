package report

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

func TestNiceTicks(t *testing.T) {
	cases := []struct {
		lo, hi float64
		target int
		want   []float64
	}{
		{0, 1234, 6, []float64{0, 200, 400, 600, 800, 1000, 1200}},
		{0, 1, 5, []float64{0, 0.2, 0.4, 0.6, 0.8, 1}},
		{0, 100, 5, []float64{0, 20, 40, 60, 80, 100}},
		{-3, 7, 5, []float64{-2, 0, 2, 4, 6}},
		{0.013, 0.087, 4, []float64{0.02, 0.04, 0.06, 0.08}},
		{250, 4100, 8, []float64{500, 1000, 1500, 2000, 2500, 3000, 3500, 4000}},
		{0, 0.3, 3, []float64{0, 0.1, 0.2, 0.3}},
		{1e6, 5e6, 4, []float64{1e6, 2e6, 3e6, 4e6, 5e6}},
	}
	for _, c := range cases {
		if got := niceTicks(c.lo, c.hi, c.target); !slices.Equal(got, c.want) {
			t.Errorf("niceTicks(%g, %g, %d) = %v, want %v", c.lo, c.hi, c.target, got, c.want)
		}
	}
}

func TestNiceDomain(t *testing.T) {
	cases := []struct {
		lo, hi          float64
		target          int
		dlo, dhi, dstep float64
	}{
		{0, 1234, 6, 0, 1400, 200},
		{12, 97, 8, 10, 100, 10},
		{0, 0, 5, 0, 1, 0.2},          // nothing: a unit range
		{5, 5, 5, 2, 8, 1},            // one value: half its size either side
		{-0.4, 0.9, 5, -0.4, 1, 0.2},  // negative values
		{math.NaN(), 1, 5, 0, 1, 0.2}, // nonsense: a unit range
	}
	for _, c := range cases {
		lo, hi, step := niceDomain(c.lo, c.hi, c.target)
		if math.Abs(lo-c.dlo) > 1e-12 || math.Abs(hi-c.dhi) > 1e-12 || step != c.dstep {
			t.Errorf("niceDomain(%g, %g, %d) = %g, %g, %g; want %g, %g, %g", c.lo, c.hi, c.target, lo, hi, step, c.dlo, c.dhi, c.dstep)
		}
	}
}

func TestTickLabel(t *testing.T) {
	cases := []struct {
		v, step float64
		want    string
	}{
		{1200, 200, "1200"}, {0.6000000000000001, 0.2, "0.6"}, {0.05, 0.05, "0.05"}, {-2, 2, "-2"},
		{0, 0.1, "0"}, {2.5e6, 5e5, "2.5e+06"}, {0.001, 0.001, "0.001"},
	}
	for _, c := range cases {
		if got := tickLabel(c.v, c.step); got != c.want {
			t.Errorf("tickLabel(%g, %g) = %q, want %q", c.v, c.step, got, c.want)
		}
	}
}

func TestCDFPoints(t *testing.T) {
	// Small samples keep every step: values 3, 1, 2 (and a NaN, dropped).
	px, py, sorted := cdfPoints([]float64{3, 1, math.NaN(), 2, math.Inf(1)}, 500)
	if !slices.Equal(px, []float64{1, 1, 2, 3}) || !slices.Equal(sorted, []float64{1, 2, 3}) {
		t.Errorf("cdf x = %v, sorted = %v", px, sorted)
	}
	want := []float64{0, 100.0 / 3, 200.0 / 3, 100}
	for i := range want {
		if math.Abs(py[i]-want[i]) > 1e-12 {
			t.Errorf("cdf y = %v, want %v", py, want)
			break
		}
	}

	// 100k values become 500 ranks (plus the starting corner), keep the
	// extremes and stay monotone; rank 200 of 100k is exactly the 0.2 %.
	xs := make([]float64, 100_000)
	for i := range xs {
		xs[i] = float64(len(xs) - i) // descending: cdfPoints sorts
	}
	px, py, _ = cdfPoints(xs, 500)
	if len(px) != 501 || len(py) != 501 {
		t.Fatalf("downsampled CDF has %d points, want 501", len(px))
	}
	if px[0] != 1 || py[0] != 0 || px[500] != 100_000 || py[500] != 100 {
		t.Errorf("ends: (%g, %g) .. (%g, %g)", px[0], py[0], px[500], py[500])
	}
	if px[1] != 200 || py[1] != 0.2 {
		t.Errorf("first rank point = (%g, %g), want (200, 0.2)", px[1], py[1])
	}
	for i := 1; i < len(px); i++ {
		if px[i] < px[i-1] || py[i] < py[i-1] {
			t.Fatalf("CDF not monotone at %d", i)
		}
	}
	if px, _, _ := cdfPoints(nil, 500); px != nil {
		t.Errorf("empty CDF = %v", px)
	}
}

func TestThin(t *testing.T) {
	xs := make([]float64, 10_001)
	for i := range xs {
		xs[i] = float64(i)
	}
	tx, ty := thin(xs, xs, 1500)
	if len(tx) > 1500 || tx[0] != 0 || tx[len(tx)-1] != 10_000 || ty[len(ty)-1] != 10_000 {
		t.Errorf("thin: %d points, ends %g..%g", len(tx), tx[0], tx[len(tx)-1])
	}
	if sx, _ := thin(xs[:10], xs[:10], 1500); len(sx) != 10 {
		t.Errorf("short series thinned to %d", len(sx))
	}
}

func TestHistogram(t *testing.T) {
	// Width: 0.3 s over about 20 bins is a 0.02 s 1-2-5 width; 0.3 lies on
	// an edge and opens the 16th bin; 0.12 is bin 6 despite 0.12/0.02 =
	// 5.999999999999999 in binary.
	edges, counts := histogram([]float64{0, 0, 0.05, 0.12, 0.3}, 20)
	if len(counts) != 16 || len(edges) != 17 || math.Abs(edges[16]-0.32) > 1e-12 {
		t.Fatalf("histogram: %d bins, edges %v", len(counts), edges)
	}
	want := make([]float64, 16)
	want[0], want[2], want[6], want[15] = 2, 1, 1, 1
	if !slices.Equal(counts, want) {
		t.Errorf("counts = %v, want %v", counts, want)
	}
	if _, counts := histogram([]float64{0, 0}, 20); !slices.Equal(counts, []float64{2}) {
		t.Errorf("all-zero histogram = %v, want one bin of 2", counts)
	}
}

func TestTimeBinsAndRates(t *testing.T) {
	// About 120 bins of a 1-2-5 width, never under a second.
	if w, n := timeBins(59.5); w != 1 || n != 60 {
		t.Errorf("timeBins(59.5) = %g, %d; want 1 s, 60", w, n)
	}
	if w, n := timeBins(315); w != 2 || n != 158 {
		t.Errorf("timeBins(315) = %g, %d; want 2 s, 158", w, n)
	}
	if w, n := timeBins(3600); w != 50 || n != 72 {
		t.Errorf("timeBins(3600) = %g, %d; want 50 s, 72", w, n)
	}
	if w, n := timeBins(0); w != 1 || n != 1 {
		t.Errorf("timeBins(0) = %g, %d", w, n)
	}
	xs, ys := perSecond([]float64{0.1, 0.5, 1.2, 2.9, 3.0}, 1, 3)
	if !slices.Equal(xs, []float64{0, 1, 2, 3}) || !slices.Equal(ys, []float64{2, 1, 2, 2}) {
		t.Errorf("perSecond = %v %v", xs, ys)
	}
	_, ys = perSecond([]float64{1, 3, 5}, 2, 3)
	if !slices.Equal(ys, []float64{0.5, 0.5, 0.5, 0.5}) {
		t.Errorf("perSecond over 2 s bins = %v, want 0.5/s each", ys)
	}
}

func TestInFlight(t *testing.T) {
	// Three requests: [0,2), [1,3), [3,4). The third starts when the second
	// ends, which must not read as three in flight.
	recs := []results.Record{{SentS: 0, E2ES: 2}, {SentS: 1, E2ES: 2}, {SentS: 3, E2ES: 1}}
	s, note := inFlightSeries(measuredOf(summary.SetOf(recs)), 4)
	if note != "" || len(s) != 1 {
		t.Fatalf("series %d, note %q", len(s), note)
	}
	if !slices.Equal(s[0].xs, []float64{0, 0, 1, 2, 3, 3, 4}) || !slices.Equal(s[0].ys, []float64{0, 1, 2, 1, 0, 1, 0}) {
		t.Errorf("in flight = %v / %v", s[0].xs, s[0].ys)
	}
	// A large run reports the peak per interval, never less than the truth.
	var many []results.Record
	for i := range 5000 {
		many = append(many, results.Record{SentS: float64(i) * 0.1, E2ES: 0.35})
	}
	s, note = inFlightSeries(measuredOf(summary.SetOf(many)), 500)
	if !strings.Contains(note, "Peak") || len(s[0].xs) != maxTimeBins+1 {
		t.Fatalf("large in-flight: %d points, note %q", len(s[0].xs), note)
	}
	if top := slices.Max(s[0].ys); top != 4 {
		t.Errorf("peak in flight = %g, want 4 (a 0.35 s request every 0.1 s)", top)
	}
}

func TestChartSVGEmptyAndEscaped(t *testing.T) {
	c := chart{id: `a"b`, title: "<t>", xLabel: "x & y (s)", yLabel: "n"}
	out := c.svg()
	for _, want := range []string{`data-chart="a&#34;b"`, "&lt;t&gt;", "x &amp; y (s)", ">no data<"} {
		if !strings.Contains(out, want) {
			t.Errorf("svg lacks %q:\n%s", want, out)
		}
	}
	h := chart{id: "h", kind: kindHist}
	if !strings.Contains(h.svg(), ">no data<") {
		t.Error("empty histogram lacks the no data note")
	}
	b := chart{id: "b", kind: kindHBars}
	if !strings.Contains(b.svg(), ">no data<") {
		t.Error("empty bar chart lacks the no data note")
	}
}

func TestLongLabelsAreSqueezed(t *testing.T) {
	long := strings.Repeat("very long metric name ", 5)
	c := chart{id: "l", title: "short", xLabel: "x (s)", yLabel: long}
	out := c.svg()
	if strings.Count(out, "textLength=") != 1 || !strings.Contains(out, `lengthAdjust="spacingAndGlyphs"`) {
		t.Errorf("a y label of %d characters should be fitted to the plot height:\n%s", len(long), out)
	}
}

func TestSlug(t *testing.T) {
	if got := slug(`TTFP ms/<x>`); got != "ttfp-ms--x-" {
		t.Errorf("slug = %q", got)
	}
}
