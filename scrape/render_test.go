package scrape

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/report/table"
)

func TestDeltaTablesAndJSON(t *testing.T) {
	before := mustParse(t, ctText, readTestdata(t, "python.prom"))
	after := mustParse(t, ctText, edit(t, "python.prom",
		stopLine, strings.Replace(stopLine, "3.0", "1.0", 1),
		framesLine, strings.Replace(framesLine, "96000.0", "120000.0", 1)))
	d := Diff(before, after)

	tables := d.Tables(TableOptions{})
	if len(tables) != 1 || len(tables[0].Rows) != 2 {
		t.Fatalf("changed-only tables = %+v", tables)
	}
	if row := tables[0].Rows[0]; row[0] != "vllm:omni_audio_frames_total" || row[4] != "24000" {
		t.Errorf("frames row = %v", row)
	}
	if row := tables[0].Rows[1]; row[4] != "1" || row[5] != "reset (restart)" {
		t.Errorf("reset row = %v", row)
	}
	if n := tables[0].Notes; len(n) != 1 || !strings.Contains(n[0], "1 series went down") {
		t.Errorf("notes = %v", n)
	}
	all := d.Tables(TableOptions{All: true, Buckets: true})
	if len(all) != 4 {
		t.Fatalf("%d tables with --all --buckets, want counters, histograms, gauges, buckets", len(all))
	}
	var buf bytes.Buffer
	if err := table.Render(&buf, "markdown", all...); err != nil {
		t.Fatal(err)
	}

	buf.Reset()
	if err := d.WriteJSON(&buf, TableOptions{All: true}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Reset       bool `json:"reset"`
		ResetSeries int  `json:"reset_series"`
		Families    []struct {
			Name   string `json:"name"`
			Series []struct {
				Quantiles map[string]any `json:"quantiles"`
				Buckets   []struct {
					LE string `json:"le"`
				} `json:"buckets"`
			} `json:"series"`
		} `json:"families"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%s", err, buf.String())
	}
	if !doc.Reset || doc.ResetSeries != 1 {
		t.Errorf("reset = %v, %d", doc.Reset, doc.ResetSeries)
	}
	for _, f := range doc.Families {
		if f.Name != "vllm:omni_audio_ttfp_s" {
			continue
		}
		s := f.Series[0]
		if s.Quantiles["0.5"] != "NaN" || s.Buckets[len(s.Buckets)-1].LE != "+Inf" {
			t.Errorf("no observations: quantiles %v, last bucket %v", s.Quantiles, s.Buckets[len(s.Buckets)-1])
		}
	}
}

func TestFormatValue(t *testing.T) {
	for v, want := range map[float64]string{96000: "96000", 0.92: "0.92", 1.7513712e9: "1751371200", 1e20: "1e+20", 1.0 / 3: "0.333333"} {
		if got := FormatValue(v); got != want {
			t.Errorf("FormatValue(%v) = %q, want %q", v, got, want)
		}
	}
}
