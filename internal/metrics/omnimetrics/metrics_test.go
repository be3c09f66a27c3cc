package omnimetrics

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/omnibench/omnibench/continuity"
)

func openGolden(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func readGolden(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestGoldenStatsOn compares the parsed exposition after scenario() with
// hand-written golden files, for each prefix.
func TestGoldenStatsOn(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		golden string
	}{
		{"design-default", serverOpts(""), "stats_on_design.prom"},
		{"design", serverOpts(PrefixDesign), "stats_on_design.prom"},
		{"current", serverOpts(PrefixCurrent), "stats_on_current.prom"},
		{"client", func() Options {
			o := serverOpts(PrefixClient)
			o.ConstLabels = prometheus.Labels{"run": "r1"}
			return o
		}(), "stats_on_client.prom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newTestMetrics(t, tc.opts)
			scenario(m)
			if err := testutil.GatherAndCompare(m.Registry(), openGolden(t, tc.golden)); err != nil {
				t.Errorf("registry: %v", err)
			}
			// Every family has children now, so the HELP/TYPE-preserving
			// gatherer must give the same result.
			if err := testutil.GatherAndCompare(m.Gatherer(), openGolden(t, tc.golden)); err != nil {
				t.Errorf("gatherer: %v", err)
			}
		})
	}
}

// TestGoldenStatsOff checks gating: with stats off the exposition is exactly
// the golden text, even after every observe method was called and with
// Upstream requested. The bare shape (the original metrics design's) is HELP
// and TYPE lines only; the current shape adds the five model_name children with zeros.
func TestGoldenStatsOff(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		bare   bool
		golden string
	}{
		{PrefixDesign, true, "stats_off_bare_design.prom"},
		{PrefixCurrent, true, "stats_off_bare_current.prom"},
		{PrefixDesign, false, "stats_off_design.prom"},
		{PrefixCurrent, false, "stats_off_current.prom"},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			m := newTestMetrics(t, Options{Prefix: tc.prefix, ModelName: testModel, Upstream: true,
				Topology: []int{1, 1, 1}, ContinuityMode: continuity.Reference, BareStatsOff: tc.bare})
			scenario(m)
			if res := m.AudioStreamingFinalize(StageReplica{}, []float64{0, 0.5}, []int{4800, 4800}, 24000); res != (continuity.Result{}) {
				t.Errorf("stats off: AudioStreamingFinalize = %+v, want zero Result", res)
			}
			if m.Upstream() != nil {
				t.Error("stats off: Upstream() != nil")
			}

			// Parsers drop families without samples, so the text is
			// compared as text.
			_, body := scrape(t, m.Handler(), "text/plain;version=0.0.4")
			if got, want := string(body), readGolden(t, tc.golden); got != want {
				t.Errorf("text exposition differs from %s:\n--- got\n%s--- want\n%s", tc.golden, got, want)
			}
			if err := testutil.GatherAndCompare(m.Registry(), openGolden(t, tc.golden)); err != nil {
				t.Error(err)
			}
			samples := 0
			for line := range strings.Lines(string(body)) {
				if strings.HasPrefix(line, "#") {
					continue
				}
				samples++
				if !strings.HasSuffix(line, " 0\n") {
					t.Errorf("stats off: non-zero sample %q", line)
				}
			}
			// Bare: no sample at all. Current: running, waiting, both token
			// counters, and the e2e histogram's 14 buckets, _sum and _count.
			want := 4 + len(SecondsBuckets()) + 3
			if tc.bare {
				want = 0
			}
			if samples != want {
				t.Errorf("stats off: %d samples, want %d", samples, want)
			}
		})
	}
}

// TestPythonCreated checks the `_created` families of Options.PythonCreated
// in the text format: one gauge family after each counter and histogram
// family with series (the counter's without `_total`), a creation time per
// series within the test's run, and none without the option.
func TestPythonCreated(t *testing.T) {
	before := float64(time.Now().Add(-time.Second).Unix())
	m := newTestMetrics(t, Options{Prefix: PrefixCurrent, ModelName: testModel, Topology: []int{1, 1, 1},
		ContinuityMode: continuity.Reference, PythonCreated: true})
	after := float64(time.Now().Add(time.Second).Unix())
	_, body := scrape(t, m.Handler(), "text/plain;version=0.0.4")
	text := string(body)
	for _, want := range []string{
		"# TYPE vllm_omni:e2e_request_latency_s_created gauge\n",
		"# TYPE vllm_omni:prompt_tokens_created gauge\n",
		"# TYPE vllm_omni:generation_tokens_created gauge\n",
		"# HELP vllm_omni:prompt_tokens_created Prompt tokens processed (stage 0)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("missing %q in\n%s", want, text)
		}
	}
	if strings.Contains(text, "num_requests_running_created") {
		t.Error("a gauge got a _created family")
	}
	n := 0
	for line := range strings.Lines(text) {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !strings.HasSuffix(name, "_created") {
			continue
		}
		n++
		_, v, _ := strings.Cut(rest, "} ")
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < before || f > after {
			t.Errorf("%s: created %q, want a Unix time in [%v, %v]", name, v, before, after)
		}
	}
	if n != 3 {
		t.Errorf("%d _created series, want 3 (e2e, prompt, generation)", n)
	}

	plain := newTestMetrics(t, Options{Prefix: PrefixCurrent, ModelName: testModel, Topology: []int{1, 1, 1},
		ContinuityMode: continuity.Reference})
	if _, body := scrape(t, plain.Handler(), "text/plain;version=0.0.4"); strings.Contains(string(body), "_created") {
		t.Error("_created without PythonCreated")
	}
}

func TestStatsOnRegistersUpstreamOnlyWhenAsked(t *testing.T) {
	m := newTestMetrics(t, serverOpts(PrefixCurrent))
	if m.Upstream() != nil {
		t.Fatal("Upstream() != nil without Options.Upstream")
	}
	_, body := scrape(t, m.Handler(), "")
	if strings.Contains(string(body), "vllm:") {
		t.Errorf("upstream vllm: family exposed without Options.Upstream:\n%s", body)
	}
}

// TestStatsOnEmptyFamiliesShowHelpType: a stats-on server before any request
// shows samples for the model-only families and HELP/TYPE for the rest.
func TestStatsOnEmptyFamiliesShowHelpType(t *testing.T) {
	m := newTestMetrics(t, serverOpts(PrefixDesign))
	_, body := scrape(t, m.Handler(), "text/plain")
	text := string(body)
	for _, want := range []string{
		"# HELP vllm:omni_audio_ttfp_s Time from request arrival to first audio packet/frame\n# TYPE vllm:omni_audio_ttfp_s histogram\n# HELP",
		"# TYPE vllm:omni_requests_success_total counter\n# HELP vllm:omni_transfer_in_flight_s",
		"vllm:omni_num_requests_running{model_name=\"qwen3-omni\"} 0\n",
		"vllm:omni_e2e_request_latency_s_count{model_name=\"qwen3-omni\"} 0\n",
		"vllm:omni_prompt_tokens_total{model_name=\"qwen3-omni\"} 0\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("exposition lacks %q:\n%s", want, text)
		}
	}
}

func TestLint(t *testing.T) {
	for _, prefix := range []string{PrefixDesign, PrefixCurrent, PrefixClient} {
		t.Run(prefix, func(t *testing.T) {
			opts := serverOpts(prefix)
			opts.Upstream = true
			opts.Topology = []int{1, 1, 1}
			m := newTestMetrics(t, opts)
			scenario(m)
			m.Upstream().ObserveRequest(StageReplica{}, 0.1, 1, 0.01, 0.09, 0.9, 10, 10, []float64{0.1}, "stop")
			problems, err := testutil.GatherAndLint(m.Registry())
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range problems {
				switch {
				case p.Text == "metric names should not contain ':'":
					// Colons are part of vLLM's names.
				case p.Text == "metric names should not contain abbreviated units" &&
					(strings.HasSuffix(p.Metric, "_s") || strings.Contains(p.Metric, "_s_")):
					// The _s unit suffix is vLLM-Omni's naming convention.
				default:
					t.Errorf("lint: %s: %s", p.Metric, p.Text)
				}
			}
		})
	}
}

// TestAudioAtFinalizeArithmetic checks duration = frames / rate and
// RTF = gen time / duration against hand values.
func TestAudioAtFinalizeArithmetic(t *testing.T) {
	for _, tc := range []struct {
		frames       int64
		rate         int
		gen          float64
		duration     float64
		rtf          float64
		rtfBucketLE  float64 // smallest RTF bucket holding the value
		rtfBucketPre float64 // the bucket below it
	}{
		{36000, 24000, 0.9, 1.5, 0.6, 0.75, 0.5},
		{22050, 44100, 0.25, 0.5, 0.5, 0.5, 0.25},
		{48000, 16000, 6, 3, 2, 2, 1.5},
		{96000, 48000, 0.2, 2, 0.1, 0.1, math.NaN()},
	} {
		m := newTestMetrics(t, serverOpts(""))
		sr := StageReplica{Stage: 1, Replica: 3}
		m.AudioAtFinalize(sr, tc.frames, tc.rate, tc.gen)
		lbl := map[string]string{"stage": "1", "replica": "3", "model_name": testModel}
		d := findMetric(t, m.Registry(), "vllm:omni_audio_duration_s", lbl)
		r := findMetric(t, m.Registry(), "vllm:omni_audio_rtf", lbl)
		f := findMetric(t, m.Registry(), "vllm:omni_audio_frames_total", lbl)
		if d == nil || r == nil || f == nil {
			t.Fatalf("%+v: missing series (duration %v, rtf %v, frames %v)", tc, d != nil, r != nil, f != nil)
		}
		if got := d.GetHistogram().GetSampleSum(); math.Abs(got-tc.duration) > 1e-12 {
			t.Errorf("%+v: duration %v, want %v", tc, got, tc.duration)
		}
		if got := r.GetHistogram().GetSampleSum(); math.Abs(got-tc.rtf) > 1e-12 {
			t.Errorf("%+v: RTF %v, want %v", tc, got, tc.rtf)
		}
		if got := bucketCount(t, r.GetHistogram(), tc.rtfBucketLE); got != 1 {
			t.Errorf("%+v: RTF bucket le=%v holds %d, want 1", tc, tc.rtfBucketLE, got)
		}
		if !math.IsNaN(tc.rtfBucketPre) {
			if got := bucketCount(t, r.GetHistogram(), tc.rtfBucketPre); got != 0 {
				t.Errorf("%+v: RTF bucket le=%v holds %d, want 0", tc, tc.rtfBucketPre, got)
			}
		}
		if got := f.GetCounter().GetValue(); got != float64(tc.frames) {
			t.Errorf("%+v: frames %v, want %v", tc, got, tc.frames)
		}
		if s := findMetric(t, m.Registry(), "vllm:omni_audio_skipped_requests_total", nil); s != nil {
			t.Errorf("%+v: skipped recorded for a request with audio", tc)
		}
	}
}

func TestAudioAtFinalizeSkipped(t *testing.T) {
	t.Run("zero frames", func(t *testing.T) {
		m := newTestMetrics(t, serverOpts(""))
		m.AudioAtFinalize(StageReplica{Stage: 2}, 0, 24000, 1.5)
		m.AudioAtFinalize(StageReplica{Stage: 2}, -5, 24000, 1.5)
		fams := familyNames(t, m.Registry())
		for _, absent := range []string{"vllm:omni_audio_duration_s", "vllm:omni_audio_rtf", "vllm:omni_audio_frames_total"} {
			if _, ok := fams[absent]; ok {
				t.Errorf("%s recorded for a request without audio", absent)
			}
		}
		s := findMetric(t, m.Registry(), "vllm:omni_audio_skipped_requests_total",
			map[string]string{"reason": "no_audio_data", "stage": "2", "replica": "0"})
		if s == nil || s.GetCounter().GetValue() != 2 {
			t.Fatalf("skipped{no_audio_data} = %v, want 2", s)
		}
	})
	t.Run("no sample rate", func(t *testing.T) {
		// The server still counts the frames it has; only duration and RTF
		// need the rate.
		m := newTestMetrics(t, serverOpts(""))
		m.AudioAtFinalize(StageReplica{}, 1000, 0, 1)
		fams := familyNames(t, m.Registry())
		if _, ok := fams["vllm:omni_audio_duration_s"]; ok {
			t.Error("duration recorded without a sample rate")
		}
		if f := findMetric(t, m.Registry(), "vllm:omni_audio_frames_total", nil); f == nil || f.GetCounter().GetValue() != 1000 {
			t.Errorf("frames = %v, want 1000", f)
		}
		if s := findMetric(t, m.Registry(), "vllm:omni_audio_skipped_requests_total", nil); s == nil || s.GetCounter().GetValue() != 1 {
			t.Errorf("skipped = %v, want 1", s)
		}
	})
}

func TestAudioStreamingFinalize(t *testing.T) {
	sr := StageReplica{Stage: 2}
	t.Run("default threshold label 100", func(t *testing.T) {
		m := newTestMetrics(t, serverOpts(""))
		// Protocol case [0, 0.2], 2 x 4800: 0.1 s, continuous (inclusive).
		res := m.AudioStreamingFinalize(sr, []float64{0, 0.2}, []int{4800, 4800}, 24000)
		if math.Abs(res.MaxUnderrunS-0.1) > 1e-12 || res.UnderrunEvents != 1 {
			t.Errorf("result %+v, want 0.1 s and 1 event", res)
		}
		ok := findMetric(t, m.Registry(), "vllm:omni_audio_continuity_ok_total", map[string]string{"threshold_ms": "100"})
		if ok == nil || ok.GetCounter().GetValue() != 1 {
			t.Fatalf("continuity_ok{threshold_ms=100} = %v, want 1", ok)
		}
		u := findMetric(t, m.Registry(), "vllm:omni_audio_underrun_s", nil)
		if u.GetHistogram().GetSampleCount() != 1 || bucketCount(t, u.GetHistogram(), 0.1) != 1 || bucketCount(t, u.GetHistogram(), 0.05) != 0 {
			t.Errorf("underrun histogram %v, want one value in (0.05, 0.1]", u.GetHistogram())
		}
	})
	t.Run("several thresholds", func(t *testing.T) {
		opts := serverOpts("")
		opts.Thresholds = []float64{0.1, 0.5}
		m := newTestMetrics(t, opts)
		// Protocol case [0, 0.3], 2 x 4800: 0.2 s; not continuous at 0.1, continuous at 0.5.
		res := m.AudioStreamingFinalize(sr, []float64{0, 0.3}, []int{4800, 4800}, 24000)
		if math.Abs(res.MaxUnderrunS-0.2) > 1e-12 {
			t.Errorf("MaxUnderrunS = %v, want 0.2", res.MaxUnderrunS)
		}
		if ok := findMetric(t, m.Registry(), "vllm:omni_audio_continuity_ok_total", map[string]string{"threshold_ms": "100"}); ok != nil {
			t.Errorf("continuity_ok{100} recorded for a 0.2 s underrun")
		}
		if ok := findMetric(t, m.Registry(), "vllm:omni_audio_continuity_ok_total", map[string]string{"threshold_ms": "500"}); ok == nil || ok.GetCounter().GetValue() != 1 {
			t.Errorf("continuity_ok{500} = %v, want 1", ok)
		}
	})
	t.Run("no chunks records nothing", func(t *testing.T) {
		m := newTestMetrics(t, serverOpts(""))
		if res := m.AudioStreamingFinalize(sr, nil, nil, 24000); res != (continuity.Result{}) {
			t.Errorf("result %+v, want zero", res)
		}
		if n := len(familyNames(t, m.Registry())); n != 5 { // the five model-only families
			t.Errorf("%d families with samples after an empty stream, want 5", n)
		}
	})
	t.Run("mode is passed through", func(t *testing.T) {
		// Protocol's last case: absolute timestamps make 8 phantom events in
		// reference mode and none in default mode.
		arrivals := make([]float64, 20)
		bytes := make([]int, 20)
		for i := range arrivals {
			arrivals[i] = 123456.0 + 0.1*float64(i)
			bytes[i] = 4800
		}
		for _, tc := range []struct {
			mode   continuity.Mode
			events int
		}{{continuity.Reference, 8}, {continuity.Default, 0}} {
			opts := serverOpts("")
			opts.ContinuityMode = tc.mode
			m := newTestMetrics(t, opts)
			res := m.AudioStreamingFinalize(sr, arrivals, bytes, 24000)
			if res.UnderrunEvents != tc.events || !res.Continuous(0.1) {
				t.Errorf("mode %v: %+v, want %d events, continuous", tc.mode, res, tc.events)
			}
		}
	})
}

func TestRequestCounters(t *testing.T) {
	m := newTestMetrics(t, serverOpts(""))
	m.RequestFailed()
	m.RequestFailed()
	m.RequestSucceeded(0.5, "") // "" is the server's default, "stop"
	abort := findMetric(t, m.Registry(), "vllm:omni_requests_success_total", map[string]string{"finished_reason": "abort"})
	if abort == nil || abort.GetCounter().GetValue() != 2 {
		t.Errorf("abort = %v, want 2", abort)
	}
	stop := findMetric(t, m.Registry(), "vllm:omni_requests_success_total", map[string]string{"finished_reason": "stop"})
	if stop == nil || stop.GetCounter().GetValue() != 1 {
		t.Errorf("stop = %v, want 1", stop)
	}
	// Failures go through the cleanup path: counter only, no e2e sample.
	e2e := findMetric(t, m.Registry(), "vllm:omni_e2e_request_latency_s", nil)
	if got := e2e.GetHistogram().GetSampleCount(); got != 1 {
		t.Errorf("e2e count %d, want 1 (the success only)", got)
	}
	m.Tokens(-3, -4) // ignored, must not panic
}

func TestTTFPNegativeIsZero(t *testing.T) {
	m := newTestMetrics(t, serverOpts(""))
	m.AudioFirstPacket(StageReplica{}, -0.5)
	h := findMetric(t, m.Registry(), "vllm:omni_audio_ttfp_s", nil).GetHistogram()
	if h.GetSampleSum() != 0 || h.GetSampleCount() != 1 {
		t.Errorf("ttfp %v, want one sample of 0", h)
	}
}

func TestInvalidOptions(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
		msg  string
	}{
		{"prefix without separator", Options{Prefix: "vllm"}, `prefix "vllm" must end in ':' or '_'`},
		{"prefix with digit first", Options{Prefix: "9bad:"}, `"9bad:num_requests_running"`},
		{"prefix with dash", Options{Prefix: "bad-prefix_"}, "not a valid Prometheus metric name"},
		{"zero threshold", Options{Thresholds: []float64{0}}, "thresholds[0] = 0"},
		{"NaN threshold", Options{Thresholds: []float64{0.1, math.NaN()}}, "thresholds[1] = NaN"},
		{"infinite threshold", Options{Thresholds: []float64{math.Inf(1)}}, "thresholds[0] = +Inf"},
		{"duplicate threshold label", Options{Thresholds: []float64{0.1, 0.1004}}, `share threshold_ms label "100"`},
		{"bad topology", Options{Topology: []int{1, 0}}, "topology[1] = 0"},
		{"const label le", Options{ConstLabels: prometheus.Labels{"le": "x"}}, `constant label "le"`},
		{"const label model_name", Options{ConstLabels: prometheus.Labels{"model_name": "x"}}, `constant label "model_name"`},
		{"const label reserved prefix", Options{ConstLabels: prometheus.Labels{"__x": "x"}}, `constant label "__x"`},
		{"const label invalid", Options{ConstLabels: prometheus.Labels{"bad-name": "x"}}, `constant label "bad-name"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.opts)
			if err == nil {
				t.Fatal("New succeeded, want an error")
			}
			if !errors.Is(err, ErrInvalidOptions) {
				t.Errorf("error %v does not wrap ErrInvalidOptions", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
		})
	}
	// Any prefix ending in ':' or '_' that makes valid names is fine.
	for _, p := range []string{"a:", "my_app_", "x:y_"} {
		if _, err := New(Options{Prefix: p}); err != nil {
			t.Errorf("prefix %q: %v", p, err)
		}
	}
}

// TestConcurrentObserve hammers every observe method from several goroutines
// while scraping, then checks exact totals. Run with -race.
func TestConcurrentObserve(t *testing.T) {
	const (
		workers = 8
		iters   = 200
		scrapes = 20
	)
	opts := serverOpts("")
	opts.Upstream = true
	opts.Topology = []int{1, 2}
	m := newTestMetrics(t, opts)
	h := m.Handler()

	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range iters {
				sr := StageReplica{Stage: i % 2, Replica: w % 2}
				m.SetRunning(i)
				m.SetWaiting(w)
				m.RequestSucceeded(0.25, "stop")
				m.RequestFailed()
				m.Tokens(1, 2)
				m.AudioFirstPacket(sr, 0.125)
				m.AudioAtFinalize(sr, 24000, 24000, 0.5)
				m.AudioStreamingFinalize(sr, []float64{0, 0.1}, []int{4800, 4800}, 24000)
				m.TransferHop(Edge{FromStage: 0, ToStage: 1, ToReplica: w % 2}, 1000, 0.001, 0.001, 0.001)
				m.Upstream().ObserveRequest(sr, 0.1, 1, 0.1, 0.1, 0.8, 3, 5, []float64{0.2, 0.2}, "stop")
				m.Upstream().SetScheduler(sr, 1, 2, 0.5)
			}
		})
	}
	scrapeDone := make(chan struct{})
	go func() {
		defer close(scrapeDone)
		for range scrapes {
			if _, err := m.Gatherer().Gather(); err != nil {
				t.Errorf("concurrent gather: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	<-scrapeDone
	_, _ = scrape(t, h, "") // and one real scrape at the end

	const total = workers * iters
	check := func(name string, labels map[string]string, want float64) {
		t.Helper()
		mt := findMetric(t, m.Registry(), name, labels)
		if mt == nil {
			t.Errorf("%s%v missing", name, labels)
			return
		}
		var got float64
		switch {
		case mt.Counter != nil:
			got = mt.GetCounter().GetValue()
		case mt.Histogram != nil:
			got = float64(mt.GetHistogram().GetSampleCount())
		}
		if got != want {
			t.Errorf("%s%v = %v, want %v", name, labels, got, want)
		}
	}
	check("vllm:omni_requests_success_total", map[string]string{"finished_reason": "stop"}, total)
	check("vllm:omni_requests_success_total", map[string]string{"finished_reason": "abort"}, total)
	check("vllm:omni_generation_tokens_total", nil, 2*total)
	check("vllm:omni_e2e_request_latency_s", nil, total)
	// Each (stage, replica) gets a quarter: stage alternates per iteration,
	// replica per worker.
	for _, sr := range []map[string]string{{"stage": "0", "replica": "0"}, {"stage": "1", "replica": "1"}} {
		check("vllm:omni_audio_ttfp_s", sr, total/4)
		check("vllm:omni_audio_frames_total", sr, 24000*total/4)
		check("vllm:omni_audio_continuity_ok_total", sr, total/4)
		check("vllm:request_success_total", map[string]string{"stage": sr["stage"], "replica": sr["replica"], "finished_reason": "stop"}, total/4)
		check("vllm:inter_token_latency_seconds", sr, 2*total/4)
	}
	check("vllm:omni_transfer_size_bytes", map[string]string{"to_replica": "1"}, total/2)
}

// TestSpeechStreamCounters: the speech-stream counters are registered (and
// shown as HELP/TYPE before any stream) only with Options.SpeechStreams; a
// completed stream runs the continuity simulation with its real channel
// count and counts once; an aborted one counts by reason; without the
// option, or with stats off, nothing is recorded.
func TestSpeechStreamCounters(t *testing.T) {
	sr := StageReplica{Stage: 2}
	// 2 x 4800 bytes at 24 kHz, 0.2 s apart: 0.1 s of audio each in mono
	// (0.1 s underrun, continuous), 0.05 s in stereo (0.15 s, not).
	arrivals, bytes := []float64{0, 0.2}, []int{4800, 4800}
	completed := "vllm:omni_" + SpeechStreamCompletedFamily
	aborted := "vllm:omni_" + SpeechStreamAbortedFamily

	t.Run("registered with the option", func(t *testing.T) {
		opts := serverOpts("")
		opts.SpeechStreams = true
		m := newTestMetrics(t, opts)
		_, body := scrape(t, m.Handler(), "")
		for _, name := range []string{completed, aborted} {
			if !strings.Contains(string(body), "# TYPE "+name+" counter\n") {
				t.Errorf("%s not declared before any stream:\n%s", name, body)
			}
		}
		res := m.SpeechStreamCompleted(sr, arrivals, bytes, 24000, 2)
		if math.Abs(res.MaxUnderrunS-0.15) > 1e-12 {
			t.Errorf("stereo stream: max underrun %v, want 0.15", res.MaxUnderrunS)
		}
		m.SpeechStreamCompleted(sr, arrivals, bytes, 24000, 1)
		m.SpeechStreamAborted(SpeechAbortError)
		if c := findMetric(t, m.Registry(), completed, nil); c == nil || c.GetCounter().GetValue() != 2 {
			t.Errorf("completed = %v, want 2", c)
		}
		if c := findMetric(t, m.Registry(), aborted, map[string]string{LabelReason: SpeechAbortError}); c == nil || c.GetCounter().GetValue() != 1 {
			t.Errorf("aborted{reason=error} = %v, want 1", c)
		}
		if u := findMetric(t, m.Registry(), "vllm:omni_audio_underrun_s", nil); u.GetHistogram().GetSampleCount() != 2 {
			t.Errorf("underrun count %d, want 2", u.GetHistogram().GetSampleCount())
		}
		ok := findMetric(t, m.Registry(), "vllm:omni_audio_continuity_ok_total", map[string]string{LabelThresholdMS: "100"})
		if ok.GetCounter().GetValue() != 1 {
			t.Errorf("continuity_ok{100} = %v, want 1 (the mono stream only)", ok.GetCounter().GetValue())
		}
	})
	for _, tc := range []struct {
		name         string
		option, stat bool
	}{{"without the option", false, true}, {"stats off", true, false}} {
		t.Run(tc.name, func(t *testing.T) {
			opts := serverOpts("")
			opts.SpeechStreams, opts.StatsEnabled = tc.option, tc.stat
			m := newTestMetrics(t, opts)
			if res := m.SpeechStreamCompleted(sr, arrivals, bytes, 24000, 1); res != (continuity.Result{}) {
				t.Errorf("result %+v, want zero", res)
			}
			m.SpeechStreamAborted(SpeechAbortClientGone)
			for _, name := range []string{completed, aborted, "vllm:omni_audio_underrun_s"} {
				if c := findMetric(t, m.Registry(), name, nil); c != nil {
					t.Errorf("%s recorded: %v", name, c)
				}
			}
			_, body := scrape(t, m.Handler(), "")
			if declared := strings.Contains(string(body), completed); declared != tc.option {
				t.Errorf("%s declared: %v, want %v", completed, declared, tc.option)
			}
		})
	}
}
