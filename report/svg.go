package report

import (
	"html"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/omnibench/omnibench/report/table"
)

// Chart geometry in SVG user units. The page scales each chart's viewBox to
// the column width (at most 900 px), so these fix proportions and the text
// size relative to the plot, not pixels.
const (
	chartW       = 800.0
	plotLeft     = 78.0  // room for y tick labels and the rotated y-axis label
	plotRight    = 24.0  // room for the last x tick label
	plotH        = 260.0 // height of an x/y plot area
	bottomSpace  = 58.0  // x tick labels and the x-axis label
	legendRowH   = 18.0
	charW        = 7.0 // estimated advance of one 13-unit character, for layout only
	refCharW     = 6.6 // the same for the 12-unit reference-line labels
	refRowH      = 14.0
	barRowH      = 40.0
	barLabelW    = 290.0 // category labels of horizontal bar charts
	maxCDFPoints = 500   // more than a plot's pixel height: finer steps are invisible
	maxLinePts   = 1500  // thinning limit for other line series
)

type chartKind int

const (
	kindXY        chartKind = iota // line and step series on numeric axes
	kindHist                       // bars over numeric bins
	kindHBars                      // horizontal grouped bars, one row per category
	kindWaterfall                  // one bar per part, each starting where the one above ended
)

// series is one line of an x/y chart. Points with a non-finite coordinate
// are gaps: the line lifts the pen there.
type series struct {
	name    string // legend entry; "" for none
	xs, ys  []float64
	step    bool // hold each y until the next x (CDFs, per-bin rates)
	dashed  bool
	dotted  bool // drawn over a line it may coincide with, which shows between the dots
	markers bool // dots at the points (few points, e.g. sweep levels)
}

// hasPoint reports whether s has a point to draw.
func (s series) hasPoint() bool {
	for i := range s.xs {
		if i < len(s.ys) && finite(s.xs[i]) && finite(s.ys[i]) {
			return true
		}
	}
	return false
}

// dash returns the stroke-dasharray of a series ("" for a solid line).
func (s series) dash() string {
	switch {
	case s.dotted:
		return "0.1 6" // round dots with the round line cap
	case s.dashed:
		return "6 4"
	}
	return ""
}

// band is a shaded span of x (a phase of the run), named in the legend.
type band struct {
	from, to float64
	name     string
}

// bandFill is the legend box of a band: the colour of bandShade over
// white. The band itself is translucent so the grid shows through it, and
// light enough that the lines drawn over it keep their contrast.
const (
	bandFill  = "#e6e6e6"
	bandShade = `fill="#000" fill-opacity="0.1"`
)

// refLine is a horizontal (y) or vertical (x) reference line with a label.
type refLine struct {
	value float64
	label string
}

// hbars is the data of a horizontal grouped bar chart: values[row][series].
// Each row is scaled to its own largest value, because rows compare figures
// of different units; the value is printed beside each bar.
type hbars struct {
	rows   []string
	names  []string
	values [][]float64
}

// chart is one inline SVG chart. id becomes the data-chart attribute that
// tests and readers can find it by.
type chart struct {
	id, title      string
	xLabel, yLabel string // with units, e.g. "TTFP (ms)"
	kind           chartKind

	series []series // kindXY

	edges  []float64 // kindHist: bin edges, len(counts)+1
	counts []float64

	bars hbars // kindHBars

	parts []WaterfallPart // kindWaterfall, in order

	hlines, vlines []refLine
	bands          []band    // kindXY: shaded spans of x, behind the series
	xSpan          []float64 // kindXY: x values the axis includes (charts that share one axis)
	yFrom0         bool      // the y axis starts at 0 whatever the data
	caption        string    // shown under the chart by the page
	emptyText      string    // shown in the plot when there is no data; default "no data"
}

// color returns the i-th colour of the Okabe-Ito palette, which stays
// distinguishable for the common colour-vision deficiencies.
func color(i int) string {
	p := [...]string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#555555"}
	return p[i%len(p)]
}

// esc escapes a data-derived string for SVG text and attribute values. The
// result is also valid XML (numeric references for quotes).
func esc(s string) string { return html.EscapeString(s) }

// niceStep returns the 1-2-5 step (1, 2, 5 times a power of ten) that cuts
// span into the number of intervals closest to target.
func niceStep(span float64, target int) float64 {
	if !(span > 0) || math.IsInf(span, 0) || target < 1 {
		return 1
	}
	raw := span / float64(target)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	best, bestErr := mag, math.Inf(1)
	for _, m := range [...]float64{1, 2, 5, 10} {
		step := m * mag
		if e := math.Abs(span/step - float64(target)); e < bestErr {
			best, bestErr = step, e
		}
	}
	return best
}

// ticksOf returns the multiples of step inside [lo, hi], cleaned of the
// binary residue of k*step (3*0.1 is 0.30000000000000004).
func ticksOf(lo, hi, step float64) []float64 {
	var out []float64
	eps := step * 1e-9
	for k := math.Ceil(lo/step - 1e-9); k*step <= hi+eps; k++ {
		v, _ := strconv.ParseFloat(strconv.FormatFloat(k*step, 'g', 12, 64), 64)
		if v == 0 {
			v = 0 // no "-0"
		}
		out = append(out, v)
		if len(out) > 100 { // cannot happen with a nice step; guards a bad caller
			break
		}
	}
	return out
}

// niceTicks returns the 1-2-5 ticks inside [lo, hi], about target of them.
func niceTicks(lo, hi float64, target int) []float64 {
	return ticksOf(lo, hi, niceStep(hi-lo, target))
}

// niceDomain widens [lo, hi] to multiples of a 1-2-5 step so the axis ends
// on a tick; an empty or single-valued range gets a sensible width.
func niceDomain(lo, hi float64, target int) (dlo, dhi, step float64) {
	switch {
	case lo > hi || math.IsNaN(lo) || math.IsNaN(hi):
		lo, hi = 0, 1
	case lo == hi && lo == 0:
		hi = 1
	case lo == hi:
		d := math.Abs(lo) / 2
		lo, hi = lo-d, hi+d
	}
	step = niceStep(hi-lo, target)
	dlo, dhi = math.Floor(lo/step+1e-9)*step, math.Ceil(hi/step-1e-9)*step
	if dhi <= dlo {
		dhi = dlo + step
	}
	return dlo, dhi, step
}

// tickLabel formats a tick with as many decimals as its step needs.
func tickLabel(v, step float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1e6 {
		return strconv.FormatFloat(v, 'g', 4, 64)
	}
	dec := 0
	if step < 1 {
		dec = int(-math.Floor(math.Log10(step) + 1e-9))
	}
	return strconv.FormatFloat(v, 'f', dec, 64)
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// cdfPoints returns the empirical CDF of the finite values of xs as step
// points (value, percent of values at or below it), starting with (min, 0).
// Above maxPts values it keeps maxPts evenly spaced ranks (always the
// largest), so 100k samples draw like 500. sorted is the finite values in
// order, for percentiles.
func cdfPoints(xs []float64, maxPts int) (px, py, sorted []float64) {
	for _, x := range xs {
		if finite(x) {
			sorted = append(sorted, x)
		}
	}
	slices.Sort(sorted)
	n := len(sorted)
	if n == 0 {
		return nil, nil, nil
	}
	px, py = append(px, sorted[0]), append(py, 0)
	if n <= maxPts {
		for i, x := range sorted {
			px, py = append(px, x), append(py, 100*float64(i+1)/float64(n))
		}
		return px, py, sorted
	}
	for k := 1; k <= maxPts; k++ {
		r := (k*n + maxPts - 1) / maxPts // ceil(k*n/maxPts): rank 1..n
		px, py = append(px, sorted[r-1]), append(py, 100*float64(r)/float64(n))
	}
	return px, py, sorted
}

// thin keeps every k-th point of a long series (and the last), enough for
// a chart a few hundred units wide.
func thin(xs, ys []float64, maxPts int) ([]float64, []float64) {
	n := len(xs)
	if n <= maxPts || maxPts < 2 {
		return xs, ys
	}
	k := (n + maxPts - 2) / (maxPts - 1)
	var ox, oy []float64
	for i := 0; i < n; i += k {
		ox, oy = append(ox, xs[i]), append(oy, ys[i])
	}
	if ox[len(ox)-1] != xs[n-1] || oy[len(oy)-1] != ys[n-1] {
		ox, oy = append(ox, xs[n-1]), append(oy, ys[n-1])
	}
	return ox, oy
}

// frame maps data coordinates to the plot area.
type frame struct {
	left, top, w, h float64
	x0, x1, y0, y1  float64
}

func (f frame) sx(x float64) float64 { return f.left + (x-f.x0)/(f.x1-f.x0)*f.w }
func (f frame) sy(y float64) float64 { return f.top + f.h - (y-f.y0)/(f.y1-f.y0)*f.h }

// svgWriter accumulates SVG markup with compact number formatting.
type svgWriter struct{ strings.Builder }

func (b *svgWriter) num(v float64) {
	b.WriteString(strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64))
}

// text writes a <text> element; s is escaped here.
func (b *svgWriter) text(x, y float64, anchor, class, s string) {
	b.fitText(x, y, anchor, class, s, 0, 0)
}

// fitText writes a <text> element that is squeezed to maxW when its
// estimated width (perChar per character) is larger, so a long
// data-derived label stays inside the chart instead of being cut off.
func (b *svgWriter) fitText(x, y float64, anchor, class, s string, perChar, maxW float64) {
	b.WriteString(`<text x="`)
	b.num(x)
	b.WriteString(`" y="`)
	b.num(y)
	b.WriteString(`"`)
	if maxW > 0 && perChar*float64(len([]rune(s))) > maxW {
		b.WriteString(` textLength="`)
		b.num(maxW)
		b.WriteString(`" lengthAdjust="spacingAndGlyphs"`)
	}
	if anchor != "" {
		b.WriteString(` text-anchor="` + anchor + `"`)
	}
	if class != "" {
		b.WriteString(` class="` + class + `"`)
	}
	b.WriteString(`>` + esc(s) + `</text>`)
}

func (b *svgWriter) line(x1, y1, x2, y2 float64, attrs string) {
	b.WriteString(`<line x1="`)
	b.num(x1)
	b.WriteString(`" y1="`)
	b.num(y1)
	b.WriteString(`" x2="`)
	b.num(x2)
	b.WriteString(`" y2="`)
	b.num(y2)
	b.WriteString(`" ` + attrs + `/>`)
}

func (b *svgWriter) rect(x, y, w, h float64, attrs string) {
	b.WriteString(`<rect x="`)
	b.num(x)
	b.WriteString(`" y="`)
	b.num(y)
	b.WriteString(`" width="`)
	b.num(math.Max(w, 0))
	b.WriteString(`" height="`)
	b.num(math.Max(h, 0))
	b.WriteString(`" ` + attrs + `/>`)
}

// legendItem is one entry of a chart legend.
type legendItem struct {
	name   string
	color  string
	dash   string // stroke-dasharray of the line sample; "" solid
	dotted bool   // round dots, as the series draws them
	box    bool   // a filled square (bars) instead of a line sample
	absent bool   // the series has no point to draw
}

// layoutLegend places items in rows across the chart width and returns the
// x of each item, its row and the number of rows.
func layoutLegend(items []legendItem) (xs []float64, rows []int, n int) {
	if len(items) == 0 {
		return nil, nil, 0
	}
	x, row := plotLeft, 0
	for _, it := range items {
		w := 26 + charW*float64(len([]rune(it.name))) + 18
		if x > plotLeft && x+w > chartW-plotRight {
			x, row = plotLeft, row+1
		}
		xs, rows = append(xs, x), append(rows, row)
		x += w
	}
	return xs, rows, row + 1
}

func (b *svgWriter) legend(items []legendItem, top float64) {
	xs, rows, _ := layoutLegend(items)
	for i, it := range items {
		y := top + float64(rows[i])*legendRowH
		if it.box {
			b.rect(xs[i], y-10, 18, 10, `fill="`+it.color+`"`)
		} else {
			attrs := `stroke="` + it.color + `" stroke-width="3"`
			if it.dotted {
				attrs = `stroke="` + it.color + `" stroke-width="4" stroke-linecap="round"`
			}
			if it.dash != "" {
				attrs += ` stroke-dasharray="` + it.dash + `"`
			}
			b.line(xs[i], y-5, xs[i]+20, y-5, attrs)
		}
		class := "lg" // a line's legend entry: the chart draws a path of this name
		if it.box || it.absent {
			class = ""
		}
		b.text(xs[i]+26, y, "", class, it.name)
	}
}

// open writes the <svg> element with the chart's title; height is the
// viewBox height.
func (c *chart) open(b *svgWriter, height float64) {
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 `)
	b.num(chartW)
	b.WriteString(` `)
	b.num(height)
	b.WriteString(`" font-family="sans-serif" font-size="13" data-chart="` + esc(c.id) + `" role="img" aria-label="` + esc(c.title) + `">`)
	b.WriteString(`<title>` + esc(c.title) + `</title>`)
	b.fitText(chartW/2, 22, "middle", "ct", c.title, 8.5, chartW-20)
}

// axes draws the grid, the ticks and the axis labels of an x/y frame.
func (b *svgWriter) axes(f frame, xTicks []float64, xStep float64, yTicks []float64, yStep float64, xLabel, yLabel string) {
	for _, t := range yTicks {
		y := f.sy(t)
		b.line(f.left, y, f.left+f.w, y, `class="grid"`)
		b.text(f.left-6, y+4, "end", "tick", tickLabel(t, yStep))
	}
	for _, t := range xTicks {
		x := f.sx(t)
		b.line(x, f.top, x, f.top+f.h, `class="grid"`)
		b.line(x, f.top+f.h, x, f.top+f.h+5, `class="axis"`)
		b.text(x, f.top+f.h+19, "middle", "tick", tickLabel(t, xStep))
	}
	b.rect(f.left, f.top, f.w, f.h, `class="frame"`)
	b.fitText(f.left+f.w/2, f.top+f.h+44, "middle", "al", xLabel, charW, f.w)
	b.WriteString(`<g transform="translate(18 `)
	b.num(f.top + f.h/2)
	b.WriteString(`) rotate(-90)">`)
	b.fitText(0, 0, "middle", "al", yLabel, charW, f.h+20)
	b.WriteString(`</g>`)
}

func (c *chart) empty() string {
	if c.emptyText != "" {
		return c.emptyText
	}
	return "no data"
}

// svg renders the chart.
func (c *chart) svg() string {
	switch c.kind {
	case kindHist:
		return c.histSVG()
	case kindHBars:
		return c.hbarsSVG()
	case kindWaterfall:
		return c.waterfallSVG()
	}
	return c.xySVG()
}

// xyBounds returns the finite data range of the series and reference lines.
func (c *chart) xyBounds() (xlo, xhi, ylo, yhi float64, hasData bool) {
	xlo, ylo = math.Inf(1), math.Inf(1)
	xhi, yhi = math.Inf(-1), math.Inf(-1)
	for _, s := range c.series {
		for i := range s.xs {
			if i >= len(s.ys) || !finite(s.xs[i]) || !finite(s.ys[i]) {
				continue
			}
			hasData = true
			xlo, xhi = math.Min(xlo, s.xs[i]), math.Max(xhi, s.xs[i])
			ylo, yhi = math.Min(ylo, s.ys[i]), math.Max(yhi, s.ys[i])
		}
	}
	if !hasData {
		return 0, 1, 0, 1, false
	}
	// Reference lines count only with data: an SLO alone is no chart.
	for _, l := range c.hlines {
		if finite(l.value) {
			ylo, yhi = math.Min(ylo, l.value), math.Max(yhi, l.value)
		}
	}
	for _, l := range c.vlines {
		if finite(l.value) {
			xlo, xhi = math.Min(xlo, l.value), math.Max(xhi, l.value)
		}
	}
	for _, x := range c.xSpan {
		if finite(x) {
			xlo, xhi = math.Min(xlo, x), math.Max(xhi, x)
		}
	}
	return xlo, xhi, ylo, yhi, true
}

func (c *chart) xySVG() string {
	// Unnamed series (the one line of a chart its title names) get no
	// legend entry.
	var items []legendItem
	for i, s := range c.series {
		if s.name == "" {
			continue
		}
		it := legendItem{name: s.name, color: color(i), dash: s.dash(), dotted: s.dotted}
		if !s.hasPoint() {
			it.name += " (no data)" // promised by the legend, so say why it is not drawn
			it.absent = true
		}
		items = append(items, it)
	}
	xlo, xhi, ylo, yhi, hasData := c.xyBounds()
	for _, bd := range c.bands {
		if hasData { // an empty plot draws no band to name
			items = append(items, legendItem{name: bd.name, color: bandFill, box: true})
		}
	}
	_, _, rows := layoutLegend(items)
	top := 40 + float64(rows)*legendRowH
	if c.yFrom0 {
		ylo = math.Min(ylo, 0)
	}
	x0, x1, xStep := niceDomain(xlo, xhi, 8)
	y0, y1, yStep := niceDomain(ylo, yhi, 5)
	f := frame{left: plotLeft, top: top, w: chartW - plotLeft - plotRight, h: plotH, x0: x0, x1: x1, y0: y0, y1: y1}

	var b svgWriter
	c.open(&b, top+plotH+bottomSpace)
	b.legend(items, 40+12)
	b.axes(f, ticksOf(x0, x1, xStep), xStep, ticksOf(y0, y1, yStep), yStep, c.xLabel, c.yLabel)
	if !hasData {
		b.text(f.left+f.w/2, f.top+f.h/2, "middle", "nodata", c.empty())
		b.WriteString(`</svg>`)
		return b.String()
	}
	b.bands(f, c.bands)
	for i, l := range c.hlines {
		if !finite(l.value) {
			continue
		}
		y := f.sy(l.value)
		b.line(f.left, y, f.left+f.w, y, `class="ref"`)
		// Alternate ends so two nearby lines keep readable labels.
		if i%2 == 0 {
			b.text(f.left+f.w-4, y-4, "end", "reflabel", l.label)
		} else {
			b.text(f.left+4, y-4, "start", "reflabel", l.label)
		}
	}
	b.vlines(f, c.vlines)
	for i, s := range c.series {
		c.path(&b, f, s, color(i))
	}
	b.vlineLabels(f, c.vlines, c.series)
	b.WriteString(`</svg>`)
	return b.String()
}

// bands shades each band's span of x, clipped to the plot, over the full
// height of the plot.
func (b *svgWriter) bands(f frame, bands []band) {
	for _, bd := range bands {
		if !finite(bd.from) || !finite(bd.to) {
			continue
		}
		lo, hi := math.Max(math.Min(bd.from, bd.to), f.x0), math.Min(math.Max(bd.from, bd.to), f.x1)
		if hi <= lo {
			continue
		}
		b.rect(f.sx(lo), f.top, f.sx(hi)-f.sx(lo), f.h, `class="band" `+bandShade)
	}
}

// path draws one series; non-finite points break the line.
func (c *chart) path(b *svgWriter, f frame, s series, col string) {
	var d svgWriter
	pen := false
	for i := range s.xs {
		if i >= len(s.ys) || !finite(s.xs[i]) || !finite(s.ys[i]) {
			pen = false
			continue
		}
		x, y := f.sx(s.xs[i]), f.sy(s.ys[i])
		switch {
		case !pen:
			d.WriteString("M")
			d.num(x)
			d.WriteString(" ")
			d.num(y)
			pen = true
		case s.step:
			d.WriteString("H")
			d.num(x)
			d.WriteString("V")
			d.num(y)
		default:
			d.WriteString("L")
			d.num(x)
			d.WriteString(" ")
			d.num(y)
		}
	}
	if d.Len() > 0 {
		attrs := `fill="none" stroke="` + col + `" stroke-width="2" stroke-linejoin="round"`
		if s.dotted {
			attrs = `fill="none" stroke="` + col + `" stroke-width="4" stroke-linecap="round" stroke-linejoin="round"`
		}
		if d := s.dash(); d != "" {
			attrs += ` stroke-dasharray="` + d + `"`
		}
		if s.name != "" {
			attrs += ` data-series="` + esc(s.name) + `"`
		}
		b.WriteString(`<path d="` + d.String() + `" ` + attrs + `/>`)
	}
	if !s.markers {
		return
	}
	for i := range s.xs {
		if i < len(s.ys) && finite(s.xs[i]) && finite(s.ys[i]) {
			b.WriteString(`<circle cx="`)
			b.num(f.sx(s.xs[i]))
			b.WriteString(`" cy="`)
			b.num(f.sy(s.ys[i]))
			b.WriteString(`" r="3.5" fill="` + col + `"/>`)
		}
	}
}

func (c *chart) histSVG() string {
	top := 40.0
	hasData := len(c.counts) > 0 && len(c.edges) == len(c.counts)+1
	xlo, xhi, yhi := 0.0, 1.0, 1.0
	if hasData {
		xlo, xhi, yhi = c.edges[0], c.edges[len(c.edges)-1], 0
		for _, n := range c.counts {
			yhi = math.Max(yhi, n)
		}
	}
	for _, l := range c.vlines {
		if hasData && finite(l.value) {
			xlo, xhi = math.Min(xlo, l.value), math.Max(xhi, l.value)
		}
	}
	x0, x1, xStep := niceDomain(xlo, xhi, 8)
	y0, y1, yStep := niceDomain(0, yhi, 5)
	if yStep < 1 { // counts are whole numbers
		yStep = 1
		y1 = math.Max(math.Ceil(y1), 1)
	}
	f := frame{left: plotLeft, top: top, w: chartW - plotLeft - plotRight, h: plotH, x0: x0, x1: x1, y0: y0, y1: y1}
	var b svgWriter
	c.open(&b, top+plotH+bottomSpace)
	b.axes(f, ticksOf(x0, x1, xStep), xStep, ticksOf(y0, y1, yStep), yStep, c.xLabel, c.yLabel)
	if !hasData {
		b.text(f.left+f.w/2, f.top+f.h/2, "middle", "nodata", c.empty())
		b.WriteString(`</svg>`)
		return b.String()
	}
	for i, n := range c.counts {
		if n <= 0 {
			continue
		}
		xa, xb := f.sx(c.edges[i]), f.sx(c.edges[i+1])
		w := xb - xa
		if w > 3 {
			xa, w = xa+0.5, w-1 // a hairline gap separates neighbouring bars
		}
		b.rect(xa, f.sy(n), w, f.sy(0)-f.sy(n), `fill="`+color(0)+`"`)
	}
	b.vlines(f, c.vlines)
	b.vlineLabels(f, c.vlines, nil)
	b.WriteString(`</svg>`)
	return b.String()
}

// vlines draws vertical reference lines; vlineLabels their labels. Each
// label has its own row at the top of the plot and sits beside its line
// (right of it, or left when the right has no room), never across it and
// never outside the plot, on a white box drawn over the other lines.
func (b *svgWriter) vlines(f frame, lines []refLine) {
	for _, l := range lines {
		if finite(l.value) {
			x := f.sx(l.value)
			b.line(x, f.top, x, f.top+f.h, `class="ref"`)
		}
	}
}

// vlineLabels draws the labels of vlines, after everything else of the
// plot so no line crosses them: in rows at the top of the plot, or at its
// bottom when fewer points of the series lie there (a CDF's top right is
// where its curve ends).
func (b *svgWriter) vlineLabels(f frame, lines []refLine, ss []series) {
	// The horizontal span the labels take, and the rows they need.
	n, xlo, xhi := 0, math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		if finite(l.value) {
			n++
			lx, anchor := refLabelX(f, f.sx(l.value), l.label)
			w := refCharW * float64(len([]rune(l.label)))
			if anchor == "end" {
				lx -= w
			}
			xlo, xhi = math.Min(xlo, lx), math.Max(xhi, lx+w)
		}
	}
	band := float64(n)*refRowH + 4
	top, bottom := 0, 0
	for _, s := range ss {
		for i := range s.xs {
			if i >= len(s.ys) || !finite(s.xs[i]) || !finite(s.ys[i]) {
				continue
			}
			if x := f.sx(s.xs[i]); x < xlo || x > xhi {
				continue
			}
			switch y := f.sy(s.ys[i]); {
			case y <= f.top+band:
				top++
			case y >= f.top+f.h-band:
				bottom++
			}
		}
	}
	first := f.top + refRowH
	if bottom < top {
		first = f.top + f.h - band + refRowH
	}
	row := 0
	for _, l := range lines {
		if !finite(l.value) {
			continue
		}
		x := f.sx(l.value)
		lx, anchor := refLabelX(f, x, l.label)
		y := first + float64(row)*refRowH
		// A backing box keeps the label readable where other lines cross it.
		w := refCharW * float64(len([]rune(l.label)))
		bx := lx
		if anchor == "end" {
			bx = lx - w
		}
		b.rect(bx-2, y-11, w+4, refRowH, `class="refbg"`)
		b.text(lx, y, anchor, "reflabel", l.label)
		row++
	}
}

// refLabelX places the label of a vertical line at x inside the plot of f.
func refLabelX(f frame, x float64, label string) (lx float64, anchor string) {
	const gap, pad = 4.0, 2.0
	w := refCharW * float64(len([]rune(label)))
	right, left := f.left+f.w-pad, f.left+pad
	switch {
	case x+gap+w <= right:
		return x + gap, "start"
	case x-gap-w >= left:
		return x - gap, "end"
	}
	return math.Max(left, right-w), "start" // wider than either side: as far right as fits
}

// hbarsSVG draws one row per category with one bar per series, each row
// scaled to its largest absolute value (100 %).
func (c *chart) hbarsSVG() string {
	items := make([]legendItem, len(c.bars.names))
	for i, n := range c.bars.names {
		items[i] = legendItem{name: n, color: color(i), box: true}
	}
	_, _, rows := layoutLegend(items)
	top := 40 + float64(rows)*legendRowH
	nrows := len(c.bars.rows)
	h := math.Max(float64(nrows)*barRowH, barRowH)
	left := barLabelW
	f := frame{left: left, top: top, w: chartW - left - 90, h: h, x0: 0, x1: 100, y0: 0, y1: 1}
	var b svgWriter
	c.open(&b, top+h+bottomSpace)
	b.legend(items, 40+12)
	ticks := ticksOf(0, 100, 20)
	for _, t := range ticks {
		x := f.sx(t)
		b.line(x, f.top, x, f.top+f.h, `class="grid"`)
		b.text(x, f.top+f.h+19, "middle", "tick", tickLabel(t, 20))
	}
	b.rect(f.left, f.top, f.w, f.h, `class="frame"`)
	b.text(f.left+f.w/2, f.top+f.h+44, "middle", "al", c.xLabel)
	b.text(14, f.top+f.h+44, "start", "al", c.yLabel)
	if nrows == 0 {
		b.text(f.left+f.w/2, f.top+f.h/2, "middle", "nodata", c.empty())
		b.WriteString(`</svg>`)
		return b.String()
	}
	nser := len(c.bars.names)
	barH := (barRowH - 12) / float64(max(nser, 1))
	for r, label := range c.bars.rows {
		y := f.top + float64(r)*barRowH + 6
		b.barLabel(left-8, y+(barRowH-12)/2, label)
		vals := c.bars.values[r]
		rowMax := 0.0
		for _, v := range vals {
			if finite(v) {
				rowMax = math.Max(rowMax, math.Abs(v))
			}
		}
		for s, v := range vals {
			if !finite(v) {
				continue
			}
			share := 0.0
			if rowMax > 0 {
				share = 100 * math.Abs(v) / rowMax
			}
			by := y + float64(s)*barH
			b.rect(f.left, by, f.sx(share)-f.left, barH-2, `fill="`+color(s)+`"`)
			b.text(f.sx(share)+4, by+barH-5, "start", "tick", fv(v))
		}
	}
	b.WriteString(`</svg>`)
	return b.String()
}

// barLabel writes a bar chart's category label right-aligned at x, centred
// on y: on one line when it fits the label column, else wrapped at a space
// onto two, the second squeezed if it is still too long. Nothing is cut off.
func (b *svgWriter) barLabel(x, y float64, label string) {
	maxW := barLabelW - 20
	lines := table.WrapWords(label, int(maxW/charW))
	if len(lines) > 2 {
		lines = []string{lines[0], strings.Join(lines[1:], " ")}
	}
	if len(lines) == 1 {
		b.fitText(x, y+4, "end", "", lines[0], charW, maxW)
		return
	}
	b.fitText(x, y-3, "end", "", lines[0], charW, maxW)
	b.fitText(x, y+12, "end", "", lines[1], charW, maxW)
}

// waterfallSVG draws the parts of a whole as a waterfall: one row per
// part, its bar starting where the previous part's ended, so that the last
// bar ends at the whole and the longest bar is where the time went. A part
// that is not a finite, non-negative time is left out of the bars and
// named as such beside its label.
func (c *chart) waterfallSVG() string {
	total := 0.0
	for _, p := range c.parts {
		if finite(p.Seconds) && p.Seconds > 0 {
			total += p.Seconds
		}
	}
	top := 40.0
	nrows := len(c.parts)
	h := math.Max(float64(nrows)*barRowH, barRowH)
	_, x1, step := niceDomain(0, math.Max(total*1000, 1e-3), 5)
	f := frame{left: barLabelW, top: top, w: chartW - barLabelW - 90, h: h, x0: 0, x1: x1, y0: 0, y1: 1}
	var b svgWriter
	c.open(&b, top+h+bottomSpace)
	for _, t := range ticksOf(0, x1, step) {
		x := f.sx(t)
		b.line(x, f.top, x, f.top+f.h, `class="grid"`)
		b.text(x, f.top+f.h+19, "middle", "tick", tickLabel(t, step))
	}
	b.rect(f.left, f.top, f.w, f.h, `class="frame"`)
	b.text(f.left+f.w/2, f.top+f.h+44, "middle", "al", c.xLabel)
	if nrows == 0 {
		b.text(f.left+f.w/2, f.top+f.h/2, "middle", "nodata", c.empty())
		b.WriteString(`</svg>`)
		return b.String()
	}
	at := 0.0
	for r, p := range c.parts {
		y := f.top + float64(r)*barRowH + 6
		b.barLabel(f.left-8, y+(barRowH-12)/2, p.Label)
		if !finite(p.Seconds) || p.Seconds < 0 {
			b.text(f.left+4, y+(barRowH-12)/2+4, "start", "tick", "not known")
			continue
		}
		ms := p.Seconds * 1000
		x0, x1 := f.sx(at), f.sx(at+ms)
		b.rect(x0, y, math.Max(x1-x0, 1), barRowH-12, `fill="`+color(r)+`"`)
		b.text(x1+4, y+barRowH-17, "start", "tick", fv(ms)+" ms")
		at += ms
	}
	b.WriteString(`</svg>`)
	return b.String()
}
