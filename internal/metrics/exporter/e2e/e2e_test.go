package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/metrics/dashboards"
	"github.com/omnibench/omnibench/internal/metrics/exporter"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/scenarios"
)

// Run shape: small and fast, with some failures so that the error series
// have data on both sides.
const (
	requests    = 40
	concurrency = 4
	fault500    = 0.15
	// window covers the whole test, so increase/rate see every sample from
	// the zero before the run on.
	window = "5m"
	// rateInterval stands in for Grafana's $__rate_interval.
	rateInterval = "2m"
)

// fastTiming keeps each response short (at most 1 s of audio generated at
// RTF 0.1) with TTFP around 90 ms, near the 0.1 s bucket bound, so the
// quantile checks span buckets.
func fastTiming() simulator.Timing {
	tm := simulator.DefaultTiming()
	tm.TTFT = 5 * time.Millisecond
	tm.WordInterval = time.Millisecond
	tm.TTFA = 90 * time.Millisecond
	tm.ChunkAudio = 100 * time.Millisecond
	tm.RTF = 0.1
	tm.Jitter = 0.1
	tm.AudioPerChar = 10 * time.Millisecond
	tm.MinAudio = 300 * time.Millisecond
	tm.MaxAudio = time.Second
	return tm
}

func TestPrometheusEndToEnd(t *testing.T) {
	promBin, promtool := promTools(t)
	ctx := t.Context()

	sc, err := scenarios.Get("chat-voice")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := sc.Workload()
	if err != nil {
		t.Fatal(err)
	}
	simCfg := simulator.DefaultConfig()
	simCfg.Addr = "127.0.0.1:0"
	simCfg.Model = sc.Model
	simCfg.StatsEnabled = true
	simCfg.Seed = 7
	simCfg.Timing = fastTiming()
	simCfg.Faults.HTTP500 = fault500
	sim, err := simulator.Start(ctx, simCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })

	thresholds := []float64{0.1}
	exp, err := exporter.New(exporter.Options{
		ModelName:      sc.Model,
		Endpoint:       sc.EndpointPath(),
		Scenario:       sc.Name,
		Thresholds:     thresholds,
		ContinuityMode: continuity.Default,
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := exporter.Listen(ctx, "127.0.0.1:0", exp.Handler())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })

	prom := startPrometheus(t, promBin, []scrapeJob{{"simulator", sim.Addr}, {"omnibench", srv.Addr()}})
	const (
		clientProbe = "omnibench:arrivals_started_total"
		serverProbe = "vllm:omni_e2e_request_latency_s_count"
	)
	// Both sides scraped once before any request: every eagerly created
	// counter starts at 0 in the TSDB, which makes increase() exact below.
	waitFor(t, "the first scrape of both targets", 30*time.Second, func() (bool, string) {
		for _, probe := range []string{clientProbe, serverProbe} {
			res, err := prom.query(ctx, probe, 0)
			if err != nil || len(res) != 1 || res[0].Value != 0 {
				return false, fmt.Sprintf("%s: %v %v", probe, res, err)
			}
		}
		return true, ""
	})

	out, err := runner.Run(ctx, runner.Config{
		Target:   sim.URL,
		Workload: wl,
		Scenario: sc.Name,
		Seed:     1,
		Load:     load.Config{Concurrency: concurrency, Requests: requests},
		Client: client.Options{
			Timeout: 30 * time.Second, IdleTimeout: 10 * time.Second,
			Thresholds: thresholds, ContinuityMode: continuity.Default,
			Preroll: continuity.PrerollConfig{BufferS: 0.2},
		},
		Summary:  summary.Options{Thresholds: thresholds},
		Scrape:   runner.ScrapeOff,
		OnStart:  exp.OnStart,
		OnRecord: exp.OnRecord,
		OnDrop:   exp.OnDrop,
	})
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	end := float64(time.Now().UnixMilli()) / 1000
	s := out.Summary
	if s.Requests.Total != requests || s.Requests.Failed == 0 || s.Requests.Completed == 0 || s.Requests.WithAudio == 0 {
		t.Fatalf("fixture: %d requests, %d completed, %d failed, %d with audio; want %d with some of each (change the seed)",
			s.Requests.Total, s.Requests.Completed, s.Requests.Failed, s.Requests.WithAudio, requests)
	}

	// Wait for two scrapes of each side that started after the run ended:
	// they hold the final values of every series, twice, so rate() has two
	// samples even of a series created by the last request. The last one's
	// timestamp is where each side's queries are evaluated, so they read a
	// real sample and never a staleness marker left by a scrape that timed
	// out on a busy machine. Prometheus may shift a scrape's timestamp by a
	// couple of milliseconds to align it with the interval, hence the margin.
	end += 0.05
	var tClient, tServer float64
	waitFor(t, "two scrapes of both targets after the run", 60*time.Second, func() (bool, string) {
		for _, side := range []struct {
			probe string
			at    *float64
		}{{clientProbe, &tClient}, {serverProbe, &tServer}} {
			ts, err := prom.one(ctx, "timestamp("+side.probe+")", 0)
			if err != nil || ts <= end {
				return false, fmt.Sprintf("%s: last sample at %.3f, run ended %.3f (%v)", side.probe, ts, end, err)
			}
			since := fmt.Sprintf("%dms", int64((ts-end)*1000))
			n, err := prom.one(ctx, "count_over_time("+side.probe+"["+since+"])", ts)
			if err != nil || n < 2 {
				return false, fmt.Sprintf("%s: %v samples since the run ended, want 2 (%v)", side.probe, n, err)
			}
			*side.at = ts
		}
		return true, ""
	})
	logScrapeHealth(t, ctx, prom)

	t.Run("counts", func(t *testing.T) { checkCounts(t, ctx, prom, out, tClient, tServer) })
	t.Run("increase and rate", func(t *testing.T) { checkIncrease(t, ctx, prom, out, tClient, tServer) })
	t.Run("quantiles", func(t *testing.T) { checkQuantiles(t, ctx, prom, out, tClient, tServer) })
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, ctx, prom, sc.Model, tClient, tServer) })
	t.Run("promtool", func(t *testing.T) {
		checkLint(t, ctx, promtool, sim.URL+"/metrics", "vllm:omni_")
		checkLint(t, ctx, promtool, srv.URL(), omnimetrics.PrefixClient)
	})
}

// expect compares an instant query with a value from omnibench's report.
type expect struct {
	expr string
	at   float64
	want float64
}

func runExpects(t *testing.T, ctx context.Context, prom *promServer, es []expect) {
	t.Helper()
	for _, e := range es {
		got, err := prom.one(ctx, e.expr, e.at)
		if err != nil {
			t.Error(err)
			continue
		}
		if math.Abs(got-e.want) > 1e-9*math.Max(1, math.Abs(e.want)) {
			t.Errorf("%s = %v, omnibench's report says %v", e.expr, got, e.want)
		}
	}
}

// checkCounts compares the final counter values of both sides with the
// report's counts: exact.
func checkCounts(t *testing.T, ctx context.Context, prom *promServer, out *runner.Outcome, tc, ts float64) {
	s := out.Summary
	var chatAudio int
	out.Set.All(func(r *summary.Sample) {
		if out.Set.OK(r) && r.HasAudio() && out.Set.Kind(r) == results.KindChat && !r.Warmup() {
			chatAudio++
		}
	})
	cont := s.Continuity[0]
	runExpects(t, ctx, prom, []expect{
		{`sum(omnibench:requests_success_total)`, tc, float64(s.Requests.Total)},
		{`sum(omnibench:requests_success_total{finished_reason!="abort"})`, tc, float64(s.Requests.Completed)},
		{`sum(omnibench:requests_success_total{finished_reason="abort"})`, tc, float64(s.Requests.Failed)},
		{`sum(omnibench:errors_total)`, tc, float64(s.Requests.Failed)},
		{`omnibench:errors_total{class="http_status"}`, tc, float64(s.Requests.ByError[results.ErrHTTPStatus])},
		{`omnibench:e2e_request_latency_s_count`, tc, float64(s.Requests.Completed)},
		{`omnibench:audio_ttfp_s_count`, tc, float64(s.Requests.WithAudio)},
		{`omnibench:audio_underrun_s_count`, tc, float64(cont.Of)},
		{`omnibench:audio_continuity_ok_total{threshold_ms="100"}`, tc, float64(cont.OK)},
		{`omnibench:audio_frames_total`, tc, float64(s.Audio.TotalFrames)},
		{`omnibench:audio_duration_s_sum`, tc, s.Audio.TotalDurationS},
		{`omnibench:arrivals_started_total`, tc, float64(out.Load.Started)},
		{`omnibench:arrivals_scheduled_total`, tc, float64(out.Load.Scheduled)},
		{`omnibench:num_requests_running`, tc, 0},
		{`omnibench:stall_resume_stalls_total`, tc, float64(s.Players.StallResumeStalls)},
		// The server saw the same requests: its failures are the client's
		// HTTP 500s, its audio is what the client received.
		{`sum(vllm:omni_requests_success_total)`, ts, float64(s.Requests.Total)},
		{`sum(vllm:omni_requests_success_total{finished_reason="abort"})`, ts, float64(s.Requests.Failed)},
		{`vllm:omni_e2e_request_latency_s_count`, ts, float64(s.Requests.Completed)},
		{`sum(vllm:omni_audio_ttfp_s_count)`, ts, float64(chatAudio)},
		{`sum(vllm:omni_audio_frames_total)`, ts, float64(s.Audio.TotalFrames)},
	})
}

// checkIncrease checks increase and rate at the final scrape's timestamp:
// with the series at 0 in the first sample of the window and the evaluation
// time on the last sample, Prometheus extrapolates nothing and the result is
// the exact count.
func checkIncrease(t *testing.T, ctx context.Context, prom *promServer, out *runner.Outcome, tc, ts float64) {
	s := out.Summary
	w, err := time.ParseDuration(window)
	if err != nil {
		t.Fatal(err)
	}
	completed := float64(s.Requests.Completed)
	runExpects(t, ctx, prom, []expect{
		{`increase(omnibench:e2e_request_latency_s_count[` + window + `])`, tc, completed},
		{`rate(omnibench:e2e_request_latency_s_count[` + window + `])`, tc, completed / w.Seconds()},
		{`sum(increase(omnibench:arrivals_started_total[` + window + `]))`, tc, float64(out.Load.Started)},
		{`sum(increase(omnibench:errors_total[` + window + `]))`, tc, float64(s.Requests.Failed)},
		{`increase(vllm:omni_e2e_request_latency_s_count[` + window + `])`, ts, completed},
		{`rate(vllm:omni_e2e_request_latency_s_count[` + window + `])`, ts, completed / w.Seconds()},
	})
	// The lazily created series (first sample not 0) get extrapolated; they
	// must still have data and be no smaller than the last sample minus the
	// first.
	for _, expr := range []string{
		`sum(rate(omnibench:requests_success_total[` + window + `]))`,
		`sum(rate(vllm:omni_requests_success_total[` + window + `]))`,
		`sum(rate(omnibench:audio_ttfp_s_count[` + window + `]))`,
	} {
		at := tc
		if strings.Contains(expr, "vllm:") {
			at = ts
		}
		v, err := prom.one(ctx, expr, at)
		if err != nil {
			t.Error(err)
			continue
		}
		if !(v > 0) {
			t.Errorf("%s = %v, want > 0", expr, v)
		}
	}
}

// checkQuantiles compares histogram_quantile over each side's buckets with
// the report's percentiles: both must lie in the span of buckets holding the
// order statistics around the rank (see bucketSpan).
func checkQuantiles(t *testing.T, ctx context.Context, prom *promServer, out *runner.Outcome, tc, ts float64) {
	var ttfp, e2e, rtf, underrun []float64
	out.Set.All(func(r *summary.Sample) {
		if r.Warmup() || !out.Set.OK(r) {
			return
		}
		e2e = append(e2e, r.E2ES)
		if r.HasAudio() {
			ttfp = append(ttfp, r.TTFPS)
			if r.AudioDurationS > 0 {
				rtf = append(rtf, r.RTFLastChunk) // chat: the report's audio_rtf
			}
		}
		if u, ok := r.Underrun(); ok {
			underrun = append(underrun, u)
		}
	})
	seconds := omnimetrics.SecondsBuckets()
	cases := []struct {
		name     string
		metric   string  // report metric
		scale    float64 // report unit per second
		values   []float64
		buckets  []float64
		client   string // PromQL with %v for the quantile
		server   string // "" when the sides measure different things
		serverAt float64
	}{
		{"ttfp", summary.MetricTTFP, 1000, ttfp, seconds,
			`histogram_quantile(%v, sum by (le) (omnibench:audio_ttfp_s_bucket))`,
			`histogram_quantile(%v, sum by (le) (vllm:omni_audio_ttfp_s_bucket))`, ts},
		{"e2e", summary.MetricE2E, 1000, e2e, seconds,
			`histogram_quantile(%v, sum by (le) (increase(omnibench:e2e_request_latency_s_bucket[` + window + `])))`,
			`histogram_quantile(%v, sum by (le) (increase(vllm:omni_e2e_request_latency_s_bucket[` + window + `])))`, ts},
		{"rtf", summary.MetricAudioRTF, 1, rtf, omnimetrics.RTFBuckets(),
			`histogram_quantile(%v, sum by (le) (omnibench:audio_rtf_bucket))`, "", 0},
		{"underrun", summary.MetricUnderrun, 1, underrun, omnimetrics.SecondsFastBuckets(),
			`histogram_quantile(%v, sum by (le) (omnibench:audio_underrun_s_bucket))`, "", 0},
	}
	for _, c := range cases {
		rep, ok := out.Summary.Metric(c.metric)
		if !ok || len(c.values) == 0 {
			t.Errorf("%s: the report has no %s", c.name, c.metric)
			continue
		}
		sorted := slices.Clone(c.values)
		sort.Float64s(sorted)
		for _, pv := range rep.Percentiles {
			if pv.P != 50 && pv.P != 95 {
				continue
			}
			q := pv.P / 100
			lo, hi := bucketSpan(sorted, q, c.buckets)
			report := pv.Value / c.scale
			if report < lo || report > hi {
				t.Errorf("%s p%v: the report's %v is outside the bucket span [%v, %v] of its own samples", c.name, pv.P, report, lo, hi)
			}
			got, err := prom.one(ctx, fmt.Sprintf(c.client, q), tc)
			if err != nil {
				t.Error(err)
				continue
			}
			t.Logf("%s p%v: report %.4g, client histogram_quantile %.4g, bucket span [%v, %v]", c.name, pv.P, report, got, lo, hi)
			if got < lo || got > hi {
				t.Errorf("%s p%v: client histogram_quantile %v outside [%v, %v], the buckets around the report's %v",
					c.name, pv.P, got, lo, hi, report)
			}
			if c.server == "" {
				continue
			}
			// The server's clock starts after the client's and stops before
			// it (arrival after send, record before the bytes travel), so
			// every server sample is at most its client twin: its bucket
			// counts dominate the client's and histogram_quantile, monotone
			// in them, can only be lower. How much lower depends on the
			// machine's load, so only the order is checked.
			clientQ := got
			got, err = prom.one(ctx, fmt.Sprintf(c.server, q), c.serverAt)
			if err != nil {
				t.Error(err)
				continue
			}
			t.Logf("%s p%v: server histogram_quantile %.4g", c.name, pv.P, got)
			if !(got > 0) || got > clientQ+1e-9 {
				t.Errorf("%s p%v: server histogram_quantile %v, want in (0, %v], the client's", c.name, pv.P, got, clientQ)
			}
		}
	}
}

// bucketSpan returns the lower bound of the bucket holding the lowest and
// the upper bound of the bucket holding the highest order statistic that
// the q-quantile estimates use: the report (linear interpolation between
// ranks floor and ceil of q(n-1)) and histogram_quantile (the bucket
// holding rank ceil(qn)). Each estimate lies within that span.
func bucketSpan(sorted []float64, q float64, bounds []float64) (lo, hi float64) {
	n := len(sorted)
	h := q * float64(n-1)
	prom := int(math.Ceil(q*float64(n))) - 1
	iLo := max(min(int(math.Floor(h)), prom), 0)
	iHi := min(max(int(math.Ceil(h)), prom), n-1)
	lo, _ = bucketOf(sorted[iLo], bounds)
	_, hi = bucketOf(sorted[iHi], bounds)
	return lo, hi
}

// bucketOf returns the bounds (lower, upper] of the bucket holding x, as
// histogram_quantile reads them: the first bucket starts at 0, and a value
// above the last bound is reported as the last bound.
func bucketOf(x float64, bounds []float64) (lo, hi float64) {
	for i, b := range bounds {
		if x <= b {
			if i == 0 {
				return 0, b
			}
			return bounds[i-1], b
		}
	}
	last := bounds[len(bounds)-1]
	return last, last
}

// checkDashboard runs every panel query of the dashboard with its variables
// substituted and requires data, and checks that the model_name variable
// lists the run's model.
func checkDashboard(t *testing.T, ctx context.Context, prom *promServer, model string, tc, ts float64) {
	js := dashboards.Omnibench()
	vars, err := dashboards.Variables(js)
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]string{"__rate_interval": rateInterval, "model_name": model}
	for _, v := range vars {
		switch v.Type {
		case "custom":
			values[v.Name] = v.Current
		case "query":
			sel, ok := strings.CutPrefix(v.Query, "label_values(")
			label := ""
			if ok {
				i := strings.LastIndex(sel, ",")
				sel, label = strings.TrimSpace(sel[:max(i, 0)]), strings.TrimSpace(strings.TrimSuffix(sel[i+1:], ")"))
			}
			if !ok || label != v.Name {
				t.Errorf("variable %s: query %q is not label_values(selector, %s)", v.Name, v.Query, v.Name)
				continue
			}
			got, err := prom.labelValues(ctx, label, sel)
			if err != nil {
				t.Error(err)
				continue
			}
			if !slices.Contains(got, model) {
				t.Errorf("variable %s: %s lists %v, not the run's model %q", v.Name, v.Query, got, model)
			}
		}
	}
	qs, err := dashboards.Queries(js)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 10 {
		t.Fatalf("the dashboard has %d queries", len(qs))
	}
	for _, q := range qs {
		expr, err := dashboards.Expand(q.Expr, values)
		if err != nil {
			t.Errorf("panel %q %s: %v", q.Panel, q.RefID, err)
			continue
		}
		at := tc
		if !strings.Contains(expr, omnimetrics.PrefixClient) {
			at = ts // a server query
		}
		res, err := prom.query(ctx, expr, at)
		if err != nil {
			t.Errorf("panel %q %s: %v", q.Panel, q.RefID, err)
			continue
		}
		if !slices.ContainsFunc(res, func(s sample) bool { return !math.IsNaN(s.Value) }) {
			t.Errorf("panel %q %s (%s): no data: %v", q.Panel, q.RefID, expr, res)
		}
	}
}

// checkLint runs `promtool check metrics` over the text exposition at url.
// Every family carries a colon (the mandated prefixes); the design's
// pipeline families also end in "_s". Those two warnings are accepted, and
// only those.
func checkLint(t *testing.T, ctx context.Context, promtool, url, prefix string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(body))
	output, err := cmd.CombinedOutput()
	// Exit status 3 means lint problems, which are judged below; anything
	// else (1: the exposition does not parse) is a failure.
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 3) {
		t.Fatalf("promtool check metrics < %s: %v\n%s", url, err, output)
	}
	design := map[string]bool{}
	for _, s := range omnimetrics.PipelineFamilies() {
		design[prefix+s.Name] = true
		// Python's client writes a `_created` gauge beside each counter
		// and histogram, and so does the simulator with stats off.
		design[prefix+s.Name+"_created"] = true
	}
	sc := bufio.NewScanner(strings.NewReader(string(output)))
	lines := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		lines++
		name, problem, _ := strings.Cut(line, " ")
		switch {
		case problem == "metric names should not contain ':'" && strings.Contains(name, ":"):
		case problem == "metric names should not contain abbreviated units" && design[name]:
		default:
			t.Errorf("promtool check metrics < %s: %s", url, line)
		}
	}
	if lines == 0 {
		t.Errorf("promtool check metrics < %s reported nothing; expected the colon warnings (is the exposition empty?)", url)
	}
}

// logScrapeHealth logs how each target's scrapes went, for reading a failure.
func logScrapeHealth(t *testing.T, ctx context.Context, prom *promServer) {
	t.Helper()
	for _, expr := range []string{
		"sum by (job) (count_over_time(up[" + window + "]))",
		"sum by (job) (sum_over_time(up[" + window + "]))",
		"max by (job) (max_over_time(scrape_duration_seconds[" + window + "]))",
	} {
		res, err := prom.query(ctx, expr, 0)
		if err != nil {
			t.Logf("%s: %v", expr, err)
			continue
		}
		for _, r := range res {
			t.Logf("%s{job=%q} = %v", expr, r.Metric["job"], r.Value)
		}
	}
}
