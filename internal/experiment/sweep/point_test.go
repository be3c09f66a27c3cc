package sweep

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// records are four completed chat responses and one failure, with
// hand-computed figures (linear interpolation, numpy's default):
//
//	TTFP 100, 200, 300, 400 ms: p50 = 250, p95 = 300 + 0.85*100 = 385
//	e2e 1, 2, 3, 4 s:           p95 = 3000 + 0.85*1000 = 3850 ms
//	RTF 0.5, 0.5, 0.6, 0.7:     p50 = 0.55
//	worst gaps 0, 0, 0.05, 0.2: 3 of 4 within 100 ms = 0.75
//	errors 1 of 5 = 0.2; first send 0, last end 1 + 4 = 5 s:
//	request throughput 4/5 = 0.8, audio throughput 4*2/5 = 1.6
func records() []results.Record {
	rec := func(sent, ttfp, e2e, rtf, gap float64) results.Record {
		return results.Record{Kind: results.KindChat, SentS: sent, TTFPS: ttfp, E2ES: e2e, AudioBytes: 96000,
			AudioDurationS: 2, RTFLastChunk: rtf, Continuity: &results.Continuity{MaxUnderrunS: gap}}
	}
	return []results.Record{
		rec(0, 0.1, 1, 0.5, 0),
		rec(0, 0.2, 2, 0.5, 0),
		rec(1, 0.3, 3, 0.6, 0.05),
		rec(1, 0.4, 4, 0.7, 0.2),
		{Kind: results.KindChat, SentS: 2, E2ES: 0.5, ErrorClass: results.ErrHTTPStatus, Status: 500},
	}
}

func TestFiguresOf(t *testing.T) {
	recs := records()
	for _, ps := range [][]float64{nil, {90, 99}} {
		s := summary.Compute(recs, summary.Options{Percentiles: ps})
		f := FiguresOf(s, summary.SetOf(recs))
		near := func(name string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-9 {
				t.Errorf("percentiles %v: %s = %v, want %v", ps, name, got, want)
			}
		}
		near("TTFP p50", f.TTFPP50MS, 250)
		near("TTFP p95", f.TTFPP95MS, 385)
		near("e2e p95", f.E2EP95MS, 3850)
		near("RTF p50", f.RTFP50, 0.55)
		near("continuity", f.ContinuityOKRate, 0.75)
		near("error rate", f.ErrorRate, 0.2)
		near("request throughput", f.RequestThroughput, 0.8)
		near("audio throughput", f.AudioThroughput, 1.6)
		if f.Requests != 5 || f.Completed != 4 || f.Failed != 1 || f.ContinuityThresholdMS != "100" {
			t.Errorf("counts %+v", f)
		}
		m := f.Map()
		if len(m) != 8 || m[KeyTTFPP95] != f.TTFPP95MS || m[KeyErrorRate] != 0.2 {
			t.Errorf("map %v", m)
		}
	}
	// No summary: every figure undefined, and the map empty.
	f := FiguresOf(nil, nil)
	if !math.IsNaN(f.TTFPP50MS) || !math.IsNaN(f.ErrorRate) || len(f.Map()) != 0 {
		t.Errorf("empty figures %+v", f)
	}
}

func TestDocumentJSON(t *testing.T) {
	recs := records()
	s := summary.Compute(recs, summary.Options{})
	slos := []slo.SLO{mustParse(t, "continuity_ok_rate>=0.7"), mustParse(t, "audio_ttfp_p99<1s")}
	noAudio := Measure(8, Measurement{Summary: summary.Compute(recs[4:], summary.Options{})}, slos)
	res := &Result{Axis: Concurrency, SLOs: slos, Points: []Point{Measure(4, Measurement{Summary: s, Set: summary.SetOf(recs)}, slos), noAudio}}

	data, err := json.Marshal(res.Document())
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion int    `json:"schema_version"`
		Command       string `json:"command"`
		Axis          string `json:"axis"`
		Levels        []struct {
			Level   float64        `json:"level"`
			SLOPass bool           `json:"slo_pass"`
			Figures map[string]any `json:"figures"`
			SLOs    []any          `json:"slos"`
			Summary map[string]any `json:"summary"`
		} `json:"levels"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	if doc.SchemaVersion != 1 || doc.Command != "sweep" || doc.Axis != "concurrency" || len(doc.Levels) != 2 {
		t.Fatalf("document %s", data)
	}
	l0, l1 := doc.Levels[0], doc.Levels[1]
	if !l0.SLOPass || l0.Figures["audio_ttfp_p95_ms"] != 385.0 || len(l0.SLOs) != 2 || l0.Summary == nil {
		t.Errorf("level 4: %+v", l0)
	}
	// The failure-only level has no audio: TTFP is null, both SLOs miss.
	if v, ok := l1.Figures["audio_ttfp_p50_ms"]; !ok || v != nil || l1.SLOPass {
		t.Errorf("level 8: %+v", l1)
	}

	levels := res.HTMLLevels()
	// audio_ttfp_p99 is not a sweep figure: its observed value rides along for its SLO chart.
	if len(levels) != 2 || levels[0].XLabel != "concurrency" || levels[0].Figures["audio_ttfp_p99"] == 0 {
		t.Errorf("HTML levels %+v", levels)
	}
	lines := SLOLines(slos)
	if len(lines) != 2 || lines[1].Figure != "audio_ttfp_p99" || lines[1].Value != 1000 || !strings.Contains(lines[1].Label, "audio_ttfp_p99<1s") {
		t.Errorf("SLO lines %+v", lines)
	}
}

func TestSearchDocument(t *testing.T) {
	f := passUpTo(3)
	s, err := Capacity(t.Context(), SearchOptions{Axis: Concurrency, SLOs: noErrors()}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	d := s.Document()
	if d.Command != "capacity" || d.Capacity == nil || float64(d.Capacity.Capacity) != 3 || d.Capacity.Runs != 4 ||
		len(d.Levels) != 4 || d.Levels[3].Phase != PhaseBisect || d.Levels[3].Run != 4 {
		t.Fatalf("document %+v", d)
	}
	tb := s.Tables()[0]
	if len(tb.Rows) != 4 || tb.Rows[2][3] != "FAIL" || tb.Rows[0][3] != "pass" {
		t.Errorf("rows %q", tb.Rows)
	}
	if !slices.Contains(tb.Notes, s.Answer()) || tb.Rows[2][7] != "errors<1 [2]" || tb.Notes[1] != "[2] errors = 1, limit < 1: missed: exactly at the limit" {
		t.Errorf("notes %q", tb.Notes)
	}
	js := s.JUnitSuites()
	if len(js) != 2 || js[0].Cases[0].Failure != "" || js[1].Name != "slo concurrency=3 (capacity)" {
		t.Errorf("JUnit %+v", js)
	}
}

func mustParse(t *testing.T, expr string) slo.SLO {
	t.Helper()
	s, err := slo.Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
