package slo

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/junit"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
)

// testRecords is a small run whose figures are worked out by hand below.
//
//	warm-up (excluded everywhere), 4 completed speech requests, 1 timeout
//	TTFP ms:           100 200 300 400   -> mean 250, p50 250, p95 385, p97 391
//	e2e ms:            1000 1500 2000 2500
//	audio s:           2 3 4 5           -> total 14, mean 3.5
//	rtf_last_chunk:    0.4 0.45 0.5 0.55 -> mean 0.475
//	rtf_e2e:           0.5 each          -> audio_rtf (speech) 0.5
//	max underrun s:    0 0.15 0.05 0.25  -> ok at 100 ms: 2/4; at 200 ms: 3/4
//	stall-resume:      stalls 0 1 0 2    -> 2 of 4 responses stalled
//	duration: first send 0 s, last end 1.5 + 2.5 = 4 s -> 4 completed / 4 s = 1 req/s,
//	audio throughput 14 / 4 = 3.5; error rate 1/5 = 0.2
func testRecords() []results.Record {
	speech := func(seq int, sent, e2e, ttfp, dur, rtfLast, underrun float64, okAt100 bool, stalls int) results.Record {
		return results.Record{
			Type: "request", Seq: seq, Kind: results.KindSpeech,
			SentS: sent, E2ES: e2e, TTFPS: ttfp,
			AudioBytes: int64(dur * 48000), AudioFrames: int64(dur * 24000), AudioDurationS: dur,
			SampleRate: 24000, SampleWidth: 2, Channels: 1,
			RTFLastChunk: rtfLast, RTFE2E: e2e / dur,
			Continuity: &results.Continuity{
				Mode: "default", MaxUnderrunS: underrun, OK: map[string]bool{"100": okAt100},
				StallResume: &results.PlayerResult{Stalls: stalls, TotalStallS: underrun},
			},
		}
	}
	warm := speech(0, 0, 9, 9, 1, 9, 9, false, 9)
	warm.Warmup = true
	failed := results.Record{Type: "request", Seq: 6, Kind: results.KindSpeech, SentS: 2, E2ES: 0.5, ErrorClass: results.ErrTimeout}
	return []results.Record{
		warm,
		speech(1, 0.0, 1.0, 0.1, 2, 0.4, 0, true, 0),
		speech(2, 0.5, 1.5, 0.2, 3, 0.45, 0.15, false, 1),
		speech(3, 1.0, 2.0, 0.3, 4, 0.5, 0.05, true, 0),
		speech(4, 1.5, 2.5, 0.4, 5, 0.55, 0.25, false, 2),
		failed,
	}
}

func mustParse(t *testing.T, expr string) SLO {
	t.Helper()
	s, err := Parse(expr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestEvaluate(t *testing.T) {
	recs := testRecords()
	s := summary.Compute(recs, summary.Options{Goodput: []summary.Goodput{{Metric: "ttfp", Limit: 0.25}}})
	tests := []struct {
		expr     string
		observed float64
		pass     bool
		margin   float64
	}{
		{"audio_ttfp_p95<500ms", 385, true, 115},
		{"audio_ttfp_p95<300ms", 385, false, -85},
		{"audio_ttfp_p95 < 0.3 s", 385, false, -85},
		{"audio_ttfp_p97<0.39s", 391, false, -1}, // not summarised: computed from the records
		{"audio_ttfp_mean<=250ms", 250, true, 0},
		{"audio_ttfp_median==250ms", 250, true, 0},
		{"audio_ttfp_p50==250ms", 250, true, 0},
		{"audio_ttfp_min>=100ms", 100, true, 0},
		{"audio_ttfp_max>400ms", 400, false, 0},
		{"audio_ttfp_std<200ms", math.Sqrt(50000.0 / 3), true, 200 - math.Sqrt(50000.0/3)},
		{"e2el_p50<2s", 1750, true, 250},
		{"e2e_max<=2.5s", 2500, true, 0},
		{"e2e_p0>1s", 1000, false, 0},
		{"e2e_p100<3s", 2500, true, 500},
		{"audio_duration_mean>=3s", 3.5, true, 0.5},
		{"audio_underrun_max<200ms", 0.25, false, -0.05},
		{"underrun_p50<=100ms", 0.1, true, 0}, // (0.05+0.15)/2
		{"rtf_last_chunk_mean<0.5", 0.475, true, 0.025},
		{"audio_rtf_p99<1", 0.5, true, 0.5},
		{"rtf_e2e_max==0.5", 0.5, true, 0},
		{"schedule_lag_max<1ms", 0, true, 1},
		{"continuity_ok_rate>=99%", 0.5, false, -0.49},
		{"continuity_ok_rate_100ms>=0.5", 0.5, true, 0},
		{"continuity_ok_rate_200ms>=0.75", 0.75, true, 0}, // not summarised: from the records
		{"error_rate<0.01", 0.2, false, -0.19},
		{"error_rate<=20%", 0.2, true, 0},
		{"errors==0", 1, false, -1},
		{"completed>=4", 4, true, 0},
		{"request_throughput>1", 1, false, 0},
		{"audio_throughput>=3.5", 3.5, true, 0},
		{"goodput_rate>=0.5", 0.5, true, 0}, // TTFP <= 250 ms: requests 1 and 2, over 4 s
		{"goodput_share>50%", 0.4, false, -0.1},
		{"stall_rate<=50%", 0.5, true, 0},
	}
	slos := make([]SLO, len(tests))
	for i, tt := range tests {
		slos[i] = mustParse(t, tt.expr)
	}
	got := Evaluate(slos, s, recs)
	if len(got) != len(tests) {
		t.Fatalf("%d results for %d SLOs", len(got), len(tests))
	}
	for i, tt := range tests {
		r := got[i]
		if r.SLO != slos[i] || r.NoData || r.Pass != tt.pass || !near(r.Observed, tt.observed) || !near(r.Margin, tt.margin) {
			t.Errorf("%s: observed %v pass %v margin %v nodata %v (%s), want observed %v pass %v margin %v",
				tt.expr, r.Observed, r.Pass, r.Margin, r.NoData, r.Message, tt.observed, tt.pass, tt.margin)
		}
	}
	if AllPass(got) {
		t.Error("AllPass = true with misses")
	}
}

func TestEvaluateMessages(t *testing.T) {
	recs := testRecords()
	s := summary.Compute(recs, summary.Options{})
	for expr, want := range map[string]string{
		"audio_ttfp_p95<500ms":     "audio_ttfp_p95 = 385 ms, limit < 500 ms: ok, 115 ms to spare (23.0%)",
		"audio_ttfp_p95<300ms":     "audio_ttfp_p95 = 385 ms, limit < 300 ms: missed by 85 ms (28.3%)",
		"audio_ttfp_max>400ms":     "audio_ttfp_max = 400 ms, limit > 400 ms: missed: exactly at the limit",
		"audio_underrun_max<200ms": "audio_underrun_max = 0.25 s, limit < 0.2 s: missed by 0.05 s (25.0%)",
		"continuity_ok_rate>=99%":  "continuity_ok_rate = 0.5, limit >= 0.99: missed by 0.49 (49.5%)",
		"errors==0":                "errors = 1, limit == 0: off by 1",
		"completed==4":             "completed = 4, limit == 4: ok",
		"rtf_last_chunk_mean<0.5":  "rtf_last_chunk_mean = 0.475, limit < 0.5: ok, 0.025 to spare (5.0%)",
		"ttft_p95<1s":              "ttft_p95: no data (no completed response carried text); limit < 1000 ms: counts as a miss",
		"goodput_rate>1":           "goodput_rate: no data (goodput was not computed: give --goodput); limit > 1: counts as a miss",
	} {
		r := Evaluate([]SLO{mustParse(t, expr)}, s, recs)[0]
		if r.Message != want {
			t.Errorf("%s:\n got %q\nwant %q", expr, r.Message, want)
		}
	}
	// The example of the issue, on a hand-set value.
	r := judge(mustParse(t, "audio_ttfp_p95<500ms"), 612.3, "")
	if want := "audio_ttfp_p95 = 612.3 ms, limit < 500 ms: missed by 112.3 ms (22.5%)"; r.Message != want {
		t.Errorf("got %q\nwant %q", r.Message, want)
	}
}

func TestEvaluateNoData(t *testing.T) {
	recs := testRecords()
	s := summary.Compute(recs, summary.Options{})
	one := summary.Compute(recs[:2], summary.Options{}) // the warm-up and one request
	empty := summary.Compute(nil, summary.Options{})
	tests := []struct {
		name string
		expr string
		s    *summary.Summary
		recs []results.Record
		why  string
	}{
		{"no text", "ttft_p95<1s", s, recs, "no completed response carried text"},
		{"no text gaps", "itl_max<1s", s, recs, "no completed response had two text events"},
		{"no stamps", "stamp_delay_p99<1ms", s, recs, "the server sent no send stamps"},
		{"no server rtf", "rtf_server_p50<1", s, recs, "the server reported no generation time"},
		{"no goodput", "goodput_share>0", s, recs, "goodput was not computed: give --goodput"},
		{"std of one", "e2e_std<1s", one, recs[:2], "a standard deviation needs two values"},
		{"percentile without records", "audio_ttfp_p97<1s", s, nil, "p97 was not summarised and no records were given to compute it: add 97 to --percentiles"},
		{"threshold without records", "continuity_ok_rate_200ms>0", s, nil, "continuity at 200 ms was not simulated and no records were given to compute it: add 0.2s to --threshold"},
		{"no requests", "errors==0", empty, nil, "the run measured no requests"},
		{"no requests, rate", "error_rate<0.1", empty, nil, "the run measured no requests"},
		{"no summary", "errors==0", nil, recs, "no run summary"},
	}
	if r := Evaluate([]SLO{{Figure: "errors", Op: "<", Value: 1}}, s, recs)[0]; r.Pass || !r.NoData || !strings.Contains(r.Message, "slo.Parse") {
		t.Errorf("hand-built SLO: %+v, want a miss telling to use Parse", r)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Evaluate([]SLO{mustParse(t, tt.expr)}, tt.s, tt.recs)[0]
			if r.Pass || !r.NoData || !math.IsNaN(r.Observed) || !math.IsNaN(r.Margin) || !strings.Contains(r.Message, tt.why) {
				t.Errorf("%s: %+v, want a no-data miss saying %q", tt.expr, r, tt.why)
			}
		})
	}

	// No audio at all: every audio figure is a miss, not a silent pass.
	chat := []results.Record{{Type: "request", Kind: results.KindChat, SentS: 0, E2ES: 1, TTFTS: 0.2}}
	cs := summary.Compute(chat, summary.Options{})
	for _, expr := range []string{"audio_ttfp_p95<1s", "continuity_ok_rate>=0", "stall_rate<=1", "audio_rtf_max<100", "underrun_max<1m"} {
		if r := Evaluate([]SLO{mustParse(t, expr)}, cs, chat)[0]; r.Pass || !r.NoData {
			t.Errorf("%s on a run without audio: %+v, want a no-data miss", expr, r)
		}
	}
	// ... while what a text run has is judged normally.
	if r := Evaluate([]SLO{mustParse(t, "ttft_p95<=200ms")}, cs, chat)[0]; !r.Pass || r.NoData {
		t.Errorf("ttft on a text run: %+v", r)
	}
}

// An open-loop summary measures from the intended start; a percentile
// computed from the records must too.
func TestEvaluateFromIntended(t *testing.T) {
	recs := testRecords()
	for i := range recs {
		recs[i].LagS = 0.01
		recs[i].LatencyOrigin = results.OriginIntended
	}
	s := summary.Compute(recs, summary.Options{})
	r := Evaluate([]SLO{mustParse(t, "audio_ttfp_p97<1s"), mustParse(t, "audio_ttfp_p95<1s")}, s, recs)
	if !near(r[0].Observed, 401) || !near(r[1].Observed, 395) {
		t.Errorf("p97, p95 from the intended start = %v, %v; want 401, 395", r[0].Observed, r[1].Observed)
	}
}

func TestAllPass(t *testing.T) {
	if !AllPass(nil) {
		t.Error("AllPass(nil) = false")
	}
	if !AllPass([]Result{{Pass: true}, {Pass: true}}) || AllPass([]Result{{Pass: true}, {Pass: false}}) {
		t.Error("AllPass wrong")
	}
}

func TestResultJSON(t *testing.T) {
	s := summary.Compute(testRecords(), summary.Options{})
	rs := Evaluate([]SLO{mustParse(t, "ttft_p95<1s"), mustParse(t, "errors<=1")}, s, nil)
	b, err := json.Marshal(rs)
	if err != nil {
		t.Fatal(err)
	}
	var back []map[string]any
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back[0]["observed"] != nil || back[0]["margin"] != nil || back[0]["no_data"] != true || back[0]["pass"] != false {
		t.Errorf("no-data result as JSON = %v", back[0])
	}
	slo := back[1]["slo"].(map[string]any)
	if back[1]["observed"] != 1.0 || back[1]["pass"] != true || slo["figure"] != "errors" || slo["expr"] != "errors<=1" || slo["op"] != "<=" {
		t.Errorf("result as JSON = %v", back[1])
	}
}

func TestFormatNumber(t *testing.T) {
	for _, tt := range []struct {
		x    float64
		want string
	}{
		{612.3, "612.3"},
		{112.29999999999995, "112.3"},
		{12345.6, "12346"},
		{999.96, "1000"},
		{1.5, "1.5"},
		{3, "3"},
		{-5, "-5"},
		{0.99, "0.99"},
		{0.0123, "0.0123"},
		{0.04999999999999999, "0.05"},
		{1e-5, "1e-05"},
		{0, "0"},
		{math.Inf(1), "+Inf"},
	} {
		if got := formatNumber(tt.x); got != tt.want {
			t.Errorf("formatNumber(%v) = %q, want %q", tt.x, got, tt.want)
		}
	}
}

func TestJUnitSuite(t *testing.T) {
	recs := testRecords()
	s := summary.Compute(recs, summary.Options{})
	rs := Evaluate([]SLO{
		mustParse(t, " audio_ttfp_p95 < 500ms "),
		mustParse(t, "audio_ttfp_p95<300ms"),
		mustParse(t, "ttft_p95<1s"),
	}, s, recs)
	suite := JUnitSuite(rs)
	if suite.Name != "slo" || len(suite.Cases) != 3 {
		t.Fatalf("suite = %+v", suite)
	}
	pass, miss, nodata := suite.Cases[0], suite.Cases[1], suite.Cases[2]
	if pass.Name != "audio_ttfp_p95 < 500ms" || pass.Failure != "" || pass.Message != rs[0].Message || pass.Classname != "omnibench.slo" {
		t.Errorf("passing case = %+v", pass)
	}
	wantFail := "audio_ttfp_p95 = 385 ms, limit < 300 ms: missed by 85 ms (28.3%)\nfigure: audio_ttfp_p95\nobserved: 385 ms\nlimit: < 300 ms"
	if miss.Failure != wantFail || miss.Message != rs[1].Message {
		t.Errorf("failing case failure = %q, want %q", miss.Failure, wantFail)
	}
	if !strings.Contains(nodata.Failure, "observed: no data") {
		t.Errorf("no-data case = %+v", nodata)
	}
	var buf bytes.Buffer
	if err := junit.Write(&buf, suite); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `<testsuite name="slo" tests="3" failures="2" errors="0" skipped="0"`) {
		t.Errorf("JUnit XML:\n%s", buf.String())
	}
}

func TestExitSLOMiss(t *testing.T) {
	// The status must stay apart from success, error, unusable input and
	// interruption (documented in the package doc).
	for _, other := range []int{0, 1, 2, 130} {
		if ExitSLOMiss == other {
			t.Errorf("ExitSLOMiss = %d collides with a documented status", ExitSLOMiss)
		}
	}
}

// Dropped arrivals were never sent: drop_rate = dropped / (sent + dropped).
func TestEvaluateDropRate(t *testing.T) {
	recs := testRecords()
	s := summary.Compute(recs, summary.Options{})
	s.SetDropped(s.Requests.Total) // as many dropped as sent: 50%
	r := Evaluate([]SLO{mustParse(t, "drop_rate<=1%"), mustParse(t, "drop_rate<=50%")}, s, recs)
	if r[0].Pass || !near(r[0].Observed, 0.5) || !r[1].Pass {
		t.Errorf("drop_rate: %+v", r)
	}
	empty := summary.Compute(nil, summary.Options{})
	if r := Evaluate([]SLO{mustParse(t, "drop_rate<=1%")}, empty, nil)[0]; r.Pass || !r.NoData {
		t.Errorf("drop_rate with nothing scheduled: %+v, want a no-data miss", r)
	}
}

func TestMaxErrorRate(t *testing.T) {
	gate, ok, err := MaxErrorRate(0.5)
	if err != nil || !ok || gate.Expr != "error_rate<=0.5" {
		t.Fatalf("MaxErrorRate(0.5) = %+v, %v, %v", gate, ok, err)
	}
	// 3 of 5 failed: 0.6 misses the 0.5 gate; 2 of 5 passes it.
	s := &summary.Summary{Requests: summary.Requests{Total: 5, Failed: 3, Completed: 2}}
	if r := Evaluate([]SLO{gate}, s, nil)[0]; r.Pass || !near(r.Observed, 0.6) {
		t.Errorf("60%% failed: %+v", r)
	}
	s.Requests.Failed, s.Requests.Completed = 2, 3
	if r := Evaluate([]SLO{gate}, s, nil)[0]; !r.Pass {
		t.Errorf("40%% failed: %+v", r)
	}
	if _, ok, err := MaxErrorRate(1); ok || err != nil {
		t.Errorf("MaxErrorRate(1): ok %v, err %v; want no gate", ok, err)
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, _, err := MaxErrorRate(bad); err == nil {
			t.Errorf("MaxErrorRate(%v): no error", bad)
		}
	}
}
