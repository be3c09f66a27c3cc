package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// sampleRecords builds a realistic closed-loop speech run by hand: eight
// streams, TTFP around 250 ms, 0.2 s chunks mostly faster than real time
// with an occasional late chunk, a few failures of several classes, and
// continuity results from the continuity package as the client stores them.
func sampleRecords(n int, seed uint64) []results.Record {
	rng := rand.New(rand.NewPCG(seed, 7))
	const (
		rate     = 24000
		chunkB   = 9600 // 0.2 s of 24 kHz mono s16
		streams  = 8
		warmup   = 8
		chunkDur = 0.2
	)
	free := make([]float64, streams) // when each stream can send next
	recs := make([]results.Record, 0, n)
	for i := range n {
		w := slices.Index(free, slices.Min(free))
		sent := free[w]
		r := results.Record{
			Type: "request", ID: fmt.Sprintf("req-%05d", i), Seq: i, Warmup: i < warmup,
			Kind: results.KindSpeech, Endpoint: "/v1/audio/speech", Model: "Qwen3-Omni-30B-A3B",
			IntendedS: sent, SentS: sent, Status: 200,
		}
		switch u := rng.Float64(); {
		case u < 0.01:
			r.ErrorClass, r.Status, r.E2ES = results.ErrHTTPStatus, 503, 0.004+0.002*rng.Float64()
		case u < 0.015:
			r.ErrorClass, r.E2ES = results.ErrIdleTimeout, 10
		case u < 0.02:
			r.ErrorClass, r.E2ES = results.ErrTruncated, 1+rng.Float64()
		}
		if r.ErrorClass != "" {
			r.Error = "sample " + r.ErrorClass
			free[w] = sent + r.E2ES + 0.001
			recs = append(recs, r)
			continue
		}
		r.FirstByteS = 0.05 + 0.02*rng.Float64()
		t := 0.25 * math.Exp(0.35*rng.NormFloat64())
		load := 1.0 + sent/400 // the server slows a little as the run goes on
		chunks := 10 + rng.IntN(30)
		for range chunks {
			r.ChunkArrivalsS = append(r.ChunkArrivalsS, t)
			r.ChunkBytes = append(r.ChunkBytes, chunkB)
			t += chunkDur * load * (0.35 + 0.45*rng.Float64())
			if rng.Float64() < 0.015 {
				t += 0.2 + 0.8*rng.Float64() // a late chunk
			}
		}
		r.TTFPS = r.ChunkArrivalsS[0]
		r.LastAudioS = r.ChunkArrivalsS[len(r.ChunkArrivalsS)-1]
		r.E2ES = r.LastAudioS + 0.01
		r.SampleRate, r.SampleWidth, r.Channels = rate, 2, 1
		r.AudioBytes = int64(chunks * chunkB)
		r.AudioFrames = r.AudioBytes / 2
		r.AudioDurationS = float64(chunks) * chunkDur
		r.RTFLastChunk = r.LastAudioS / r.AudioDurationS
		r.RTFE2E = r.E2ES / r.AudioDurationS
		r.FinishReason = "stop"
		in := inputOf(&r)
		res := continuity.Simulate(in, continuity.Default)
		sr := continuity.StallResume(in)
		pr := continuity.Preroll(in, continuity.PrerollConfig{BufferS: 0.5, MaxWaitS: 1})
		r.Continuity = &results.Continuity{
			Mode: "default", MaxUnderrunS: res.MaxUnderrunS, UnderrunEvents: res.UnderrunEvents,
			OK:          map[string]bool{"100": res.Continuous(0.1)},
			StallResume: &results.PlayerResult{StartupDelayS: sr.StartupDelayS, Stalls: sr.Stalls, TotalStallS: sr.TotalStallS, LongestStallS: sr.LongestStallS},
			Preroll:     &results.PlayerResult{StartupDelayS: pr.StartupDelayS, Stalls: pr.Stalls, TotalStallS: pr.TotalStallS, LongestStallS: pr.LongestStallS},
		}
		free[w] = sent + r.E2ES + 0.001
		recs = append(recs, r)
	}
	return recs
}

func ptr(v float64) *float64 { return &v }

func sampleHeader(scenario string) *results.Header {
	return &results.Header{Type: "header", SchemaVersion: results.SchemaVersion, Version: "v0.1.0-test",
		StartedAt: "2025-06-01T12:00:00Z", Target: "http://127.0.0.1:8000", Scenario: scenario,
		Seed: 42, Mode: "closed", Concurrency: 8, Flags: map[string]string{"requests": "400"}}
}

func sampleRunReport(recs []results.Record, h *results.Header) RunReport {
	s := summary.Compute(recs, summary.Options{Thresholds: []float64{0.1, 0.25}})
	s.Mode = h.Mode
	return RunReport{Header: *h, Summary: s, ServerVsClient: []Comparison{
		{Figure: "requests succeeded", Server: ptr(392), Client: ptr(392), Diff: ptr(0), Unit: "requests"},
		{Figure: "audio TTFP mean", Server: ptr(231.5), Client: ptr(262.1), Diff: ptr(-30.6), Unit: "ms", Tolerance: "±50 ms", Note: "client adds network time"},
		{Figure: "audio continuity ok rate", Server: ptr(0.97), Client: ptr(0.96), Diff: ptr(0.01), Unit: "fraction"},
		{Figure: "stage transfer bytes", Client: nil, Server: ptr(123456), Note: "server only"},
	}}
}

func sampleSweep() ([]SweepLevel, []SLOLine) {
	var levels []SweepLevel
	for _, c := range []float64{1, 2, 4, 8, 16, 32} {
		levels = append(levels, SweepLevel{X: c, XLabel: "concurrency (streams)", Figures: map[string]float64{
			"audio_ttfp_p50":     180 + 9*c,
			"audio_ttfp_p95":     260 + 30*c,
			"e2e_p95":            3100 + 160*c,
			"e2e_p99":            3400 + 200*c,
			"continuity_ok_rate": math.Min(1, 1.02-0.006*c),
			"rtf_last_chunk_p50": 0.35 + 0.03*c,
			"request_throughput": c / (3 + 0.16*c),
			"audio_throughput":   6 * c / (3 + 0.16*c),
			"error_rate":         math.Max(0, (c-8)/400),
		}, SLO: "pass"})
	}
	return levels, []SLOLine{
		{Figure: "audio_ttfp_p95", Value: 1000, Label: "SLO TTFP p95 ≤ 1000 ms"},
		{Figure: "continuity_ok_rate", Value: 0.95},
		{Figure: "e2e_p99", Value: 8000},
	}
}

func sampleAB(nameA, nameB string) (ABArm, ABArm, []Table) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := ABArm{Name: nameA, Samples: map[string][]float64{}, Units: map[string]string{"ttfp_ms": "ms", "e2e_ms": "ms", "audio_underrun_s": "s"}}
	b := ABArm{Name: nameB, Samples: map[string][]float64{}, Units: a.Units}
	for range 300 {
		a.Samples["ttfp_ms"] = append(a.Samples["ttfp_ms"], 250*math.Exp(0.3*rng.NormFloat64()))
		b.Samples["ttfp_ms"] = append(b.Samples["ttfp_ms"], 210*math.Exp(0.3*rng.NormFloat64()))
		a.Samples["e2e_ms"] = append(a.Samples["e2e_ms"], 4000+800*rng.NormFloat64())
		b.Samples["e2e_ms"] = append(b.Samples["e2e_ms"], 3900+700*rng.NormFloat64())
		a.Samples["audio_underrun_s"] = append(a.Samples["audio_underrun_s"], math.Max(0, 0.1*rng.NormFloat64()))
	}
	tables := []Table{{Title: "A/B: " + nameA + " vs " + nameB, Header: []string{"metric", "A median", "B median", "diff", "p (Mann-Whitney)"},
		Rows: [][]string{{"ttfp_ms", "250.1", "210.4", "-39.7", "1.2e-09"}, {"e2e_ms", "4003", "3902", "-101", "0.08"}}}}
	return a, b, tables
}

// node is a parsed element of the page.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     strings.Builder
}

func (n *node) all(pred func(*node) bool) []*node {
	var out []*node
	var walk func(*node)
	walk = func(m *node) {
		if pred(m) {
			out = append(out, m)
		}
		for _, c := range m.children {
			walk(c)
		}
	}
	walk(n)
	return out
}

// textOf is the text content of n and its descendants.
func (n *node) textOf() string {
	s := n.text.String()
	for _, c := range n.children {
		s += c.textOf()
	}
	return s
}

// parsePage checks the page is well-formed XHTML (after the HTML5 doctype
// line) and returns its element tree.
func parsePage(t *testing.T, page string) *node {
	t.Helper()
	const doctype = "<!DOCTYPE html>\n"
	if !strings.HasPrefix(page, doctype) {
		t.Fatalf("page does not start with %q: %.60q", doctype, page)
	}
	dec := xml.NewDecoder(strings.NewReader(strings.TrimPrefix(page, doctype)))
	dec.Strict = true
	root := &node{name: "#document"}
	stack := []*node{root}
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			line, col := dec.InputPos()
			t.Fatalf("page is not well-formed at line %d col %d: %v", line+1, col, err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			top := stack[len(stack)-1]
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			stack[len(stack)-1].text.Write(tok)
		}
	}
	if len(stack) != 1 || len(root.children) != 1 || root.children[0].name != "html" {
		t.Fatalf("page root: want one <html> element, got %d children", len(root.children))
	}
	return root
}

// checkSelfContained fails when the page could load anything or run code.
func checkSelfContained(t *testing.T, page string, root *node) {
	t.Helper()
	lower := strings.ToLower(page)
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", "@import", "url("} {
		if strings.Contains(lower, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
	for _, n := range root.all(func(*node) bool { return true }) {
		for k, v := range n.attrs {
			switch {
			case strings.HasPrefix(k, "on"):
				t.Errorf("<%s> has an event handler attribute %s", n.name, k)
			case k == "src" || k == "href" || k == "action" || k == "srcset" || k == "poster":
				if !strings.HasPrefix(v, "#") {
					t.Errorf("<%s %s=%q> refers outside the page", n.name, k, v)
				}
			case k == "xmlns" && v != "http://www.w3.org/2000/svg":
				t.Errorf("<%s> has an unexpected namespace %q", n.name, v)
			case strings.Contains(strings.ToLower(v), "http://") || strings.Contains(strings.ToLower(v), "https://"):
				if k != "xmlns" {
					t.Errorf("<%s %s=%q> holds a URL", n.name, k, v)
				}
			}
		}
	}
}

// charts returns the page's charts by data-chart name and checks each has
// a title and both axis labels.
func charts(t *testing.T, root *node) map[string]*node {
	t.Helper()
	out := map[string]*node{}
	for _, svg := range root.all(func(n *node) bool { return n.name == "svg" }) {
		id := svg.attrs["data-chart"]
		if id == "" {
			t.Errorf("an svg has no data-chart name")
			continue
		}
		if _, dup := out[id]; dup {
			t.Errorf("chart %q appears twice", id)
		}
		out[id] = svg
		if vb := svg.attrs["viewBox"]; !strings.HasPrefix(vb, "0 0 800 ") {
			t.Errorf("chart %q viewBox = %q", id, vb)
		}
		titles := svg.all(func(n *node) bool { return n.name == "title" })
		if len(titles) != 1 || strings.TrimSpace(titles[0].textOf()) == "" {
			t.Errorf("chart %q has no title", id)
		}
		labels := svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "al" })
		if len(labels) != 2 {
			t.Errorf("chart %q has %d axis labels, want 2", id, len(labels))
		}
		for _, l := range labels {
			if strings.TrimSpace(l.textOf()) == "" {
				t.Errorf("chart %q has an empty axis label", id)
			}
		}
	}
	return out
}

func render(t *testing.T, r HTMLReport) string {
	t.Helper()
	var buf bytes.Buffer
	if err := WriteHTML(&buf, r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func axisLabels(svg *node) []string {
	var out []string
	for _, l := range svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "al" }) {
		out = append(out, l.textOf())
	}
	return out
}

func TestHTMLRunReport(t *testing.T) {
	recs := sampleRecords(400, 1)
	h := sampleHeader("tts-short")
	rep := HTMLReport{Title: "omnibench run: tts-short", Header: h, Sections: RunSections(sampleRunReport(recs, h), recs)}
	page := render(t, rep)
	root := parsePage(t, page)
	checkSelfContained(t, page, root)
	got := charts(t, root)
	for _, id := range []string{"ttfp-cdf", "e2e-cdf", "underrun-dist", "worst-timeline", "request-rate", "in-flight", "errors-over-time", "server-vs-client"} {
		if got[id] == nil {
			t.Errorf("run report lacks chart %q", id)
		}
	}
	wantLabels := map[string][]string{
		"ttfp-cdf":       {"TTFP (ms)", "requests at or below (%)"},
		"e2e-cdf":        {"end-to-end latency (ms)", "requests at or below (%)"},
		"underrun-dist":  {"maximum underrun (s)", "responses (count)"},
		"worst-timeline": {"time since the request was sent (s)", "audio (s)"},
		"request-rate":   {"time since run start (s)", "requests per second (req/s)"},
	}
	for id, want := range wantLabels {
		if svg := got[id]; svg != nil && !slices.Equal(axisLabels(svg), want) {
			t.Errorf("chart %q axis labels = %q, want %q", id, axisLabels(svg), want)
		}
	}
	for _, want := range []string{"Requests", "Latency and real-time factor", "Playback continuity", "http://127.0.0.1:8000", "tts-short", "client adds network time"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// The worst response's timeline draws all four curves.
	if svg := got["worst-timeline"]; svg != nil {
		if paths := svg.all(func(n *node) bool { return n.name == "path" }); len(paths) != 4 {
			t.Errorf("worst-timeline has %d curves, want 4 (received, reference, stall-and-resume, pre-roll)", len(paths))
		}
	}
	if strings.Contains(page, "NaN") || strings.Contains(page, "+Inf") || strings.Contains(page, "-Inf") {
		t.Errorf("page contains a non-finite number")
	}
	// Only the server-vs-client rows with both values are charted.
	if svg := got["server-vs-client"]; svg != nil {
		if rects := svg.all(func(n *node) bool { return n.name == "rect" && strings.HasPrefix(n.attrs["fill"], "#") }); len(rects) != 2*3+2 { // 3 rows of 2 bars, 2 legend boxes
			t.Errorf("server-vs-client has %d filled rects, want 8", len(rects))
		}
	}
}

func TestHTMLSweepReport(t *testing.T) {
	levels, slos := sampleSweep()
	page := render(t, HTMLReport{Title: "omnibench sweep", Sections: SweepSections(levels, slos)})
	root := parsePage(t, page)
	checkSelfContained(t, page, root)
	got := charts(t, root)
	for _, id := range []string{"sweep-ttfp", "sweep-e2e", "sweep-continuity", "sweep-rtf", "sweep-request-throughput", "sweep-audio-throughput", "sweep-errors", "sweep-e2e_p99"} {
		if got[id] == nil {
			t.Errorf("sweep report lacks chart %q", id)
		}
	}
	// Each SLO is drawn on its figure's chart and nowhere else.
	sloOn := map[string]string{"sweep-ttfp": "SLO TTFP p95 ≤ 1000 ms", "sweep-continuity": "SLO continuity_ok_rate 0.95", "sweep-e2e_p99": "SLO e2e_p99 8000"}
	for id, svg := range got {
		labels := svg.all(func(n *node) bool { return n.name == "text" && n.attrs["class"] == "reflabel" })
		want, has := sloOn[id]
		switch {
		case has && (len(labels) != 1 || labels[0].textOf() != want):
			t.Errorf("chart %q SLO labels = %d, want one %q", id, len(labels), want)
		case !has && len(labels) != 0:
			t.Errorf("chart %q has %d SLO lines, want none", id, len(labels))
		}
		if xl := axisLabels(svg); len(xl) == 2 && xl[0] != "concurrency (streams)" {
			t.Errorf("chart %q x label = %q", id, xl[0])
		}
	}
	// One table, one row per level (TestHTMLSweepLevelsTable checks its
	// columns).
	tables := root.all(func(n *node) bool { return n.name == "table" })
	if len(tables) != 1 {
		t.Fatalf("sweep tables = %d, want 1", len(tables))
	}
	for _, tb := range tables {
		if rows := tb.all(func(n *node) bool { return n.name == "tr" }); len(rows) != 1+len(levels) {
			t.Errorf("sweep table has %d rows, want %d", len(rows), 1+len(levels))
		}
	}
}

func TestHTMLABReport(t *testing.T) {
	a, b, tables := sampleAB("baseline", "candidate")
	page := render(t, HTMLReport{Title: "omnibench ab", Sections: ABSections(a, b, tables)})
	root := parsePage(t, page)
	checkSelfContained(t, page, root)
	got := charts(t, root)
	for _, id := range []string{"ab-cdf-ttfp_ms", "ab-cdf-e2e_ms", "ab-cdf-audio_underrun_s"} {
		if got[id] == nil {
			t.Errorf("ab report lacks chart %q", id)
		}
	}
	var order []string
	for _, svg := range root.all(func(n *node) bool { return n.name == "svg" }) {
		order = append(order, svg.attrs["data-chart"])
	}
	if want := []string{"ab-cdf-ttfp_ms", "ab-cdf-e2e_ms", "ab-cdf-audio_underrun_s"}; !slices.Equal(order, want) {
		t.Errorf("ab chart order = %v, want the summary's metric order %v", order, want)
	}
	if svg := got["ab-cdf-ttfp_ms"]; svg != nil {
		if paths := svg.all(func(n *node) bool { return n.name == "path" }); len(paths) != 2 {
			t.Errorf("ab chart has %d curves, want 2", len(paths))
		}
		if !strings.Contains(svg.textOf(), "baseline (n=300)") || !strings.Contains(svg.textOf(), "candidate (n=300)") {
			t.Errorf("ab chart legend lacks the arm names: %q", svg.textOf())
		}
	}
	// B has no underrun samples: its curve is simply absent.
	if svg := got["ab-cdf-audio_underrun_s"]; svg != nil && !strings.Contains(svg.textOf(), "candidate (n=0)") {
		t.Errorf("ab underrun chart legend: %q", svg.textOf())
	}
	if !strings.Contains(page, "p (Mann-Whitney)") {
		t.Error("ab page lacks the given table")
	}
}

func TestHTMLCompareTables(t *testing.T) {
	sec := TablesSection("Compare", Table{Title: "runs", Header: []string{"figure", "a", "b"}, Rows: [][]string{{"ttfp p95", "312.5", "290.1"}}})
	page := render(t, HTMLReport{Title: "omnibench compare", Sections: []HTMLSection{sec}})
	root := parsePage(t, page)
	checkSelfContained(t, page, root)
	cells := root.all(func(n *node) bool { return n.name == "td" })
	if len(cells) != 3 || cells[1].attrs["class"] != "num" || cells[0].attrs["class"] != "" {
		t.Errorf("compare cells: %d, classes %v / %v", len(cells), cells[0].attrs, cells[1].attrs)
	}
}

func TestHTMLEscaping(t *testing.T) {
	const evil = `<script>alert("x")</script>&'`
	recs := sampleRecords(60, 2)
	for i := range recs {
		recs[i].ID = evil + recs[i].ID
	}
	h := sampleHeader(evil)
	h.Flags = map[string]string{"scenario": evil}
	run := sampleRunReport(recs, h)
	run.Notes = []string{evil}
	run.ServerVsClient[0].Figure = evil
	a, b, tables := sampleAB(evil, "b"+evil)
	tables[0].Rows[0][0] = evil
	levels, slos := sampleSweep()
	levels[0].XLabel = evil
	slos = append(slos, SLOLine{Figure: evil, Value: 1, Label: evil})
	secs := RunSections(run, recs)
	secs = append(secs, SweepSections(levels, slos)...)
	secs = append(secs, ABSections(a, b, tables)...)
	secs = append(secs, TablesSection(evil, Table{Title: evil, Header: []string{evil}, Rows: [][]string{{evil}}, Notes: []string{evil}}))
	page := render(t, HTMLReport{Title: evil, Header: h, Sections: secs})
	if strings.Contains(strings.ToLower(page), "<script") {
		t.Fatalf("an unescaped <script> reached the page")
	}
	root := parsePage(t, page) // escaping mistakes also break well-formedness
	checkSelfContained(t, page, root)
	// The text survives escaping intact: the reader sees what was given.
	if n := strings.Count(root.textOf(), evil); n < 10 {
		t.Errorf("escaped text appears %d times, want it everywhere it was given", n)
	}
	if root.all(func(n *node) bool { return n.name == "script" }) != nil {
		t.Error("page has a script element")
	}
	got := charts(t, root)
	if got["sweep-"+slug(evil)] == nil {
		t.Errorf("SLO chart for an odd figure name missing; have %v", keys(got))
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestHTMLEmptyInputs(t *testing.T) {
	secs := RunSections(RunReport{}, nil)
	secs = append(secs, SweepSections(nil, nil)...)
	secs = append(secs, ABSections(ABArm{}, ABArm{}, nil)...)
	for _, r := range []HTMLReport{{}, {Sections: secs}} {
		page := render(t, r)
		root := parsePage(t, page)
		checkSelfContained(t, page, root)
		got := charts(t, root)
		if len(r.Sections) == 0 {
			if len(got) != 0 {
				t.Errorf("empty report has charts %v", keys(got))
			}
			continue
		}
		for _, id := range []string{"ttfp-cdf", "e2e-cdf", "underrun-dist", "worst-timeline", "request-rate", "in-flight", "errors-over-time", "sweep-ttfp", "sweep-errors"} {
			svg := got[id]
			if svg == nil {
				t.Errorf("empty report lacks chart %q", id)
				continue
			}
			note := svg.all(func(n *node) bool { return n.attrs["class"] == "nodata" })
			if len(note) != 1 {
				t.Errorf("empty chart %q has no 'no data' note", id)
			}
		}
	}
}

func TestHTMLNonFinite(t *testing.T) {
	levels := []SweepLevel{
		{X: 1, Figures: map[string]float64{"e2e_p95": math.NaN(), "audio_ttfp_p95": 200}},
		{X: 2, Figures: map[string]float64{"e2e_p95": 900, "audio_ttfp_p95": math.Inf(1)}},
		{X: math.NaN(), Figures: map[string]float64{"e2e_p95": 950}},
	}
	a := ABArm{Name: "a", Samples: map[string][]float64{"x": {1, math.NaN(), 2, math.Inf(-1)}}}
	recs := []results.Record{{ID: "r", SentS: 0, E2ES: 1, TTFPS: math.NaN(), AudioBytes: 10, Continuity: &results.Continuity{MaxUnderrunS: math.Inf(1)}}}
	secs := append(SweepSections(levels, []SLOLine{{Figure: "e2e_p95", Value: math.NaN()}}), ABSections(a, ABArm{}, nil)...)
	secs = append(secs, RunSections(RunReport{}, recs)...)
	page := render(t, HTMLReport{Sections: secs})
	root := parsePage(t, page)
	checkSelfContained(t, page, root)
	for _, n := range root.all(func(n *node) bool { return n.name == "svg" }) {
		for _, m := range n.all(func(*node) bool { return true }) {
			for k, v := range m.attrs {
				if strings.Contains(v, "NaN") || strings.Contains(v, "Inf") {
					t.Errorf("chart %s: <%s %s=%q>", n.attrs["data-chart"], m.name, k, v)
				}
			}
		}
	}
	if svg := charts(t, root)["ab-cdf-x"]; svg == nil || !strings.Contains(svg.textOf(), "a (n=2)") {
		t.Errorf("ab chart should count the two finite samples")
	}
}

// TestHTMLLargeRun checks that 100k requests make a page of modest size:
// CDFs keep 500 ranks and the over-time charts bin time.
func TestHTMLLargeRun(t *testing.T) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(9, 9))
	recs := make([]results.Record, n)
	for i := range recs {
		sent := float64(i) * 0.018 // 30 minutes
		e2e := 2 + rng.Float64()
		recs[i] = results.Record{ID: fmt.Sprint(i), Seq: i, SentS: sent, E2ES: e2e, TTFPS: 0.2 + 0.1*rng.Float64(),
			AudioBytes: 96000, SampleRate: 24000, ChunkArrivalsS: []float64{0.25, 0.9, 1.9}, ChunkBytes: []int{32000, 32000, 32000},
			Continuity: &results.Continuity{MaxUnderrunS: math.Max(0, rng.NormFloat64()*0.05)}}
		if i%500 == 0 {
			recs[i].ErrorClass = results.ErrTimeout
		}
	}
	page := render(t, HTMLReport{Title: "large", Sections: RunSections(RunReport{}, recs)})
	t.Logf("page of %d requests: %d bytes", n, len(page))
	if len(page) > 400_000 {
		t.Errorf("page of 100k requests is %d bytes, want under 400 kB", len(page))
	}
	root := parsePage(t, page)
	got := charts(t, root)
	if svg := got["in-flight"]; svg == nil || !strings.Contains(page, "Peak in each") {
		t.Errorf("in-flight chart of a large run should show peaks per interval")
	}
}

func TestWriteHTMLFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	levels, slos := sampleSweep()
	if err := WriteHTMLFile(path, HTMLReport{Title: "sweep", Sections: SweepSections(levels, slos)}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	parsePage(t, string(b))
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("report mode = %v, %v; want 0644", st.Mode(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d files, want only the report (temporary file left behind?)", len(entries))
	}

	bad := filepath.Join(dir, "missing", "report.html")
	if err := WriteHTMLFile(bad, HTMLReport{}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("error for a missing directory = %v, want it to name %s", err, bad)
	}
}

// TestHTMLSample writes the sample reports used for the README screenshot
// into $OMNIBENCH_HTML_SAMPLE_DIR when that is set (a test temp dir
// otherwise, so the rendering path always runs).
func TestHTMLSample(t *testing.T) {
	dir := os.Getenv("OMNIBENCH_HTML_SAMPLE_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	recs := sampleRecords(400, 1)
	h := sampleHeader("tts-short")
	levels, slos := sampleSweep()
	a, b, tables := sampleAB("baseline", "candidate")
	for name, r := range map[string]HTMLReport{
		"report.html": {Title: "omnibench run: tts-short", Header: h, Sections: RunSections(sampleRunReport(recs, h), recs)},
		"sweep.html":  {Title: "omnibench sweep: tts-short", Header: h, Sections: SweepSections(levels, slos)},
		"ab.html":     {Title: "omnibench ab: baseline vs candidate", Sections: ABSections(a, b, tables)},
	} {
		if err := WriteHTMLFile(filepath.Join(dir, name), r); err != nil {
			t.Fatal(err)
		}
	}
}
