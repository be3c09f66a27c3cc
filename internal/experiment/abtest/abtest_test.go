package abtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/client"
	"github.com/omnibench/omnibench/internal/experiment/compare"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/scenarios"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/stats"
)

func TestOrder(t *testing.T) {
	for rounds, want := range map[int]string{
		1: "A B",
		2: "A B B A",
		3: "A B B A A B",
		4: "A B B A A B B A",
	} {
		if got := strings.Join(Order(rounds), " "); got != want {
			t.Errorf("Order(%d) = %s, want %s", rounds, got, want)
		}
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		total, parts int
		want         []int
	}{
		{30, 2, []int{15, 15}},
		{31, 2, []int{16, 15}},
		{30, 4, []int{8, 8, 7, 7}},
		{3, 3, []int{1, 1, 1}},
	} {
		if got := split(tc.total, tc.parts); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("split(%d, %d) = %v, want %v", tc.total, tc.parts, got, tc.want)
		}
	}
}

func TestRoundSeed(t *testing.T) {
	if RoundSeed(42, 0) != 42 {
		t.Errorf("round 0 must use the run's seed, got %d", RoundSeed(42, 0))
	}
	seen := map[int64]bool{}
	for _, seed := range []int64{1, 2, 42} {
		for r := 0; r < 8; r++ {
			s := RoundSeed(seed, r)
			if s != RoundSeed(seed, r) {
				t.Fatalf("RoundSeed(%d, %d) is not deterministic", seed, r)
			}
			if seen[s] {
				t.Errorf("RoundSeed(%d, %d) = %d repeats an earlier seed", seed, r, s)
			}
			seen[s] = true
		}
	}
}

// rec is a successful measured request without audio.
func rec(seq int, e2e float64) results.Record {
	return results.Record{Seq: seq, Kind: results.KindSpeech, E2ES: e2e}
}

// addRecord keeps r in the arm as a run does.
func addRecord(a *ArmResult, r results.Record) { a.kept.add(Metrics(), &r) }

// TestAnalyseHandComputed checks the statistics plumbing against values
// computed by hand (and with scipy.stats.ttest_ind(a, b, equal_var=False)):
// A = 1..5 s, B = 6..10 s: means 3 and 8, both variances 2.5, SE 1,
// t = -5, df = 8, p = 0.001052; delta +166.67 %.
func TestAnalyseHandComputed(t *testing.T) {
	a := &ArmResult{Name: "A", Label: "a"}
	b := &ArmResult{Name: "B", Label: "b"}
	for i, v := range []float64{1, 2, 3, 4, 5} {
		addRecord(a, rec(i, v))
		addRecord(b, rec(i, v+5))
	}
	// A warm-up and a failure are counted and left out.
	addRecord(a, results.Record{Seq: 9, Warmup: true, E2ES: 100})
	addRecord(b, results.Record{Seq: 9, E2ES: 100, ErrorClass: results.ErrConnect, Error: "refused"})
	res := &Result{A: a, B: b, Alpha: 0.05, Power: 0.8}
	analyse(res, stats.Options{Alpha: 0.05, Power: 0.8, Percentiles: []float64{50, 95}}, nil)

	if a.Used != 5 || a.Warmup != 1 || b.Used != 5 || b.Failed != 1 || b.Requests != 6 || b.FirstError != "connect: refused" {
		t.Errorf("counts: A used %d warm-up %d; B used %d failed %d requests %d first error %q", a.Used, a.Warmup, b.Used, b.Failed, b.Requests, b.FirstError)
	}
	if len(res.Metrics) != 1 || res.Metrics[0].Metric.Name != "e2e" {
		t.Fatalf("metrics %+v, want e2e only (no audio)", res.Metrics)
	}
	m := res.Metrics[0]
	c := m.Comparison
	near := func(name string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("t", c.Welch.T, -5, 1e-12)
	near("df", c.Welch.DF, 8, 1e-12)
	near("p", c.Welch.P, 0.001052, 1e-6)
	near("delta %", c.DeltaPct, 500.0/3, 1e-9)
	near("holm p (one test)", m.HolmP, c.Welch.P, 0)
	p95, _ := m.A.Percentile(95)
	near("A p95", p95, 4.8, 1e-12) // numpy: 1 + 0.95*4
	if !m.Significant || !res.Significant {
		t.Error("not significant")
	}
	if want := "B slower by 166.7% (holm p=0.001)"; m.Verdict != want {
		t.Errorf("verdict %q, want %q", m.Verdict, want)
	}
	if want := "e2e: B slower by 166.7% (holm p=0.001)"; res.Verdict != want {
		t.Errorf("overall verdict %q, want %q", res.Verdict, want)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "B: 1 of 6 measured requests failed") {
		t.Errorf("warnings %q", res.Warnings)
	}

	// B 0.5 s slower: t = -0.5, df = 8, p = 0.6305: not significant.
	b = &ArmResult{Name: "B", Label: "b"}
	for i, v := range []float64{1, 2, 3, 4, 5} {
		addRecord(b, rec(i, v+0.5))
	}
	res = &Result{A: a, B: b, Alpha: 0.05, Power: 0.8}
	analyse(res, stats.Options{Alpha: 0.05, Power: 0.8}, nil)
	near("p", res.Metrics[0].Comparison.Welch.P, 0.6305, 1e-4)
	if res.Significant || res.Verdict != "no significant difference at alpha 0.05 (e2e)" {
		t.Errorf("verdict %q (significant %v)", res.Verdict, res.Significant)
	}
}

// TestAnalyseAudioMetrics checks which RTF each kind contributes and that
// Holm runs over the three metrics.
func TestAnalyseAudioMetrics(t *testing.T) {
	mk := func(kind string, seq int, e2e, ttfp, rtfLast, rtfE2E float64) results.Record {
		return results.Record{Seq: seq, Kind: kind, E2ES: e2e, TTFPS: ttfp, AudioBytes: 4800, AudioDurationS: 0.1,
			RTFLastChunk: rtfLast, RTFE2E: rtfE2E}
	}
	a := &ArmResult{Name: "A"}
	b := &ArmResult{Name: "B"}
	for i := 0; i < 4; i++ {
		f := float64(i)
		addRecord(a, mk(results.KindChat, i, 1+f, 0.1+f/100, 0.5+f/10, 9))
		addRecord(b, mk(results.KindSpeech, i, 1+f, 0.1+f/100, 9, 0.5+f/10))
	}
	res := &Result{A: a, B: b, Alpha: 0.05}
	analyse(res, stats.Options{Alpha: 0.05}, nil)
	if len(res.Metrics) != 3 {
		t.Fatalf("%d metrics, want e2e, ttfp, audio_rtf", len(res.Metrics))
	}
	rtf := res.Metrics[2]
	if rtf.Metric.Name != "audio_rtf" || rtf.A.Mean != 0.65 || rtf.B.Mean != 0.65 {
		t.Errorf("audio_rtf: %s A mean %v B mean %v, want 0.65 both (chat: last chunk, speech: e2e)", rtf.Metric.Name, rtf.A.Mean, rtf.B.Mean)
	}
	for _, m := range res.Metrics {
		if !m.Tested || m.HolmP != 1 || m.Significant {
			t.Errorf("%s: identical arms: tested %v holm p %v significant %v", m.Metric.Name, m.Tested, m.HolmP, m.Significant)
		}
	}
}

func TestAnalyseTooFewSamples(t *testing.T) {
	a, b := &ArmResult{Name: "A"}, &ArmResult{Name: "B"}
	addRecord(a, rec(0, 1))
	addRecord(b, rec(0, 1))
	addRecord(b, rec(1, 2))
	res := &Result{A: a, B: b, Alpha: 0.05}
	analyse(res, stats.Options{Alpha: 0.05}, nil)
	if res.Metrics[0].Tested || res.Verdict != "not tested: too few successful requests" {
		t.Errorf("tested %v verdict %q", res.Metrics[0].Tested, res.Verdict)
	}
	if !strings.Contains(strings.Join(res.Metrics[0].Warnings, ";"), "A has 1 and B 2 samples") {
		t.Errorf("warnings %q", res.Metrics[0].Warnings)
	}
}

// exposition is a small text exposition counted by hand: 20 lines; four
// families (req_created is the Python `_created` companion of req_total);
// series: 2 counter + (3 buckets + sum + count) + 0 + 1 gauge + 2 created
// = 10; one empty family; one pipeline and one upstream family.
const exposition = `# HELP req_total Requests.
# TYPE req_total counter
req_total{code="200"} 3
req_total{code="500"} 1
# HELP req_created Requests.
# TYPE req_created gauge
req_created{code="200"} 1.7e+09
req_created{code="500"} 1.7e+09
# HELP lat_seconds Latency.
# TYPE lat_seconds histogram
lat_seconds_bucket{le="0.1"} 1
lat_seconds_bucket{le="1"} 2
lat_seconds_bucket{le="+Inf"} 3
lat_seconds_sum 2.5
lat_seconds_count 3
# HELP vllm_omni:audio_ttfp_s TTFP.
# TYPE vllm_omni:audio_ttfp_s histogram
# HELP vllm:num_requests_running Running.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine="0"} 0
`

func TestMeasureMetrics(t *testing.T) {
	snap := &scrape.Snapshot{URL: "http://127.0.0.1:1/metrics", ContentType: "text/plain; version=0.0.4; charset=utf-8", Body: []byte(exposition)}
	m, err := MeasureMetrics(snap)
	if err != nil {
		t.Fatal(err)
	}
	want := MetricsSize{
		URL: snap.URL, Format: snap.ContentType, Bytes: len(exposition), Lines: 20, Families: 4, Series: 10,
		EmptyFamilies: []string{"vllm_omni:audio_ttfp_s"}, PipelineFamilies: 1, UpstreamFamilies: 1,
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
	if countLines([]byte("a\nb")) != 2 || countLines(nil) != 0 || countLines([]byte("a\n")) != 1 {
		t.Error("countLines")
	}
}

func testWorkload(t *testing.T, name string) *scenarios.Workload {
	t.Helper()
	sc, err := scenarios.Get(name)
	if err != nil {
		t.Fatal(err)
	}
	wl, err := sc.Workload()
	if err != nil {
		t.Fatal(err)
	}
	return wl
}

// testConfig is a small A/B run: n requests per arm in rounds rounds,
// one warm-up per round, sequential.
func testConfig(t *testing.T, a, b Arm, n, rounds int) Config {
	return Config{
		A: a, B: b, Rounds: rounds,
		Run: runner.Config{
			Workload: testWorkload(t, "chat-voice"), Scenario: "chat-voice", Seed: 3,
			Load:   load.Config{Concurrency: 1, Requests: n, Warmup: 1, Grace: 5 * time.Second},
			Client: client.Options{Timeout: 30 * time.Second, IdleTimeout: 10 * time.Second},
			Log:    testLog{t},
		},
		StartupTimeout: 30 * time.Second,
		StopGrace:      5 * time.Second,
		OutDir:         t.TempDir(),
		// These tiny runs test the arms, not the client's health: on a
		// loaded machine or under -race they may count as saturated
		// (TestRunRefusesASaturatedArm tests the refusal).
		AllowSaturated: true,
	}
}

// testLog sends the run's notices to the test log.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// checkRun checks what every complete A/B run of stats on (A) against
// stats off (B) must give.
func checkRun(t *testing.T, res *Result, n, rounds int) {
	t.Helper()
	if res.Verdict == "" || !strings.Contains(res.Verdict, "significant") && !strings.Contains(res.Verdict, "B slower") && !strings.Contains(res.Verdict, "B faster") {
		t.Errorf("verdict %q", res.Verdict)
	}
	if res.Interrupted {
		t.Error("interrupted")
	}
	for _, a := range []*ArmResult{res.A, res.B} {
		if a.Used != n || a.Failed != 0 || a.Warmup != rounds || a.Rounds != rounds {
			t.Errorf("arm %s: used %d failed %d warm-up %d rounds %d, want %d, 0, %d, %d (first error %q)",
				a.Name, a.Used, a.Failed, a.Warmup, a.Rounds, n, rounds, rounds, a.FirstError)
		}
		if a.Metrics == nil || a.Metrics.Error != "" {
			t.Fatalf("arm %s: metrics %+v", a.Name, a.Metrics)
		}
	}
	names := []string{}
	for _, m := range res.Metrics {
		names = append(names, m.Metric.Name)
		if !m.Tested || m.A.N != n || m.B.N != n || m.Verdict == "" {
			t.Errorf("%s: tested %v n %d/%d verdict %q", m.Metric.Name, m.Tested, m.A.N, m.B.N, m.Verdict)
		}
	}
	if got := strings.Join(names, ","); got != "e2e,ttfp,audio_rtf" {
		t.Errorf("metrics %s", got)
	}
	ma, mb := res.A.Metrics, res.B.Metrics
	if !(mb.Lines < ma.Lines) || !(mb.Series < ma.Series) {
		t.Errorf("/metrics: stats off has %d lines, %d series; stats on %d, %d: off must be smaller", mb.Lines, mb.Series, ma.Lines, ma.Series)
	}
	if ma.UpstreamFamilies == 0 || mb.UpstreamFamilies != 0 {
		t.Errorf("upstream vllm: families: on %d, off %d; want some with stats on, none with stats off", ma.UpstreamFamilies, mb.UpstreamFamilies)
	}
	if len(mb.EmptyFamilies) <= len(ma.EmptyFamilies) || ma.PipelineFamilies != mb.PipelineFamilies {
		t.Errorf("empty families: on %d, off %d; pipeline families on %d, off %d", len(ma.EmptyFamilies), len(mb.EmptyFamilies), ma.PipelineFamilies, mb.PipelineFamilies)
	}
}

// checkFiles checks the --out directory: both arms' JSONL files, readable
// like any run (so compare can re-analyse them), the snapshots and ab.json.
func checkFiles(t *testing.T, dir string, res *Result, n, rounds int) {
	t.Helper()
	var durations [2]map[int]float64
	for i, a := range []*ArmResult{res.A, res.B} {
		h, recs, err := results.ReadFile(filepath.Join(dir, resultsFile(a.Name)))
		if err != nil {
			t.Fatal(err)
		}
		if h.Flags["ab-arm"] != a.Name || h.Concurrency != 1 || h.Seed != 3 || h.Scenario != "chat-voice" {
			t.Errorf("%s header %+v", a.Name, h)
		}
		if h.Client == nil || !reflect.DeepEqual(*h.Client, *a.Client) {
			t.Errorf("%s: the results file's client line %+v, the arm's verdict %+v", a.Name, h.Client, a.Client)
		}
		if len(recs) != n+rounds {
			t.Fatalf("%s: %d records, want %d", a.Name, len(recs), n+rounds)
		}
		durations[i] = map[int]float64{}
		for _, r := range recs {
			if _, dup := durations[i][r.Seq]; dup {
				t.Errorf("%s: seq %d repeats: rounds must be numbered on", a.Name, r.Seq)
			}
			durations[i][r.Seq] = r.AudioDurationS
		}
		if _, err := scrape.ReadSnapshot(filepath.Join(dir, metricsFile(a.Name))); err != nil {
			t.Errorf("%s snapshot: %v", a.Name, err)
		}
	}
	// Same seeded workload: the simulator's audio length follows the
	// prompt (and the seed, equal in both), so equal lengths per sequence
	// number mean both arms got the same prompts in the same order.
	if !reflect.DeepEqual(durations[0], durations[1]) {
		t.Errorf("audio durations by seq differ between arms:\nA %v\nB %v", durations[0], durations[1])
	}
	data, err := os.ReadFile(filepath.Join(dir, ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		SchemaVersion int    `json:"schema_version"`
		Verdict       string `json:"verdict"`
		A, B          struct {
			Metrics struct {
				Lines int `json:"lines"`
			} `json:"metrics"`
		}
		Metrics []struct {
			Metric string `json:"metric"`
			Welch  *struct {
				T  *float64 `json:"t"`
				DF *float64 `json:"df"`
			} `json:"welch"`
		} `json:"metrics"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.SchemaVersion != 1 || doc.Verdict != res.Verdict || doc.A.Metrics.Lines != res.A.Metrics.Lines || len(doc.Metrics) != 3 || doc.Metrics[0].Welch == nil {
		t.Errorf("ab.json: %s", data)
	}
}

func TestRunEmbeddedSimulator(t *testing.T) {
	const n, rounds = 6, 2
	a, b := SimulatorArms(fastSimulator(true))
	cfg := testConfig(t, a, b, n, rounds)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res, n, rounds)
	checkFiles(t, cfg.OutDir, res, n, rounds)
	if res.A.Kind != "simulator" || res.A.ServerStarts != 0 || res.LogDir != cfg.OutDir {
		t.Errorf("arm A kind %s starts %d, log dir %q", res.A.Kind, res.A.ServerStarts, res.LogDir)
	}
	for _, format := range Formats() {
		var buf bytes.Buffer
		if err := res.Write(&buf, format); err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		for _, want := range []string{res.Verdict, "audio_rtf"} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s output lacks %q", format, want)
			}
		}
		if format != report.FormatTable {
			continue
		}
		// The default output fits in 100 columns, says how the utest p was
		// computed, and shows each arm's failures.
		for _, line := range strings.Split(buf.String(), "\n") {
			if n := utf8.RuneCountInString(line); n > 100 {
				t.Errorf("line of %d columns: %s", n, line)
			}
		}
		for _, want := range []string{"utest = Mann-Whitney U test, p exact", "0.0% (0/6)", "stats on (detected: "} {
			if !strings.Contains(buf.String(), want) {
				t.Errorf("table lacks %q:\n%s", want, buf.String())
			}
		}
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, res.HTML()); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ab-cdf-e2e_ms", "ab-cdf-ttfp_ms", "ab-cdf-audio_rtf"} {
		if !strings.Contains(page.String(), id) {
			t.Errorf("HTML report lacks chart %s", id)
		}
	}
}

func TestConfigErrors(t *testing.T) {
	wl := testWorkload(t, "chat-voice")
	good := Arm{URL: "http://127.0.0.1:8000"}
	base := Config{A: good, B: good, Run: runner.Config{Workload: wl, Load: load.Config{Concurrency: 1, Requests: 4}}}
	for _, tc := range []struct {
		name   string
		modify func(*Config)
		want   string
	}{
		{"no server", func(c *Config) { c.A = Arm{} }, "arm A: no server"},
		{"no port", func(c *Config) { c.B = Arm{Cmd: []string{"vllm", "serve", "--api-key", "sk-secret"}} }, "arm B: server command \"vllm serve --api-key [redacted]\": put {port}"},
		{"sim and url", func(c *Config) { s := fastSimulator(true); c.A.Simulator = &s }, "the embedded simulator takes no URL"},
		{"bad url", func(c *Config) { c.B = Arm{URL: "ftp://127.0.0.1:8000"} }, "arm B: server URL \"ftp://127.0.0.1:8000\": want http://host:port"},
		{"rounds", func(c *Config) { c.Rounds = 5 }, "4 requests per arm cannot be split into 5 rounds"},
		{"alpha", func(c *Config) { c.Stats.Alpha = 2 }, "alpha 2 is not in (0, 1)"},
		{"no bound", func(c *Config) { c.Run.Load.Requests = 0 }, "set the requests per arm or a duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.modify(&c)
			_, err := Run(context.Background(), c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "sk-secret") {
				t.Errorf("error leaks the API key: %v", err)
			}
		})
	}
}

// An arm that fails far more often than the other is not a result: no
// latency verdict, ErrArmBroken; with gates, B failing more is a regression.
func TestRunFailingArm(t *testing.T) {
	const n = 20
	faulty := func(stats bool) simulator.Config {
		c := fastSimulator(stats)
		c.Faults.HTTP500 = 0.7
		return c
	}
	t.Run("A fails", func(t *testing.T) {
		a, b := SimulatorArms(fastSimulator(true))
		fa := faulty(true)
		a.Simulator = &fa
		res, err := Run(context.Background(), testConfig(t, a, b, n, 2))
		if !errors.Is(err, ErrArmBroken) {
			t.Fatalf("error %v, want ErrArmBroken", err)
		}
		f := res.Failures
		if f.FailedA < n/2 || f.FailedB != 0 || f.TotalA != n || f.TotalB != n || !(f.P < 0.05) {
			t.Fatalf("failures %+v", f)
		}
		if !strings.HasPrefix(res.Verdict, "no latency verdict: A fails more often than B beyond chance: A ") ||
			strings.Contains(res.Verdict, "no significant difference") || !res.Significant {
			t.Errorf("verdict %q", res.Verdict)
		}
		var buf bytes.Buffer
		if err := res.Write(&buf, "table"); err != nil {
			t.Fatal(err)
		}
		if want := compare.FormatFailures(f.FailedA, f.TotalA); !strings.Contains(buf.String(), want) {
			t.Errorf("table lacks A's failures %q:\n%s", want, buf.String())
		}
	})
	t.Run("B fails, gated", func(t *testing.T) {
		a, b := SimulatorArms(fastSimulator(true))
		fb := faulty(false)
		b.Simulator = &fb
		cfg := testConfig(t, a, b, n, 2)
		cfg.Gates = []compare.Gate{{Metric: "e2e", MaxPct: 1000}}
		res, err := Run(context.Background(), cfg)
		var re *compare.RegressionError
		if !errors.As(err, &re) || len(re.Failed) != 1 || re.Failed[0].Metric != compare.FailureRateGate {
			t.Fatalf("error %v, want the failure-rate gate failed", err)
		}
		if !strings.Contains(res.Verdict, "B fails more often than A beyond chance") {
			t.Errorf("verdict %q", res.Verdict)
		}
	})
}

func TestFormatStatResidue(t *testing.T) {
	for in, want := range map[float64]string{-8.88e-16: "0.000", -0.0004: "0.000", -0.0006: "-0.001", 18: "18.000", math.NaN(): "-"} {
		if got := formatStat(in); got != want {
			t.Errorf("formatStat(%v) = %q, want %q", in, got, want)
		}
	}
}

// The stats claims: which arm is suspected, and an arm whose /metrics could
// not be read is no verification.
func TestVerifyStats(t *testing.T) {
	arm := func(name string, claim StatsClaim, shown *ArmStats) *armState {
		return &armState{name: name, spec: Arm{Stats: claim}, stats: shown}
	}
	on := func(name string, claim StatsClaim) *ArmStats {
		return &ArmStats{Arm: name, Claim: claim, On: true, How: "on (detected: 3 upstream vllm:* families)"}
	}
	off := func(name string, claim StatsClaim) *ArmStats {
		return &ArmStats{Arm: name, Claim: claim, How: "off (detected: no upstream vllm:* family, no pipeline data)"}
	}
	for _, tc := range []struct {
		name    string
		a, b    *armState
		suspect string // "-" for no error
		want    string
	}{
		{"as claimed", arm("A", StatsOn, on("A", StatsOn)), arm("B", StatsOff, off("B", StatsOff)), "-", ""},
		{"B not observed yet", arm("A", StatsOn, off("A", StatsOn)), arm("B", StatsOff, nil), "-", ""},
		{"both off", arm("A", StatsOn, off("A", StatsOn)), arm("B", StatsOff, off("B", StatsOff)), "A", "arm A's stats-on argument(s)"},
		{"both on", arm("A", StatsOn, on("A", StatsOn)), arm("B", StatsOff, on("B", StatsOff)), "B", "arm B's stats-off argument(s)"},
		{"swapped", arm("A", StatsOn, off("A", StatsOn)), arm("B", StatsOff, on("B", StatsOff)), "both", "look swapped"},
		{"unreadable", arm("A", StatsOn, &ArmStats{Arm: "A", Claim: StatsOn, Err: "GET /metrics: 404 Not Found"}), arm("B", StatsOff, off("B", StatsOff)),
			"", "arm A (claimed stats on, with no argument) showed nothing: GET /metrics: 404 Not Found"},
		{"no claims", arm("A", StatsUnclaimed, nil), arm("B", StatsUnclaimed, nil), "-", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifyStats([2]*armState{tc.a, tc.b})
			if tc.suspect == "-" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			var me *StatsMismatchError
			if !errors.As(err, &me) || !errors.Is(err, ErrStatsMismatch) {
				t.Fatalf("error %v, want a StatsMismatchError", err)
			}
			if me.Suspect != tc.suspect || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v (suspect %q), want suspect %q and %q", err, me.Suspect, tc.suspect, tc.want)
			}
		})
	}
}

// A B that only fails, gated: the failure-rate gate (exit 3), not "no
// samples".
func TestRunCandidateOnlyFails(t *testing.T) {
	a, b := SimulatorArms(fastSimulator(true))
	fb := fastSimulator(false)
	fb.Faults.HTTP500 = 1
	b.Simulator = &fb
	cfg := testConfig(t, a, b, 6, 2)
	cfg.Gates = []compare.Gate{{Metric: "e2e", MaxPct: 50}}
	res, err := Run(context.Background(), cfg)
	var re *compare.RegressionError
	if !errors.As(err, &re) || errors.Is(err, ErrNoSamples) {
		t.Fatalf("error %v, want a regression", err)
	}
	if res.B.Used != 0 || res.B.Failed != 6 || !strings.Contains(res.Verdict, "B fails more often") {
		t.Errorf("B used %d failed %d, verdict %q", res.B.Used, res.B.Failed, res.Verdict)
	}
	cfg.Gates = nil
	cfg.OutDir = t.TempDir()
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrNoSamples) {
		t.Errorf("ungated: error %v, want ErrNoSamples", err)
	}
}

func TestRunRefusesASaturatedArm(t *testing.T) {
	const n, rounds = 4, 1
	a, b := SimulatorArms(fastSimulator(true))
	cfg := testConfig(t, a, b, n, rounds)
	cfg.AllowSaturated = false
	// Thresholds every run exceeds: the client counts as saturated.
	cfg.Run.SelfMon = selfmon.Thresholds{CPUShare: 1e-12, Delay: time.Nanosecond}
	res, err := Run(context.Background(), cfg)
	if !errors.Is(err, compare.ErrSaturated) || !strings.Contains(err.Error(), "arm A") || !strings.Contains(err.Error(), "--allow-saturated") {
		t.Fatalf("err = %v, want a refusal naming arm A", err)
	}
	if res == nil || res.A.Client == nil || !res.A.Client.Saturated || !strings.HasPrefix(res.A.Client.Reasons[0], "round 1: ") {
		t.Fatalf("arm A client %+v", res.A.Client)
	}
	if !strings.Contains(strings.Join(res.Warnings, "\n"), "A: the load generator was saturated") {
		t.Errorf("warnings do not mark arm A: %q", res.Warnings)
	}
	// The refusal is the verdict: no output shows the refused comparison.
	if !strings.HasPrefix(res.Verdict, "no verdict: arm A") || res.Refused == "" || res.Significant {
		t.Errorf("verdict %q, refused %q, significant %v", res.Verdict, res.Refused, res.Significant)
	}
	for _, mr := range res.Metrics {
		if mr.Verdict != noVerdict {
			t.Errorf("%s: verdict %q, want %q", mr.Metric.Name, mr.Verdict, noVerdict)
		}
	}
	var table strings.Builder
	if err := res.Write(&table, "table"); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(table.String(), "no significant difference") || strings.Contains(table.String(), " ~\n") {
		t.Errorf("the table shows the refused verdict:\n%s", table.String())
	}

	cfg = testConfig(t, a, b, n, rounds)
	cfg.Run.SelfMon = selfmon.Thresholds{CPUShare: 1e-12, Delay: time.Nanosecond}
	res, err = Run(context.Background(), cfg)
	if err != nil || res.Verdict == "" {
		t.Fatalf("--allow-saturated: %v, verdict %q", err, res.Verdict)
	}
}

// TestRunWarnsWhenTheDelayIsNotTheClients: a delay over the threshold
// without the client's own CPU over its share (here the simulators run in
// the process and share its cores) is a warning with its cause, not a
// refusal: only a client that is itself the bottleneck voids the verdict.
func TestRunWarnsWhenTheDelayIsNotTheClients(t *testing.T) {
	a, b := SimulatorArms(fastSimulator(true))
	cfg := testConfig(t, a, b, 4, 1)
	cfg.AllowSaturated = false
	// Every run passes a 1 ns delay; no run uses more than all its cores.
	cfg.Run.SelfMon = selfmon.Thresholds{CPUShare: 1, Delay: time.Nanosecond}
	res, err := Run(context.Background(), cfg)
	if err != nil || res.Verdict == "" {
		t.Fatalf("err = %v, verdict %q: want a verdict", err, res.Verdict)
	}
	c := res.A.Client
	if c == nil || c.Saturated || c.Cause == "" || c.Cause == string(selfmon.CauseClientCPU) || !strings.HasSuffix(c.Warning, "(round 1)") {
		t.Fatalf("arm A client %+v: want a warning with a cause other than the client's CPU", c)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "A: "+c.Warning) {
		t.Errorf("warnings %q lack arm A's %q", res.Warnings, c.Warning)
	}
}
