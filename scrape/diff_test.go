package scrape

import (
	"math"
	"strings"
	"testing"
)

// edit returns the testdata file with exact line replacements applied.
func edit(t *testing.T, file string, pairs ...string) []byte {
	t.Helper()
	s := string(readTestdata(t, file))
	for i := 0; i < len(pairs); i += 2 {
		if !strings.Contains(s, pairs[i]) {
			t.Fatalf("%s has no %q", file, pairs[i])
		}
		s = strings.Replace(s, pairs[i], pairs[i+1], 1)
	}
	return []byte(s)
}

const (
	stopLine   = `vllm:omni_requests_success_total{finished_reason="stop",model_name="Qwen/Qwen3-Omni"} 3.0`
	lengthLine = `vllm:omni_requests_success_total{finished_reason="length",model_name="Qwen/Qwen3-Omni"} 1.0`
	framesLine = `vllm:omni_audio_frames_total{model_name="Qwen/Qwen3-Omni",replica="0",stage="2"} 96000.0`
	ttfpPrefix = `vllm:omni_audio_ttfp_s_bucket{model_name="Qwen/Qwen3-Omni",replica="0",stage="2",le=`
	ttfpCount  = `vllm:omni_audio_ttfp_s_count{model_name="Qwen/Qwen3-Omni",replica="0",stage="2"} 3.0`
	ttfpSum    = `vllm:omni_audio_ttfp_s_sum{model_name="Qwen/Qwen3-Omni",replica="0",stage="2"} 0.92`
	running    = `vllm:omni_num_requests_running{model_name="Qwen/Qwen3-Omni"} 1.0`
)

// ttfpEdits sets the ttfp buckets (cumulative, in SECONDS order plus +Inf).
func ttfpEdits(counts [14]string) []string {
	les := []string{"0.05", "0.1", "0.25", "0.5", "1.0", "2.0", "5.0", "10.0", "20.0", "30.0", "60.0", "120.0", "300.0", "+Inf"}
	old := [14]string{"0.0", "0.0", "2.0", "2.0", "3.0", "3.0", "3.0", "3.0", "3.0", "3.0", "3.0", "3.0", "3.0", "3.0"}
	var out []string
	for i, le := range les {
		out = append(out, ttfpPrefix+`"`+le+`"} `+old[i]+"\n", ttfpPrefix+`"`+le+`"} `+counts[i]+"\n")
	}
	return out
}

func TestDiff(t *testing.T) {
	before := mustParse(t, ctText, readTestdata(t, "python.prom"))
	// Two more stop requests, one more TTFP observation of 0.3 s, running
	// back to 0, and a new finish reason.
	pairs := append([]string{
		stopLine, strings.Replace(stopLine, "3.0", "5.0", 1),
		ttfpCount, strings.Replace(ttfpCount, "3.0", "4.0", 1),
		ttfpSum, strings.Replace(ttfpSum, "0.92", "1.22", 1),
		running, strings.Replace(running, "1.0", "0.0", 1),
		lengthLine, lengthLine + "\n" + `vllm:omni_requests_success_total{finished_reason="abort",model_name="Qwen/Qwen3-Omni"} 1.0`,
	}, ttfpEdits([14]string{"0.0", "0.0", "2.0", "3.0", "4.0", "4.0", "4.0", "4.0", "4.0", "4.0", "4.0", "4.0", "4.0", "4.0"})...)
	after := mustParse(t, ctText, edit(t, "python.prom", pairs...))
	d := Diff(before, after)

	if d.Reset {
		t.Errorf("no restart happened, Reset = true")
	}
	for _, f := range d.Families {
		if strings.HasSuffix(f.Name, "_created") {
			t.Errorf("created companion %s in the diff", f.Name)
		}
	}
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	v, ok := d.CounterDelta("requests_success_total", map[string]string{"finished_reason": "stop"})
	check("stop delta", v, 2)
	if !ok {
		t.Error("CounterDelta: family not found")
	}
	v, _ = d.CounterDelta("vllm_omni:requests_success_total", nil)
	check("all reasons delta (new abort series counts from 0)", v, 3)
	v, _ = d.CounterDelta("audio_frames_total", nil)
	check("frames delta", v, 0)

	h, ok := d.HistogramDelta("audio_ttfp_s", map[string]string{"stage": "2"})
	if !ok {
		t.Fatal("HistogramDelta: family not found")
	}
	check("ttfp count", h.Count, 1)
	check("ttfp sum", h.Sum, 0.3)
	check("ttfp mean", h.Mean(), 0.3)
	// The one observation is in (0.25, 0.5]: median 0.25 + 0.25*(0.5/1).
	check("ttfp median", h.Quantile(0.5), 0.375)
	if len(h.Buckets) != 14 || h.Buckets[3].UpperBound != 0.5 || h.Buckets[3].Count != 1 || h.Buckets[2].Count != 0 {
		t.Errorf("bucket deltas = %+v", h.Buckets)
	}
	h, _ = d.HistogramDelta("audio_ttfp_s", map[string]string{"stage": "9"})
	if h.Count != 0 || !math.IsNaN(h.Quantile(0.5)) {
		t.Errorf("no matching series: %+v", h)
	}

	g, ok := d.Gauge("num_requests_running", nil)
	if !ok || g.Before != 1 || g.After != 0 {
		t.Errorf("running gauge = %+v, %v", g, ok)
	}
	if _, ok := d.CounterDelta("num_requests_running", nil); ok {
		t.Error("CounterDelta accepted a gauge")
	}
	if _, ok := d.CounterDelta("no_such_family", nil); ok {
		t.Error("CounterDelta found a missing family")
	}

	f, _ := d.Family("requests_success_total")
	var changed int
	for _, s := range f.Series {
		if s.Changed() {
			changed++
		}
		if s.Labels["finished_reason"] == "abort" && (s.InBefore || !s.InAfter || s.Delta != 1) {
			t.Errorf("new series = %+v", s)
		}
	}
	if changed != 2 {
		t.Errorf("%d changed series in requests_success_total, want 2 (stop, abort)", changed)
	}
	if ff, _ := d.Family("audio_frames_total"); ff.Changed() {
		t.Error("unchanged family reported as changed")
	}
}

func TestDiffRestart(t *testing.T) {
	before := mustParse(t, ctText, readTestdata(t, "python.prom"))
	// The server restarted and served one request: counters are small again.
	pairs := append([]string{
		stopLine, strings.Replace(stopLine, "3.0", "1.0", 1),
		framesLine, strings.Replace(framesLine, "96000.0", "500.0", 1),
		ttfpCount, strings.Replace(ttfpCount, "3.0", "1.0", 1),
		ttfpSum, strings.Replace(ttfpSum, "0.92", "0.4", 1),
	}, ttfpEdits([14]string{"0.0", "0.0", "0.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0", "1.0"})...)
	after := mustParse(t, ctText, edit(t, "python.prom", pairs...))
	d := Diff(before, after)
	if !d.Reset || d.ResetSeries != 3 {
		t.Errorf("Reset = %v, ResetSeries = %d, want true, 3", d.Reset, d.ResetSeries)
	}
	if v, _ := d.CounterDelta("requests_success_total", map[string]string{"finished_reason": "stop"}); v != 1 {
		t.Errorf("stop delta across restart = %v, want the after value 1", v)
	}
	if v, _ := d.CounterDelta("audio_frames_total", nil); v != 500 {
		t.Errorf("frames delta across restart = %v, want 500", v)
	}
	h, _ := d.HistogramDelta("audio_ttfp_s", nil)
	if h.Count != 1 || h.Sum != 0.4 || h.Quantile(0.5) != 0.375 {
		t.Errorf("ttfp across restart = %+v, want the after histogram", h)
	}
	f, _ := d.Family("requests_success_total")
	for _, s := range f.Series {
		if s.Delta < 0 {
			t.Errorf("negative delta %v", s.Delta)
		}
		if want := s.Labels["finished_reason"] == "stop"; s.Reset != want {
			t.Errorf("%s: Reset = %v, want %v", s.Key, s.Reset, want)
		}
	}
}

func TestDiffRestartByCreated(t *testing.T) {
	before := mustParse(t, ctText, readTestdata(t, "python.prom"))
	// The value went up, but the created timestamp says the series is new.
	after := mustParse(t, ctText, edit(t, "python.prom",
		stopLine, strings.Replace(stopLine, "3.0", "5.0", 1),
		`vllm:omni_requests_success_created{finished_reason="stop",model_name="Qwen/Qwen3-Omni"} 1.7513712e+09`,
		`vllm:omni_requests_success_created{finished_reason="stop",model_name="Qwen/Qwen3-Omni"} 1.7513799e+09`))
	d := Diff(before, after)
	if v, _ := d.CounterDelta("requests_success_total", map[string]string{"finished_reason": "stop"}); !d.Reset || v != 5 {
		t.Errorf("Reset = %v, delta = %v; want true, 5", d.Reset, v)
	}
}

func TestDiffVanishedAndFromNothing(t *testing.T) {
	full := mustParse(t, ctText, readTestdata(t, "go.prom"))
	d := Diff(nil, full)
	if d.Reset {
		t.Error("diff from nothing flagged a reset")
	}
	if v, _ := d.CounterDelta("requests_success_total", nil); v != 4 {
		t.Errorf("delta from nothing = %v, want 4", v)
	}
	h, _ := d.HistogramDelta("e2e_request_latency_s", nil)
	if h.Count != 4 || h.Quantile(0.5) != 1 {
		t.Errorf("e2e from nothing = %+v", h)
	}
	// Everything gone: counters and histograms are resets with zero delta.
	d = Diff(full, Families{})
	if !d.Reset {
		t.Error("vanished counters not flagged")
	}
	if v, _ := d.CounterDelta("requests_success_total", nil); v != 0 {
		t.Errorf("delta of vanished = %v, want 0", v)
	}
	if g, _ := d.Gauge("num_requests_running", nil); g.Before != 1 || g.After != 0 {
		t.Errorf("vanished gauge = %+v", g)
	}
}
