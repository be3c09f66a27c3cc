package exporter

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/load"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func goldenOptions() Options {
	return Options{
		ModelName:      "test-model",
		Endpoint:       "/v1/chat/completions",
		Scenario:       "golden",
		Thresholds:     []float64{0.1, 1},
		ContinuityMode: continuity.Default,
	}
}

// arrival builds a measured (or warm-up) arrival with the given lag.
func arrival(seq int, warmup bool, intended, lag time.Duration) load.Arrival {
	return load.Arrival{Seq: seq, Warmup: warmup, Start: time.Unix(0, 0), Intended: intended, Launched: intended + lag}
}

func ptrF(v float64) *float64 { return &v }

// continuous is the client's result for a response without underrun.
func continuous() *results.Continuity {
	return &results.Continuity{Mode: "default", OK: map[string]bool{"100": true, "1000": true},
		StallResume: &results.PlayerResult{}}
}

// goldenRecords are hand-made records whose values are binary fractions, so
// every sum in the golden exposition is exact. The expected figures are
// worked out in TestGoldenExpectations.
// The records are an open loop's: latencies count from the intended start.
func goldenRecords() []results.Record {
	recs := []results.Record{
		// Measured chat, lag 1/16 s: TTFP 0.1875+0.0625 = 0.25 (the le="0.25"
		// bound, inclusive), e2e 1.4375+0.0625 = 1.5, 24000 frames = 1 s,
		// RTF 1.25/1 = 1.25; four 0.25 s chunks 0.25 s apart: no underrun.
		{Seq: 1, Kind: results.KindChat, LagS: 0.0625, TTFPS: 0.1875, E2ES: 1.4375, LastAudioS: 1.25,
			SampleRate: 24000, SampleWidth: 2, Channels: 1, AudioBytes: 48000, AudioFrames: 24000, AudioDurationS: 1,
			ChunkArrivalsS: []float64{0.1875, 0.4375, 0.6875, 0.9375}, ChunkBytes: []int{12000, 12000, 12000, 12000},
			RTFLastChunk: 1.25, RTFE2E: 1.4375,
			// Audible from the second chunk: TTFA audible 0.4375+0.0625 = 0.5,
			// 0.25 s of leading silence.
			TTFAAudibleS: 0.4375, LeadingSilenceS: ptrF(0.25),
			PromptTokens: 10, CompletionTokens: 20, FinishReason: "stop",
			Continuity: continuous()},
		// Measured chat, no lag: TTFP 0.5, e2e 3, 48000 frames = 2 s, RTF
		// 2.75/2 = 1.375; 0.5 s of audio, then the rest 1 s later: underrun
		// 0.5 s (not continuous at 100 ms, continuous at 1000 ms).
		{Seq: 2, Kind: results.KindChat, TTFPS: 0.5, E2ES: 3, LastAudioS: 2.75,
			SampleRate: 24000, SampleWidth: 2, Channels: 1, AudioBytes: 96000, AudioFrames: 48000, AudioDurationS: 2,
			ChunkArrivalsS: []float64{0.5, 1.5}, ChunkBytes: []int{24000, 72000},
			RTFLastChunk: 1.375, RTFE2E: 1.5,
			TTFAAudibleS: 0.5, LeadingSilenceS: ptrF(0), // audible from its first sample
			PromptTokens: 5, CompletionTokens: 7, FinishReason: "length",
			Continuity: &results.Continuity{Mode: "default", MaxUnderrunS: 0.5, UnderrunEvents: 1,
				OK:          map[string]bool{"100": false, "1000": true},
				StallResume: &results.PlayerResult{Stalls: 1, TotalStallS: 0.5, LongestStallS: 0.5}}},
		// Measured speech, lag 0.5 s: TTFP 0.75, e2e 2 (le="2", inclusive),
		// 0.5 s of audio, RTF = e2e / duration = 1.5/0.5 = 3; one chunk.
		{Seq: 3, Kind: results.KindSpeech, LagS: 0.5, TTFPS: 0.25, E2ES: 1.5, LastAudioS: 0.25,
			SampleRate: 24000, SampleWidth: 2, Channels: 1, AudioBytes: 24000, AudioFrames: 12000, AudioDurationS: 0.5,
			ChunkArrivalsS: []float64{0.25}, ChunkBytes: []int{24000},
			RTFLastChunk: 0.5, RTFE2E: 3,
			LeadingSilenceS: ptrF(0.5), // never audible: no TTFA, all of it silence
			Continuity:      continuous()},
		// Failures: a known class and an unknown one (counted as "other").
		{Seq: 6, Kind: results.KindChat, ErrorClass: results.ErrHTTPStatus, Status: 500, E2ES: 0.01},
		{Seq: 7, Kind: results.KindChat, ErrorClass: "weird", E2ES: 0.01},
		// Measured chat without audio and with an unknown finish reason:
		// skipped{no_audio_data}, finished_reason="other", e2e 0.0625.
		{Seq: 8, Kind: results.KindChat, E2ES: 0.0625, PromptTokens: 3, CompletionTokens: 4, FinishReason: "weird_reason"},
	}
	for i := range recs {
		recs[i].LatencyOrigin = results.OriginIntended
	}
	return recs
}

// feedGolden drives the exporter through a fixed sequence: a warm-up
// request, six measured starts (one left in flight), a drop, and the golden
// records.
func feedGolden(t *testing.T, e *Exporter) {
	t.Helper()
	e.OnStart(arrival(0, true, 0, 0))
	e.OnRecord(&results.Record{Seq: 0, Warmup: true, Kind: results.KindChat, E2ES: 9, TTFPS: 9,
		SampleRate: 24000, AudioBytes: 480, AudioFrames: 240, FinishReason: "stop"})
	e.OnStart(arrival(1, false, 0, 62500*time.Microsecond))
	e.OnStart(arrival(2, false, 100*time.Millisecond, 0))
	e.OnStart(arrival(3, false, 200*time.Millisecond, 500*time.Millisecond))
	e.OnDrop(arrival(4, false, 300*time.Millisecond, 0))
	e.OnStart(arrival(5, false, 400*time.Millisecond, 0)) // stays in flight
	e.OnStart(arrival(6, false, 500*time.Millisecond, 0))
	e.OnStart(arrival(7, false, 600*time.Millisecond, 0))
	e.OnStart(arrival(8, false, 700*time.Millisecond, 0))
	for _, r := range goldenRecords() {
		e.OnRecord(&r)
	}
}

func newGolden(t *testing.T) *Exporter {
	t.Helper()
	e, err := New(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	feedGolden(t, e)
	return e
}

// TestGoldenExposition compares the parsed exposition with the golden text
// (run with -update to rewrite it, then check the diff by hand against
// TestGoldenExpectations).
func TestGoldenExposition(t *testing.T) {
	e := newGolden(t)
	path := filepath.Join("testdata", "golden.prom")
	if *update {
		var buf bytes.Buffer
		if err := e.WriteText(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// GatherAndCompare encodes both sides with the text encoder, which
	// refuses families without series: compare the families that have them
	// (the registry's own Gather), and the HELP/TYPE-only ones below.
	if err := testutil.GatherAndCompare(e.Metrics().Registry(), f); err != nil {
		t.Error(err)
	}
}

// TestGoldenExpectations checks the golden run's figures against the values
// worked out by hand in goldenRecords and feedGolden.
func TestGoldenExpectations(t *testing.T) {
	e := newGolden(t)
	fams := gatherMap(t, e)
	p := omnimetrics.PrefixClient
	checks := []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{p + "num_requests_running", nil, 1},
		{p + "num_requests_waiting", nil, 0},
		{p + "requests_success_total", map[string]string{"finished_reason": "stop"}, 2},
		{p + "requests_success_total", map[string]string{"finished_reason": "length"}, 1},
		{p + "requests_success_total", map[string]string{"finished_reason": "other"}, 1},
		{p + "requests_success_total", map[string]string{"finished_reason": "abort"}, 2},
		{p + "e2e_request_latency_s_count", nil, 4},
		{p + "e2e_request_latency_s_sum", nil, 1.5 + 3 + 2 + 0.0625},
		{p + "audio_ttfp_s_count", nil, 3},
		{p + "audio_ttfp_s_sum", nil, 0.25 + 0.5 + 0.75},
		{p + "audio_ttfp_s_bucket", map[string]string{"le": "0.25"}, 1},
		{p + "audio_ttfp_s_bucket", map[string]string{"le": "0.5"}, 2},
		{p + "audio_duration_s_sum", nil, 3.5},
		{p + "audio_rtf_sum", nil, 1.25 + 1.375 + 3},
		{p + "audio_rtf_bucket", map[string]string{"le": "1.25"}, 1},
		{p + "audio_rtf_bucket", map[string]string{"le": "2"}, 2},
		{p + "audio_frames_total", nil, 84000},
		{p + "audio_skipped_requests_total", map[string]string{"reason": "no_audio_data"}, 1},
		{p + "audio_underrun_s_count", nil, 3},
		{p + "audio_underrun_s_sum", nil, 0.5},
		{p + "audio_continuity_ok_total", map[string]string{"threshold_ms": "100"}, 2},
		{p + "audio_continuity_ok_total", map[string]string{"threshold_ms": "1000"}, 3},
		{p + "ttfa_audible_seconds_count", nil, 2},
		{p + "ttfa_audible_seconds_sum", nil, 0.5 + 0.5},
		{p + "ttfa_audible_seconds_bucket", map[string]string{"le": "0.5"}, 2},
		{p + "leading_silence_seconds_count", nil, 3},
		{p + "leading_silence_seconds_sum", nil, 0.25 + 0 + 0.5},
		{p + "prompt_tokens_total", nil, 18},
		{p + "generation_tokens_total", nil, 31},
		{p + "arrivals_scheduled_total", nil, 8},
		{p + "arrivals_started_total", nil, 7},
		{p + "arrivals_dropped_total", nil, 1},
		{p + "warmup_requests_total", nil, 1},
		{p + "schedule_lag_seconds_count", nil, 7},
		{p + "schedule_lag_seconds_sum", nil, 0.5625},
		{p + "errors_total", map[string]string{"class": "http_status"}, 1},
		{p + "errors_total", map[string]string{"class": "other"}, 1},
		{p + "errors_total", map[string]string{"class": "timeout"}, 0},
		{p + "stall_resume_stalls_total", nil, 1},
		{p + "stall_resume_stalled_requests_total", nil, 1},
		{p + "stall_resume_stall_seconds_count", nil, 3},
		{p + "stall_resume_stall_seconds_sum", nil, 0.5},
	}
	for _, c := range checks {
		got, ok := sampleValue(fams, c.name, c.labels)
		if !ok {
			t.Errorf("%s%v: no such sample", c.name, c.labels)
			continue
		}
		if got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	// Every series carries the run's identity and the client stage.
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			l := labelMap(m)
			if l["model_name"] != "test-model" || l["endpoint"] != "/v1/chat/completions" || l["scenario"] != "golden" {
				t.Errorf("%s: labels %v lack the run identity", name, l)
			}
			if s, ok := l["stage"]; ok && (s != "0" || l["replica"] != "0") {
				t.Errorf("%s: stage %q replica %q, want 0 and 0", name, s, l["replica"])
			}
		}
	}
}

// TestExpositionHasEveryFamily checks that the text exposition declares
// every core family (HELP and TYPE even without series) and every
// load-generator family, each exactly once.
func TestExpositionHasEveryFamily(t *testing.T) {
	e, err := New(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := e.WriteText(&buf); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	var names []string
	for _, s := range omnimetrics.PipelineFamilies() {
		names = append(names, omnimetrics.PrefixClient+s.Name)
	}
	for _, s := range Families() {
		names = append(names, omnimetrics.PrefixClient+s.Name)
	}
	for _, n := range names {
		if c := strings.Count(text, "# TYPE "+n+" "); c != 1 {
			t.Errorf("# TYPE %s appears %d times, want 1", n, c)
		}
	}
	if strings.Contains(text, "vllm") {
		t.Error("the client exposition mentions a server family")
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	if _, err := parser.TextToMetricFamilies(strings.NewReader(text)); err != nil {
		t.Fatalf("the exposition does not parse: %v", err)
	}
}

// TestLint runs promlint over the exposition: the only problems allowed are
// the colon of the mandated prefix, on every family, and the abbreviated
// unit "_s" of the design's families (the exporter's own use "_seconds").
func TestLint(t *testing.T) {
	e := newGolden(t)
	problems, err := promlint.NewWithMetricFamilies(gatherAll(t, e)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	design := map[string]bool{}
	for _, s := range omnimetrics.PipelineFamilies() {
		design[omnimetrics.PrefixClient+s.Name] = true
	}
	for _, p := range problems {
		switch {
		case p.Text == "metric names should not contain ':'":
		case p.Text == "metric names should not contain abbreviated units" && design[p.Metric]:
		default:
			t.Errorf("lint: %s: %s", p.Metric, p.Text)
		}
	}
}

// TestAgreesWithReport feeds the same records to the exporter and to the
// report's summary and checks that the counts and totals agree.
func TestAgreesWithReport(t *testing.T) {
	e := newGolden(t)
	recs := goldenRecords()
	s := summary.Compute(recs, summary.Options{Thresholds: []float64{0.1, 1}})
	fams := gatherMap(t, e)
	p := omnimetrics.PrefixClient
	get := func(name string, labels map[string]string) float64 {
		v, _ := sampleValue(fams, name, labels)
		return v
	}
	ttfp, _ := s.Metric(summary.MetricTTFP)
	if got := get(p+"audio_ttfp_s_count", nil); got != float64(ttfp.N) {
		t.Errorf("ttfp count %v, report %d", got, ttfp.N)
	}
	if got, want := get(p+"audio_ttfp_s_sum", nil)*1000, ttfp.Mean*float64(ttfp.N); math.Abs(got-want) > 1e-9 {
		t.Errorf("ttfp sum %v ms, report %v ms", got, want)
	}
	e2e, _ := s.Metric(summary.MetricE2E)
	if got, want := get(p+"e2e_request_latency_s_sum", nil)*1000, e2e.Mean*float64(e2e.N); math.Abs(got-want) > 1e-9 {
		t.Errorf("e2e sum %v ms, report %v ms", got, want)
	}
	rtf, _ := s.Metric(summary.MetricAudioRTF)
	if got, want := get(p+"audio_rtf_sum", nil), rtf.Mean*float64(rtf.N); math.Abs(got-want) > 1e-9 {
		t.Errorf("audio_rtf sum %v, report %v", got, want)
	}
	for _, c := range s.Continuity {
		if got := get(p+"audio_continuity_ok_total", map[string]string{"threshold_ms": c.ThresholdMS}); got != float64(c.OK) {
			t.Errorf("continuity ok %s ms: %v, report %d", c.ThresholdMS, got, c.OK)
		}
		if got := get(p+"audio_underrun_s_count", nil); got != float64(c.Of) {
			t.Errorf("underrun count %v, report's continuity denominator %d", got, c.Of)
		}
	}
	if got := get(p+"audio_frames_total", nil); got != float64(s.Audio.TotalFrames) {
		t.Errorf("frames %v, report %d", got, s.Audio.TotalFrames)
	}
	if got := get(p+"stall_resume_stalls_total", nil); got != float64(s.Players.StallResumeStalls) {
		t.Errorf("stalls %v, report %d", got, s.Players.StallResumeStalls)
	}
	if got := get(p+"stall_resume_stall_seconds_sum", nil); got != s.Players.StallResumeTotalS {
		t.Errorf("stall seconds %v, report %v", got, s.Players.StallResumeTotalS)
	}
	var failed float64
	for _, mf := range fams {
		if mf.GetName() != p+"errors_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			failed += m.GetCounter().GetValue()
		}
	}
	if failed != float64(s.Requests.Failed) {
		t.Errorf("errors %v, report %d failed", failed, s.Requests.Failed)
	}
}

// TestContinuityMatchesClient checks that the core's simulation over a
// record's chunks gives the record's own underrun, in both modes and for a
// stereo format (through s16MonoRate).
func TestContinuityMatchesClient(t *testing.T) {
	for _, mode := range []continuity.Mode{continuity.Default, continuity.Reference} {
		for _, ch := range []int{1, 2} {
			in := continuity.Input{
				ArrivalsS:   []float64{0, 0.3, 0.45, 1.2},
				Bytes:       []int{4800 * ch, 4800 * ch, 4800 * ch, 9600 * ch},
				SampleRate:  24000,
				SampleWidth: 2,
				Channels:    ch,
			}
			want := continuity.Simulate(in, mode)
			opts := goldenOptions()
			opts.ContinuityMode = mode
			e, err := New(opts)
			if err != nil {
				t.Fatal(err)
			}
			r := results.Record{SampleRate: 24000, SampleWidth: 2, Channels: ch}
			got := e.Metrics().AudioStreamingFinalize(clientStage(), in.ArrivalsS, in.Bytes, s16MonoRate(&r))
			if math.Abs(got.MaxUnderrunS-want.MaxUnderrunS) > 1e-12 {
				t.Errorf("mode %v, %d channels: underrun %v, client %v", mode, ch, got.MaxUnderrunS, want.MaxUnderrunS)
			}
		}
	}
}

func TestTextOnlyDoesNotCountSkipped(t *testing.T) {
	opts := goldenOptions()
	opts.TextOnly = true
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	e.OnStart(arrival(0, false, 0, 0))
	e.OnRecord(&results.Record{Kind: results.KindChat, E2ES: 0.5, FinishReason: "stop"})
	if _, ok := sampleValue(gatherMap(t, e), omnimetrics.PrefixClient+"audio_skipped_requests_total",
		map[string]string{"reason": "no_audio_data"}); ok {
		t.Error("a text-only run counted a response without audio as skipped")
	}
}

// TestConcurrentHooks runs the hooks from many goroutines (for the race
// detector) and checks that the in-flight gauge ends at zero.
func TestConcurrentHooks(t *testing.T) {
	e, err := New(goldenOptions())
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				seq := w*each + i
				e.OnStart(arrival(seq, false, 0, 0))
				r := goldenRecords()[seq%len(goldenRecords())]
				e.OnRecord(&r)
				if i%10 == 0 {
					e.OnDrop(arrival(seq, false, 0, 0))
				}
			}
		})
	}
	wg.Wait()
	fams := gatherMap(t, e)
	p := omnimetrics.PrefixClient
	if v, _ := sampleValue(fams, p+"num_requests_running", nil); v != 0 {
		t.Errorf("num_requests_running = %v after every request finished, want 0", v)
	}
	if v, _ := sampleValue(fams, p+"arrivals_started_total", nil); v != workers*each {
		t.Errorf("arrivals_started_total = %v, want %d", v, workers*each)
	}
	if v, _ := sampleValue(fams, p+"arrivals_scheduled_total", nil); v != workers*each+workers*each/10 {
		t.Errorf("arrivals_scheduled_total = %v, want %d", v, workers*each+workers*each/10)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	opts := goldenOptions()
	opts.Thresholds = []float64{0.1, 0.1}
	if _, err := New(opts); err == nil {
		t.Error("duplicate thresholds accepted")
	}
}

func TestFinishReasonBounded(t *testing.T) {
	for in, want := range map[string]string{"": "", "stop": "stop", "length": "length", "abort": "abort",
		"tool_calls": "tool_calls", "x" + strings.Repeat("y", 100): "other", "Stop": "other"} {
		if got := finishReason(in); got != want {
			t.Errorf("finishReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestS16MonoRate(t *testing.T) {
	for _, c := range []struct {
		rate, width, channels, want int
	}{
		{24000, 2, 1, 24000}, {24000, 0, 0, 24000}, {24000, 2, 2, 48000}, {16000, 4, 1, 32000}, {22050, 1, 1, 11025},
	} {
		r := results.Record{SampleRate: c.rate, SampleWidth: c.width, Channels: c.channels}
		if got := s16MonoRate(&r); got != c.want {
			t.Errorf("s16MonoRate(%d Hz, %d bytes, %d channels) = %d, want %d", c.rate, c.width, c.channels, got, c.want)
		}
	}
}

// gatherAll gathers every family, including HELP/TYPE-only ones.
func gatherAll(t *testing.T, e *Exporter) []*dto.MetricFamily {
	t.Helper()
	mfs, err := e.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}

func gatherMap(t *testing.T, e *Exporter) map[string]*dto.MetricFamily {
	t.Helper()
	out := map[string]*dto.MetricFamily{}
	for _, mf := range gatherAll(t, e) {
		out[mf.GetName()] = mf
	}
	return out
}

func labelMap(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// sampleValue finds the value of one sample by its exposition name
// (histograms as _bucket, _sum and _count) and a subset of its labels.
func sampleValue(fams map[string]*dto.MetricFamily, name string, labels map[string]string) (float64, bool) {
	base, suffix := name, ""
	for _, s := range []string{"_bucket", "_sum", "_count"} {
		if b, ok := strings.CutSuffix(name, s); ok {
			if mf, ok := fams[b]; ok && mf.GetType() == dto.MetricType_HISTOGRAM {
				base, suffix = b, s
			}
		}
	}
	mf, ok := fams[base]
	if !ok {
		return 0, false
	}
	le, wantLE := labels["le"]
	for _, m := range mf.GetMetric() {
		l := labelMap(m)
		match := true
		for k, v := range labels {
			if k != "le" && l[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		switch suffix {
		case "":
			if c := m.GetCounter(); c != nil {
				return c.GetValue(), true
			}
			return m.GetGauge().GetValue(), true
		case "_sum":
			return m.GetHistogram().GetSampleSum(), true
		case "_count":
			return float64(m.GetHistogram().GetSampleCount()), true
		case "_bucket":
			if !wantLE {
				return 0, false
			}
			for _, b := range m.GetHistogram().GetBucket() {
				if model.FloatString(b.GetUpperBound()).String() == le {
					return float64(b.GetCumulativeCount()), true
				}
			}
		}
	}
	return 0, false
}
