package check

import (
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/scrape"
)

// coreFigures are the client's figures matching metricsCore(t, true): two
// streamed chat responses with audio (TTFP 0.25 s each on the client, 0.2 s
// on the server), one speech response, 2*14400 + 24000 frames, both chat
// responses continuous.
func coreFigures() RunFigures {
	return RunFigures{
		Requests: 3, Completed: map[string]int{"stop": 3}, CompletedTotal: 3,
		ChatAudioResponses: 2, TTFPSumS: 0.5, AudioFrames: 52800, Continuous: map[string]int{"100": 2},
	}
}

const (
	ruleSuccess    = "requests_success_total matches the client's completed requests (finished_reason=stop)"
	ruleE2E        = "e2e_request_latency_s count matches the completed requests"
	ruleTTFPCount  = "audio_ttfp_s count matches the streamed responses with audio"
	ruleFrames     = "audio_frames_total matches the client's decoded frames"
	ruleContinuity = "audio_continuity_ok_total matches the client's continuous responses"
	ruleTTFPSum    = "server TTFP sum not above the client's"
)

func TestRunRules(t *testing.T) {
	fs := parseText(t, textExposition(t, metricsCore(t, true)))
	eval := func(f RunFigures) map[string]Result {
		return byRule(Evaluate(Input{After: fs, Run: &f}, profileRules(t)))
	}
	res := eval(coreFigures())
	for _, name := range []string{ruleSuccess, ruleE2E, ruleTTFPCount, ruleFrames, ruleContinuity, ruleTTFPSum} {
		if r := res[name]; r.Status != Pass {
			t.Errorf("%s: %+v, want pass", name, r)
		}
	}
	if r := res[ruleSuccess]; r.Expected != "== 3 (run.completed.stop)" || r.Observed != "3" || r.Difference != "0" ||
		!strings.Contains(r.Detail, "one scrape") {
		t.Errorf("success result = %+v", r)
	}

	f := coreFigures()
	f.Completed["stop"] = 4
	f.Completed["length"] = 1
	f.AudioFrames = 53000 // 200 off: inside 1% (528)
	f.Continuous["100"] = 3
	res = eval(f)
	if r := res[ruleSuccess]; r.Status != Fail || r.Expected != "== 4 (run.completed.stop)" || r.Observed != "3" || r.Difference != "-1 (-25%)" {
		t.Errorf("success mismatch = %+v", r)
	}
	if r := res["requests_success_total matches the client's completed requests (finished_reason=length)"]; r.Status != Fail || r.Observed != "0" {
		t.Errorf("reason the server never counted = %+v", r)
	}
	if r := res[ruleFrames]; r.Status != Pass || r.Tolerance != "±1%" || r.Difference != "-200 (-0.3774%)" {
		t.Errorf("frames within tolerance = %+v", r)
	}
	if r := res[ruleContinuity]; r.Status != Pass || r.Tolerance != "±max(1, 10%)" {
		t.Errorf("continuity within tolerance = %+v", r)
	}

	f = coreFigures()
	f.AudioFrames = 60000
	f.Continuous["100"] = 4
	f.TTFPSumS = 0.3 // below the server's 0.4: impossible, the server's interval is inside the client's
	f.ChatAudioResponses = 3
	f.CompletedTotal = 2
	res = eval(f)
	for _, name := range []string{ruleFrames, ruleContinuity, ruleTTFPSum, ruleTTFPCount, ruleE2E} {
		if r := res[name]; r.Status != Fail {
			t.Errorf("%s: %+v, want a failure", name, r)
		}
	}
	if r := res[ruleTTFPSum]; r.Expected != "<= 0.3 (run.audio_streams_ttfp_sum_s)" || r.Observed != "0.4" {
		t.Errorf("ttfp sum = %+v", r)
	}

	// Stats off: nothing to compare, the rules skip.
	off := parseText(t, textExposition(t, metricsCore(t, false)))
	f = coreFigures()
	rep := Evaluate(Input{After: off, Run: &f}, profileRules(t))
	if r := byRule(rep)[ruleE2E]; r.Status != Skip || !strings.Contains(r.Detail, "stats are off") {
		t.Errorf("stats off: %+v", r)
	}
}

func TestRunRulesBeforeAfter(t *testing.T) {
	m := metricsCore(t, true)
	before := parseText(t, textExposition(t, m))
	// One more streamed chat request with audio that underran.
	sr := omnimetrics.StageReplica{Stage: 2}
	m.AudioFirstPacket(sr, 0.3)
	m.AudioStreamingFinalize(sr, []float64{0.3, 1.5}, []int{9600, 9600}, 24000)
	m.AudioAtFinalize(sr, 9600, 24000, 0.2)
	m.RequestSucceeded(1.6, "stop")
	after := parseText(t, textExposition(t, m))
	f := RunFigures{Requests: 1, Completed: map[string]int{"stop": 1}, CompletedTotal: 1, ChatAudioResponses: 1,
		TTFPSumS: 0.35, AudioFrames: 9600, Continuous: map[string]int{"100": 0}}
	rep := Evaluate(Input{Before: before, After: after, Run: &f}, profileRules(t))
	if !rep.OK() {
		t.Fatalf("delta rules fail:\n%s", failures(rep))
	}
	if r := byRule(rep)[ruleSuccess]; r.Observed != "1" || strings.Contains(r.Detail, "one scrape") {
		t.Errorf("delta success = %+v", r)
	}
	// The same pair reversed looks like a restart: counted from it, noted.
	rep = Evaluate(Input{Before: after, After: before, Run: &f}, profileRules(t))
	if r := byRule(rep)["requests_success_total matches the client's completed requests (finished_reason=stop)"]; !strings.Contains(r.Detail, "restarted") || r.Observed != "3" {
		t.Errorf("restart = %+v", r)
	}
}

func TestFiguresFromRecords(t *testing.T) {
	stream := func(ttfp float64, frames int64, ok bool) results.Record {
		return results.Record{Kind: results.KindChat, Status: 200, TTFPS: ttfp, AudioFrames: frames, AudioBytes: frames * 2,
			FinishReason: "stop", Continuity: &results.Continuity{OK: map[string]bool{"100": ok, "200": true}}}
	}
	recs := []results.Record{
		stream(0.2, 1000, true),
		stream(0.3, 2000, false),
		{Kind: results.KindChat, Status: 200, FinishReason: "length", PromptTokens: 5, CompletionTokens: 7},   // text only
		{Kind: results.KindSpeech, Status: 200, AudioFrames: 500, AudioBytes: 1000},                           // no finish reason
		{Kind: results.KindChat, Status: 200, TTFPS: 0.4, AudioFrames: 100, ErrorClass: results.ErrTruncated}, // aborted mid-stream
		{Kind: results.KindSpeech, Status: 500, ErrorClass: results.ErrHTTPStatus},                            // accepted, then failed
		{Kind: results.KindSpeech, Status: 400, ErrorClass: results.ErrHTTPStatus},                            // rejected: never counted
		{Kind: results.KindChat, ErrorClass: results.ErrConnect, Warmup: true},
	}
	f := FiguresFromRecords(recs)
	want := RunFigures{
		Requests: 8, Completed: map[string]int{"stop": 3, "length": 1, "abort": 2}, CompletedTotal: 4, Failed: 4,
		ChatAudioResponses: 3, TTFPSumS: 0.9, AudioFrames: 3500, Continuous: map[string]int{"100": 1, "200": 2},
		PromptTokens: 5, CompletionTokens: 7,
	}
	if f.Requests != want.Requests || f.CompletedTotal != want.CompletedTotal || f.Failed != want.Failed ||
		f.ChatAudioResponses != want.ChatAudioResponses || f.AudioFrames != want.AudioFrames ||
		f.PromptTokens != want.PromptTokens || f.CompletionTokens != want.CompletionTokens ||
		f.TTFPSumS < 0.9-1e-12 || f.TTFPSumS > 0.9+1e-12 {
		t.Errorf("figures = %+v\nwant      %+v", f, want)
	}
	for k, v := range want.Completed {
		if f.Completed[k] != v {
			t.Errorf("Completed[%s] = %d, want %d", k, f.Completed[k], v)
		}
	}
	for k, v := range want.Continuous {
		if f.Continuous[k] != v {
			t.Errorf("Continuous[%s] = %d, want %d", k, f.Continuous[k], v)
		}
	}
	for name, v := range map[string]float64{"completed": 4, "completed.abort": 2, "completed.never": 0, "continuous.200": 2,
		"chat_audio_responses": 3, "audio_frames": 3500, "requests": 8, "failed": 4} {
		if got, ok := f.Lookup(name); !ok || got != v {
			t.Errorf("Lookup(%s) = %v, %v; want %v", name, got, ok, v)
		}
	}
	if _, ok := f.Lookup("bogus"); ok {
		t.Error("Lookup(bogus) found something")
	}
}

// A rule on a histogram quantile, written in Go, against known buckets.
func TestQuantileRule(t *testing.T) {
	fs, err := scrape.Parse("", []byte(`# TYPE vllm:omni_audio_ttfp_s histogram
vllm:omni_audio_ttfp_s_bucket{stage="2",le="0.1"} 0
vllm:omni_audio_ttfp_s_bucket{stage="2",le="0.25"} 2
vllm:omni_audio_ttfp_s_bucket{stage="2",le="0.5"} 2
vllm:omni_audio_ttfp_s_bucket{stage="2",le="1"} 3
vllm:omni_audio_ttfp_s_bucket{stage="2",le="+Inf"} 3
vllm:omni_audio_ttfp_s_count{stage="2"} 3
vllm:omni_audio_ttfp_s_sum{stage="2"} 0.92
`))
	if err != nil {
		t.Fatal(err)
	}
	q := func(v float64) *float64 { return &v }
	rules := []Rule{
		// rank 1.5 in (0.1, 0.25] holding 2: 0.1 + 0.15*0.75 = 0.2125.
		{Family: "audio_ttfp_s", Quantile: q(0.5), Expect: &Expectation{Op: "==", Value: 0.2125}, Tolerance: Tolerance{Abs: 1e-9}},
		// rank 2.97 in (0.5, 1]: 0.985.
		{Family: "audio_ttfp_s", Quantile: q(0.99), Expect: &Expectation{Op: "<=", Value: 0.9}},
		{Family: "audio_ttfp_s", Measure: MeasureMean, Match: map[string]string{"stage": "2"}, Expect: &Expectation{Op: "<", Value: 0.31}},
		{Family: "audio_ttfp_s", Quantile: q(0.5), Match: map[string]string{"stage": "7"}, Expect: &Expectation{Op: "<=", Value: 1}},
	}
	rep := Evaluate(Input{After: fs}, rules)
	want := []Status{Pass, Fail, Pass, Fail}
	for i, r := range rep.Results {
		if r.Status != want[i] {
			t.Errorf("rule %d (%s): %+v, want %s", i, r.Rule, r, want[i])
		}
	}
	if r := rep.Results[1]; r.Observed != "0.985" || r.Difference != "+0.085 (+9.444%)" {
		t.Errorf("p99 result = %+v", r)
	}
	if r := rep.Results[3]; !strings.Contains(r.Detail, "no observations") || !strings.Contains(r.Detail, `no series match{stage="7"}`) {
		t.Errorf("no matching series = %+v", r)
	}
}
