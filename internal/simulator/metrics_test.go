package simulator

import (
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

const p = omnimetrics.PrefixDesign

func TestMetricsRecordedWhereTheServerRecords(t *testing.T) {
	cfg := testConfig()
	cfg.NoSpeechStreamMetrics = true // a server from before September 2026
	run := startSim(t, cfg)
	lb := lbl(0)

	// A speech request in every mode: duration/frames, never TTFP or continuity
	// on an older server (TestSpeechStreamMetrics has the current ones).
	doSpeech(t, run, speechReq(input10, nil))
	doSpeech(t, run, speechReq(input10, map[string]any{"stream_format": "audio"}))
	if _, _, err := doSpeechSSE(t, run, speechReq(input10, map[string]any{"stream": true})); err != nil {
		t.Fatal(err)
	}
	mfs, _ := scrape(t, run.URL, "")
	if n := histCount(mfs, p+"audio_ttfp_s", lb); n != 0 {
		t.Errorf("speech recorded %d TTFP observations, want 0", n)
	}
	if n := histCount(mfs, p+"audio_underrun_s", lb); n != 0 {
		t.Errorf("speech recorded %d underrun observations, want 0", n)
	}
	if v := counter(mfs, p+"audio_continuity_ok_total", lb); v != 0 {
		t.Errorf("speech recorded continuity %v", v)
	}
	if n := histCount(mfs, p+"audio_duration_s", lb); n != 3 {
		t.Errorf("duration count %d after 3 speech requests", n)
	}
	if v := counter(mfs, p+"audio_frames_total", lb); v != 3*12000 {
		t.Errorf("frames %v, want 36000", v)
	}

	// A streaming chat: TTFP once, underrun once, continuity_ok{100}.
	doChat(t, run, chatReq(prompt25, nil))
	mfs, _ = scrape(t, run.URL, "")
	if n := histCount(mfs, p+"audio_ttfp_s", lb); n != 1 {
		t.Errorf("TTFP count %d after one chat stream, want 1", n)
	}
	if n := histCount(mfs, p+"audio_underrun_s", lb); n != 1 {
		t.Errorf("underrun count %d, want 1", n)
	}
	ok := m{"model_name": testModel, "stage": "2", "replica": "0", "threshold_ms": "100"}
	if v := counter(mfs, p+"audio_continuity_ok_total", ok); v != 1 {
		t.Errorf("continuity_ok{threshold_ms=100} = %v, want 1", v)
	}
	if n := histCount(mfs, p+"audio_rtf", lb); n != 4 {
		t.Errorf("RTF count %d, want 4", n)
	}

	// Non-streaming chat: duration but no TTFP.
	resp := post(t, t.Context(), run.URL+"/v1/chat/completions", chatReq(prompt25, map[string]any{"stream": false}))
	resp.Body.Close()
	// Text-only chat: no audio families at all.
	doChat(t, run, chatReq(prompt25, map[string]any{"modalities": []string{"text"}}))
	mfs, _ = scrape(t, run.URL, "")
	if n := histCount(mfs, p+"audio_ttfp_s", lb); n != 1 {
		t.Errorf("TTFP count %d after non-streaming and text-only chat, want still 1", n)
	}
	if n := histCount(mfs, p+"audio_duration_s", lb); n != 5 {
		t.Errorf("duration count %d, want 5 (text-only records none)", n)
	}
	if v := counter(mfs, p+"requests_success_total", m{"finished_reason": "stop"}); v != 6 {
		t.Errorf("success{stop} %v, want 6", v)
	}
	if n := histCount(mfs, p+"e2e_request_latency_s", m{"model_name": testModel}); n != 6 {
		t.Errorf("e2e count %d, want 6", n)
	}
	if sample(mfs, p+"num_requests_running", nil).GetGauge().GetValue() != 0 {
		t.Error("running gauge is not 0 when idle")
	}
	// Upstream families exist with stage/replica labels when stats are on.
	if n := histCount(mfs, "vllm:time_to_first_token_seconds", m{"stage": "0", "replica": "0"}); n != 6 {
		t.Errorf("upstream TTFT count on stage 0: %d, want 6", n)
	}
}

func TestMetricsStatsOff(t *testing.T) {
	cfg := testConfig()
	cfg.StatsEnabled = false
	run := startSim(t, cfg)
	doChat(t, run, chatReq(prompt25, nil))
	doSpeech(t, run, speechReq(input10, nil))
	// expfmt's parsers drop families without samples, so read the text.
	for _, accept := range []string{"", "application/openmetrics-text;version=1.0.0"} {
		text := scrapeText(t, run.URL, accept)
		for _, spec := range omnimetrics.PipelineFamilies() {
			name := p + spec.Name
			if accept != "" {
				name = strings.TrimSuffix(name, "_total") // OpenMetrics names counters without _total
			}
			if !strings.Contains(text, "# TYPE "+name+" "+spec.Type+"\n") {
				t.Errorf("accept %q: no TYPE line for %s with stats off (HELP/TYPE must stay)", accept, name)
			}
		}
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, " vllm:") && !strings.Contains(line, " "+p) {
				t.Errorf("accept %q: upstream family with stats off: %q", accept, line)
			}
			if line == "" || strings.HasPrefix(line, "#") || runtimeFamily(line) {
				continue
			}
			// Current servers bind a zero model_name child of five
			// families whatever the stats setting
			// (docs/reference/server-versions.md, section 4).
			name, _, _ := strings.Cut(line, "{")
			base := strings.TrimSuffix(strings.TrimPrefix(name, p), "_created")
			if !statsOffBound(base) {
				t.Errorf("accept %q: sample %q with stats off", accept, line)
			} else if !strings.HasSuffix(name, "_created") && !strings.HasSuffix(line, " 0") && !strings.HasSuffix(line, " 0.0") {
				t.Errorf("accept %q: non-zero sample %q with stats off", accept, line)
			}
		}
	}
}

func TestMetricsPrefixCurrent(t *testing.T) {
	cfg := testConfig()
	cfg.Prefix = omnimetrics.PrefixCurrent
	run := startSim(t, cfg)
	doChat(t, run, chatReq("Hi", nil))
	mfs, _ := scrape(t, run.URL, "")
	if histCount(mfs, "vllm_omni:audio_ttfp_s", lbl(0)) != 1 {
		t.Error("no vllm_omni:audio_ttfp_s observation")
	}
	if _, ok := mfs[p+"audio_ttfp_s"]; ok {
		t.Error("design-prefix family present with --metrics-prefix vllm_omni:")
	}
}

func TestMetricsContentNegotiation(t *testing.T) {
	run := startSim(t, testConfig())
	doChat(t, run, chatReq("Hi", nil))
	for _, tc := range []struct{ accept, ctype string }{
		{"", "text/plain"},
		{string(expfmt.NewFormat(expfmt.TypeProtoDelim)), "application/vnd.google.protobuf"},
	} {
		mfs, ct := scrape(t, run.URL, tc.accept)
		if !strings.HasPrefix(ct, tc.ctype) {
			t.Errorf("Accept %q: content type %q, want %s", tc.accept, ct, tc.ctype)
		}
		ttfp := mfs[p+"audio_ttfp_s"]
		if ttfp == nil || ttfp.GetType() != dto.MetricType_HISTOGRAM || histCount(mfs, p+"audio_ttfp_s", lbl(0)) != 1 {
			t.Errorf("Accept %q: TTFP family %v", tc.accept, ttfp)
		}
	}
	// expfmt's OpenMetrics decoder is an ABNF parser that needs about 20 ms
	// per line (seconds for this exposition), so check the text instead.
	om := scrapeText(t, run.URL, "application/openmetrics-text;version=1.0.0")
	ttfpCount := p + `audio_ttfp_s_count{model_name="` + testModel + `",replica="0",stage="2"} 1` + "\n"
	if !strings.HasSuffix(om, "# EOF\n") || !strings.Contains(om, "# TYPE "+p+"audio_ttfp_s histogram\n") ||
		!strings.Contains(om, ttfpCount) || !strings.Contains(om, "# TYPE "+p+"audio_frames counter\n") {
		t.Errorf("OpenMetrics exposition lacks the EOF marker, the TTFP histogram or the frames counter")
	}
}

func TestMetricsReplicaBinding(t *testing.T) {
	cfg := testConfig()
	cfg.Topology = []int{1, 2, 2}
	run := startSim(t, cfg)
	doChat(t, run, chatReq("First one", nil))
	doChat(t, run, chatReq("Second one", nil))
	doChat(t, run, chatReq("Third one", nil))
	mfs, _ := scrape(t, run.URL, "")
	// Round-robin per stage: code2wav replicas 0, 1, 0.
	if a, b := histCount(mfs, p+"audio_ttfp_s", lbl(0)), histCount(mfs, p+"audio_ttfp_s", lbl(1)); a != 2 || b != 1 {
		t.Errorf("TTFP on code2wav replicas 0/1: %d/%d, want 2/1", a, b)
	}
	edge := func(fs, fr, ts, tr int) m {
		return m{"from_stage": fmt.Sprint(fs), "from_replica": fmt.Sprint(fr), "to_stage": fmt.Sprint(ts), "to_replica": fmt.Sprint(tr)}
	}
	// Each request's hops follow its binding: thinker 0 -> talker r -> code2wav r.
	if histCount(mfs, p+"transfer_size_bytes", edge(0, 0, 1, 0)) != 2 || histCount(mfs, p+"transfer_size_bytes", edge(0, 0, 1, 1)) != 1 {
		t.Error("thinker->talker hops do not follow the round-robin binding")
	}
	if histCount(mfs, p+"transfer_size_bytes", edge(1, 0, 2, 1)) != 0 {
		t.Error("a hop crosses bindings (talker 0 -> code2wav 1)")
	}
	// "First one" is 9 characters: 0.45 s = 5 chunks; one talker->code2wav hop per chunk.
	if n := histCount(mfs, p+"transfer_tx_s", edge(1, 1, 2, 1)); n != 5 {
		t.Errorf("talker 1 -> code2wav 1 hops: %d, want 5 (one per chunk of the second request)", n)
	}
}

// TestMetricsGolden compares the deterministic families after a fixed
// request sequence against hand-computed values:
//
//	chat "Hello brave new big world": 25 chars -> 7 prompt tokens, 5 words,
//	  1.25 s = 30000 frames in 12 chunks of 2400 + 1 of 1200,
//	  ceil(1.25*12.5) = 16 codec tokens; hops: thinker->talker (7+5)*4096 =
//	  49152 bytes, talker->code2wav 12 x 2 tokens x 128 = 256 bytes + 1 x 128.
//	speech "Good night": 10 chars -> 3 prompt tokens, 0.5 s = 12000 frames in
//	  5 chunks of 2400, ceil(6.25) = 7 codec tokens; hops: 3*4096 = 12288 bytes,
//	  then 5 x 256 bytes.
func TestMetricsGolden(t *testing.T) {
	run := startSim(t, testConfig())
	doChat(t, run, chatReq(prompt25, nil))
	doSpeech(t, run, speechReq(input10, nil))

	model := `model_name="` + testModel + `"`
	sr := model + `,replica="0",stage="2"`
	e01 := `from_replica="0",from_stage="0",` + model + `,to_replica="0",to_stage="1"`
	e12 := `from_replica="0",from_stage="1",` + model + `,to_replica="0",to_stage="2"`
	samples := map[string]string{
		"requests_success_total":    `{finished_reason="stop",` + model + `} 2`,
		"prompt_tokens_total":       `{` + model + `} 10`,
		"generation_tokens_total":   `{` + model + `} 28`,
		"audio_frames_total":        `{` + sr + `} 42000`,
		"audio_continuity_ok_total": `{` + sr + `,threshold_ms="100"} 1`,
		"audio_duration_s": histText("audio_duration_s", sr, omnimetrics.SecondsBuckets(),
			[]float64{1.25, 0.5}),
		"transfer_size_bytes": histText("transfer_size_bytes", e01, omnimetrics.BytesBuckets(),
			[]float64{49152, 12288}) + "\n" + histText("transfer_size_bytes", e12, omnimetrics.BytesBuckets(),
			append(repeat(256, 17), 128)),
	}
	var want strings.Builder
	var names []string
	for _, spec := range omnimetrics.PipelineFamilies() {
		s, ok := samples[spec.Name]
		if !ok {
			continue
		}
		name := p + spec.Name
		names = append(names, name)
		fmt.Fprintf(&want, "# HELP %s %s\n# TYPE %s %s\n", name, spec.Help, name, spec.Type)
		if strings.HasPrefix(s, "{") {
			s = name + s
		}
		want.WriteString(s + "\n")
	}
	if len(names) != len(samples) {
		t.Fatalf("golden names %v do not cover %d families", names, len(samples))
	}
	if err := testutil.ScrapeAndCompare(run.URL+"/metrics", strings.NewReader(want.String()), names...); err != nil {
		t.Error(err)
	}
}

func repeat(v float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

// histText renders a histogram sample in the text format from raw
// observations (hand-listed in the test, binned here).
func histText(family, labels string, buckets, obs []float64) string {
	var b strings.Builder
	name := p + family
	sum := 0.0
	for _, o := range obs {
		sum += o
	}
	for _, le := range buckets {
		n := 0
		for _, o := range obs {
			if o <= le {
				n++
			}
		}
		fmt.Fprintf(&b, "%s_bucket{%s,le=\"%g\"} %d\n", name, labels, le, n)
	}
	fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %d\n", name, labels, len(obs))
	fmt.Fprintf(&b, "%s_sum{%s} %g\n%s_count{%s} %d", name, labels, sum, name, labels, len(obs))
	return b.String()
}

func TestMetricsLint(t *testing.T) {
	run := startSim(t, testConfig())
	doChat(t, run, chatReq(prompt25, nil))
	doSpeech(t, run, speechReq(input10, nil))
	mfs, _ := scrape(t, run.URL, string(expfmt.NewFormat(expfmt.TypeProtoDelim)))
	var list []*dto.MetricFamily
	for _, mf := range mfs {
		list = append(list, mf)
	}
	problems, err := promlint.NewWithMetricFamilies(list).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, pr := range problems {
		// The server's names are fixed: colons (vllm:, vllm_omni:) and the
		// _s unit suffix are what real vLLM-Omni exposes.
		if strings.Contains(pr.Text, "should not contain ':'") ||
			strings.Contains(pr.Text, "units") && strings.Contains(pr.Metric, "_s") {
			continue
		}
		t.Errorf("promlint: %s: %s", pr.Metric, pr.Text)
	}
}

// runtimeFamily tells a sample line of the Python runtime and HTTP
// instrumentator families (runtime.go).
func runtimeFamily(line string) bool {
	for _, prefix := range []string{"process_", "python_", "http_"} {
		if strings.HasPrefix(line, prefix) {
			return true
		}
	}
	return false
}

// statsOffBound tells the sample names (without prefix) of the five
// families current servers bind with stats off: gauges, the counters, the
// e2e histogram's series and their _created companions.
func statsOffBound(name string) bool {
	for _, base := range []string{"num_requests_running", "num_requests_waiting", "prompt_tokens", "generation_tokens",
		"e2e_request_latency_s"} {
		if strings.HasPrefix(name, base) {
			return true
		}
	}
	return false
}

// TestSpeechStreamMetrics: on a current server every speech stream (raw,
// SSE, WebSocket in stream and file mode) records one TTFP, and when it
// completes one underrun observation, continuity and the completed-stream
// counter; a stream that fails mid-way records its TTFP and counts as
// aborted with reason "error", without finalize; whole-file speech records
// none of it. An older server registers no speech-stream family and records
// none of it either.
func TestSpeechStreamMetrics(t *testing.T) {
	for _, old := range []bool{false, true} {
		t.Run(fmt.Sprintf("old=%v", old), func(t *testing.T) {
			cfg := testConfig()
			cfg.NoSpeechStreamMetrics = old
			run := startSim(t, cfg)
			doSpeech(t, run, speechReq(input10, nil)) // whole file: not a stream
			doSpeech(t, run, speechReq(input10, map[string]any{"stream_format": "audio"}))
			if _, _, err := doSpeechSSE(t, run, speechReq(input10, map[string]any{"stream": true})); err != nil {
				t.Fatal(err)
			}
			speakWS(t, run, `{"type":"session.config","response_format":"pcm","stream_audio":true}`)
			speakWS(t, run, `{"type":"session.config"}`) // one WAV file per utterance

			mfs, text := scrape(t, run.URL, "")
			lb := lbl(0)
			streams := uint64(4)
			if old {
				streams = 0
				if strings.Contains(text, "speech_stream") {
					t.Errorf("an older server exposes a speech-stream family:\n%s", text)
				}
			}
			if n := histCount(mfs, p+"audio_ttfp_s", lb); n != streams {
				t.Errorf("TTFP count %d, want %d", n, streams)
			}
			if n := histCount(mfs, p+"audio_underrun_s", lb); n != streams {
				t.Errorf("underrun count %d, want %d", n, streams)
			}
			ok := m{"model_name": testModel, "stage": "2", "replica": "0", "threshold_ms": "100"}
			if v := counter(mfs, p+"audio_continuity_ok_total", ok); v != float64(streams) {
				t.Errorf("continuity_ok{100} = %v, want %d", v, streams)
			}
			if v := counter(mfs, p+omnimetrics.SpeechStreamCompletedFamily, nil); v != float64(streams) {
				t.Errorf("completed speech streams %v, want %d", v, streams)
			}
			if n := histCount(mfs, p+"audio_duration_s", lb); n != 5 {
				t.Errorf("duration count %d after 5 speech requests, want 5", n)
			}
		})
	}
}

// TestSpeechStreamAborted: a speech stream that fails mid-way has recorded
// its TTFP, is not finalized (no underrun, not completed) and counts as
// aborted with reason "error".
func TestSpeechStreamAborted(t *testing.T) {
	cfg := testConfig()
	cfg.Faults.ErrorEvent = 1
	run := startSim(t, cfg)
	// 10 characters: five chunks, the fault strikes before the third.
	if _, _, err := doSpeechSSE(t, run, speechReq(input10, map[string]any{"stream": true})); err != nil {
		t.Fatal(err)
	}
	mfs, _ := scrape(t, run.URL, "")
	lb := lbl(0)
	if n := histCount(mfs, p+"audio_ttfp_s", lb); n != 1 {
		t.Errorf("TTFP count %d, want 1", n)
	}
	if n := histCount(mfs, p+"audio_underrun_s", lb); n != 0 {
		t.Errorf("underrun count %d of an aborted stream, want 0", n)
	}
	if v := counter(mfs, p+omnimetrics.SpeechStreamCompletedFamily, nil); v != 0 {
		t.Errorf("completed speech streams %v, want 0", v)
	}
	if v := counter(mfs, p+omnimetrics.SpeechStreamAbortedFamily, m{"reason": omnimetrics.SpeechAbortError}); v != 1 {
		t.Errorf("aborted{reason=error} %v, want 1", v)
	}
}

// speakWS speaks one utterance in a session configured by config and waits
// for its session.done.
func speakWS(t *testing.T, run *Running, config string) {
	t.Helper()
	w := dialWS(t, run, "/v1/audio/speech/stream")
	w.send(config)
	w.send(`{"type":"input.text","text":"` + input10 + `"}`)
	w.send(`{"type":"input.done"}`)
	w.expect("audio.start")
	m := w.next()
	for i := 0; m["type"] == "_binary" && i < 1000; i++ {
		m = w.next()
	}
	if m["type"] != "audio.done" || m["error"] != false {
		t.Fatalf("after the audio: %v, want audio.done without error", m)
	}
	w.expect("session.done")
}
