package sweep

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/slo"
)

func TestSweepAllLevels(t *testing.T) {
	f := passUpTo(4)
	sat := DefaultSaturation()
	var seen []float64
	res, err := Sweep(t.Context(), Options{
		Axis: Concurrency, Levels: []float64{8, 1, 2, 4}, SLOs: noErrors(), Saturation: &sat,
		OnPoint: func(p Point) { seen = append(seen, p.Level) },
	}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 2, 4, 8}; !slices.Equal(f.levels, want) || !slices.Equal(seen, want) {
		t.Fatalf("ran %v, reported %v, want %v", f.levels, seen, want)
	}
	if res.Stop != nil {
		t.Fatalf("stopped: %+v", res.Stop)
	}
	if res.AllPass() {
		t.Fatal("AllPass with a failing level")
	}
	for _, p := range res.Points {
		if p.Pass() != (p.Level <= 4) {
			t.Errorf("level %v pass %v", p.Level, p.Pass())
		}
	}
	tables := res.Tables()
	if len(tables) != 1 || len(tables[0].Rows) != 4 {
		t.Fatalf("tables %+v", tables)
	}
	row := tables[0].Rows[3]
	// 19 of 20 completed, 1 failed, TTFP 100 ms, throughput 8.
	want := []string{"8", "19/20", "1", "100.0", "100.0", "-", "100.0%", "-", "8.000", "0.000", "MISS [1]"}
	if !slices.Equal(row, want) {
		t.Errorf("row\n got %q\nwant %q", row, want)
	}
	if !slices.Contains(tables[0].Notes, "[1] concurrency 8: errors = 1, limit < 1: missed: exactly at the limit") {
		t.Errorf("notes %q", tables[0].Notes)
	}
	js := res.JUnitSuites()
	if len(js) != 4 || js[0].Name != "slo concurrency=1" || js[3].Cases[0].Failure == "" || js[0].Cases[0].Failure != "" {
		t.Errorf("JUnit suites %+v", js)
	}
}

func TestSweepStopsOnErrors(t *testing.T) {
	f := &fakeRunner{fn: func(level float64) fakeLevel {
		if level >= 8 {
			return fakeLevel{failed: 11, ttfpMS: 100, throughput: 1} // 55% errors
		}
		return fakeLevel{ttfpMS: 100, throughput: level}
	}}
	sat := DefaultSaturation()
	res, err := Sweep(t.Context(), Options{Axis: Concurrency, Levels: []float64{1, 2, 4, 8, 16, 32}, Saturation: &sat}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	if want := []float64{1, 2, 4, 8}; !slices.Equal(f.levels, want) {
		t.Fatalf("ran %v, want %v", f.levels, want)
	}
	if res.Stop == nil || res.Stop.Level != 8 || !slices.Equal(res.Stop.Skipped, []float64{16, 32}) {
		t.Fatalf("stop %+v", res.Stop)
	}
	want := "stopped early at concurrency 8: error rate 55% (11 of 20 requests failed) is above the limit 50%; not run: 16, 32"
	if got := res.StopNote(); got != want {
		t.Errorf("note\n got %q\nwant %q", got, want)
	}
	if tb := res.Tables()[0]; tb.Notes[len(tb.Notes)-1] != want {
		t.Errorf("table notes %q", tb.Notes)
	}
	if res.Document().StoppedEarly == nil {
		t.Error("document lacks stopped_early")
	}

	// Without a saturation test every level runs.
	f.levels = nil
	res, err = Sweep(t.Context(), Options{Axis: Concurrency, Levels: []float64{1, 2, 4, 8, 16, 32}}, f.run)
	if err != nil || res.Stop != nil || len(f.levels) != 6 {
		t.Fatalf("err %v stop %+v ran %v", err, res.Stop, f.levels)
	}
}

func TestSweepStopsOnTTFPGrowth(t *testing.T) {
	// Throughput flat at 4 from level 4 on while TTFP quadruples and more.
	f := &fakeRunner{fn: func(level float64) fakeLevel {
		switch level {
		case 1, 2, 4:
			return fakeLevel{ttfpMS: 100, throughput: level}
		case 8:
			return fakeLevel{ttfpMS: 300, throughput: 4.2}
		}
		return fakeLevel{ttfpMS: 1500, throughput: 4.3}
	}}
	sat := DefaultSaturation()
	res, err := Sweep(t.Context(), Options{Axis: Rate, Levels: []float64{1, 2, 4, 8, 16, 32}, Saturation: &sat}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop == nil || res.Stop.Level != 16 {
		t.Fatalf("stop %+v after %v", res.Stop, f.levels)
	}
	if want := "TTFP p50 grew 5.0x (300 ms to 1500 ms) while request throughput changed +2% (4.2 to 4.3 req/s)"; !strings.HasPrefix(res.Stop.Reason, want) {
		t.Errorf("reason %q, want prefix %q", res.Stop.Reason, want)
	}
}

func TestSaturationCheck(t *testing.T) {
	pt := func(ttfp, thr, errRate float64) Point {
		return Point{Figures: Figures{TTFPP50MS: ttfp, RequestThroughput: thr, ErrorRate: errRate, Requests: 10, Failed: int(errRate * 10)}}
	}
	s := DefaultSaturation()
	tests := []struct {
		name      string
		prev      *Point
		cur       Point
		saturated bool
	}{
		{"first level, no errors", nil, pt(1000, 1, 0), false},
		{"first level, errors above the limit", nil, pt(100, 1, 0.6), true},
		{"errors exactly at the limit", nil, pt(100, 1, 0.5), false},
		{"TTFP 4x exactly", ptr(pt(100, 5, 0)), pt(400, 5, 0), false},
		{"TTFP 4.1x, flat throughput", ptr(pt(100, 5, 0)), pt(410, 5, 0), true},
		{"TTFP 4.1x, throughput +9%", ptr(pt(100, 5, 0)), pt(410, 5.45, 0), true},
		{"TTFP 4.1x, throughput +10%", ptr(pt(100, 5, 0)), pt(410, 5.5, 0), false},
		{"TTFP 5x, throughput unknown", ptr(pt(100, math.NaN(), 0)), pt(500, 5, 0), true},
		{"no TTFP before", ptr(pt(math.NaN(), 5, 0)), pt(500, 5, 0), false},
		{"no TTFP now", ptr(pt(100, 5, 0)), pt(math.NaN(), 5, 0), false},
	}
	for _, tt := range tests {
		if _, got := s.Check(tt.prev, tt.cur); got != tt.saturated {
			t.Errorf("%s: saturated %v, want %v", tt.name, got, tt.saturated)
		}
	}
	off := Saturation{MaxErrorRate: 1}
	if _, got := off.Check(ptr(pt(1, 1, 0)), pt(1000, 1, 1)); got {
		t.Error("a disabled saturation test stopped")
	}
}

func ptr(p Point) *Point { return &p }

func TestSweepRunError(t *testing.T) {
	f := passUpTo(100)
	f.errAt = 4
	res, err := Sweep(t.Context(), Options{Axis: Concurrency, Levels: []float64{1, 2, 4, 8}}, f.run)
	if !errors.Is(err, errFake) || !strings.Contains(err.Error(), "level 4") {
		t.Fatalf("error %v", err)
	}
	if len(res.Points) != 3 || !res.Points[2].Partial || res.Points[2].Level != 4 {
		t.Fatalf("points %+v", res.Points)
	}
	if tb := res.Tables()[0]; tb.Rows[2][0] != "4 [1]" || !strings.HasPrefix(tb.Notes[0], "[1] interrupted: ") {
		t.Errorf("level cell %q, notes %q", tb.Rows[2][0], tb.Notes)
	}
}

func TestSweepOptionErrors(t *testing.T) {
	if _, err := Sweep(t.Context(), Options{Axis: Concurrency}, passUpTo(1).run); err == nil {
		t.Error("no levels: no error")
	}
	if _, err := Sweep(t.Context(), Options{Axis: "x", Levels: []float64{1}}, passUpTo(1).run); err == nil {
		t.Error("bad axis: no error")
	}
}

func TestTightest(t *testing.T) {
	p := Point{SLOs: []slo.Result{
		{Pass: true, Margin: 50, SLO: slo.SLO{Value: 500}},    // 10% of the limit
		{Pass: true, Margin: 0.01, SLO: slo.SLO{Value: 0.99}}, // 1%: tightest
		{Pass: false, Margin: -1, SLO: slo.SLO{Value: 1}},
		{Pass: true, Margin: math.NaN(), SLO: slo.SLO{Value: 1}},
	}}
	r, ok := p.Tightest()
	if !ok || r.Margin != 0.01 {
		t.Fatalf("tightest %+v %v", r, ok)
	}
	if _, ok := (Point{}).Tightest(); ok {
		t.Error("tightest of no SLOs")
	}
}
