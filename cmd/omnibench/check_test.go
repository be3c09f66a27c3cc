package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scrape"
)

// runMetricsCmd runs `omnibench args...` on a fresh root and returns stdout,
// stderr and the exit status main would use.
func runMetricsCmd(t *testing.T, args ...string) (string, string, int, error) {
	t.Helper()
	root := newRootCmd("test")
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	code := 0
	var ee *exitError
	switch {
	case errors.As(err, &ee):
		code = ee.code
	case err != nil:
		code = 1
	}
	return out.String(), errOut.String(), code, err
}

func metricsServer(t *testing.T) *httptest.Server {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vllm:omni_audio_frames_total", Help: "Frames."}, []string{"model_name"})
	reg.MustRegister(c)
	c.WithLabelValues("m").Add(42)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{EnableOpenMetrics: true}))
	mux.HandleFunc("/down", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "starting", http.StatusServiceUnavailable) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestScrapeCmd(t *testing.T) {
	srv := metricsServer(t)
	path := filepath.Join(t.TempDir(), "snap.prom")
	_, errOut, code, err := runMetricsCmd(t, "scrape", srv.URL+"/metrics", "-o", path, "--accept", "text")
	if code != 0 {
		t.Fatalf("code %d: %v", code, err)
	}
	if !strings.Contains(errOut, "saved 1 families") {
		t.Errorf("stderr: %q", errOut)
	}
	snap, err := scrape.ReadSnapshot(path)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := snap.Families()
	if err != nil || fs["vllm:omni_audio_frames_total"].Series[0].Value != 42 || snap.URL != srv.URL+"/metrics" {
		t.Errorf("snapshot = %+v, %v", snap, err)
	}

	out, _, code, _ := runMetricsCmd(t, "scrape", srv.URL+"/metrics", "--accept", "text", "--raw")
	if code != 0 || !strings.HasPrefix(out, "# HELP vllm:omni_audio_frames_total") {
		t.Errorf("--raw: code %d, out %q", code, out)
	}

	// The server's refusal to serve its metrics fails the scrape (1), as a
	// server that cannot be reached; it is not the user's input (2).
	_, _, code, err = runMetricsCmd(t, "scrape", srv.URL+"/down")
	if code != 1 || !strings.Contains(err.Error(), "HTTP 503") {
		t.Errorf("503: code %d, err %v", code, err)
	}
	_, _, code, _ = runMetricsCmd(t, "scrape", srv.URL+"/metrics", "--accept", "xml")
	if code != 2 {
		t.Errorf("bad --accept: code %d", code)
	}
}

func TestDiffCmd(t *testing.T) {
	dir := t.TempDir()
	before := "../../scrape/testdata/python.prom"
	body, err := os.ReadFile(before)
	if err != nil {
		t.Fatal(err)
	}
	afterBody := strings.Replace(string(body),
		`vllm:omni_audio_frames_total{model_name="Qwen/Qwen3-Omni",replica="0",stage="2"} 96000.0`,
		`vllm:omni_audio_frames_total{model_name="Qwen/Qwen3-Omni",replica="0",stage="2"} 120000.0`, 1)
	after := filepath.Join(dir, "after.prom")
	if err := os.WriteFile(after, []byte(afterBody), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code, err := runMetricsCmd(t, "diff", before, after)
	if code != 0 || !strings.Contains(out, "vllm:omni_audio_frames_total") || !strings.Contains(out, "24000") {
		t.Errorf("table: code %d, err %v\n%s", code, err, out)
	}
	if strings.Contains(out, "vllm:omni_audio_ttfp_s") {
		t.Errorf("unchanged histogram listed without --all:\n%s", out)
	}
	out, _, code, _ = runMetricsCmd(t, "diff", before, after, "--all", "--format", "markdown")
	if code != 0 || !strings.Contains(out, "vllm:omni_audio_ttfp_s") || !strings.Contains(out, "|") {
		t.Errorf("--all markdown: code %d\n%s", code, out)
	}
	out, _, code, _ = runMetricsCmd(t, "diff", before, after, "--format", "json")
	var doc struct {
		Reset    bool `json:"reset"`
		Families []struct {
			Name   string `json:"name"`
			Series []struct {
				Delta float64 `json:"delta"`
			} `json:"series"`
		} `json:"families"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || len(doc.Families) != 1 || doc.Families[0].Series[0].Delta != 24000 {
		t.Errorf("json: code %d, err %v, doc %+v\n%s", code, err, doc, out)
	}
	_, _, code, err = runMetricsCmd(t, "diff", before, filepath.Join(dir, "missing.prom"))
	if code != 2 || !strings.Contains(err.Error(), "missing.prom") {
		t.Errorf("missing file: code %d, err %v", code, err)
	}
}

func startCheckSimulator(t *testing.T, stats bool) *simulator.Running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	run, err := simulator.Start(ctx, simulator.Config{Addr: "127.0.0.1:0", StatsEnabled: stats})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = run.Close() })
	return run
}

func TestCheckCmd(t *testing.T) {
	on := startCheckSimulator(t, true)
	off := startCheckSimulator(t, false)
	dir := t.TempDir()

	out, _, code, err := runMetricsCmd(t, "check", on.URL+"/metrics")
	if code != 0 || !strings.Contains(out, "rules, 0 failed") || !strings.Contains(out, "server stats on") {
		t.Fatalf("stats on: code %d, err %v\n%s", code, err, out)
	}
	// Declaring the wrong stats setting fails a rule: exit 1.
	junit := filepath.Join(dir, "check.xml")
	out, _, code, err = runMetricsCmd(t, "check", off.URL+"/metrics", "--stats", "on", "--junit", junit, "--failures")
	if code != 1 || !strings.Contains(err.Error(), "1 of") || !strings.Contains(out, "stats on:") || !strings.Contains(out, "upstream") || strings.Contains(out, "PASS ") {
		t.Errorf("stats mismatch: code %d, err %v\n%s", code, err, out)
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Failures int `xml:"failures,attr"`
	}
	if err := xml.Unmarshal(raw, &suites); err != nil || suites.Failures != 1 {
		t.Errorf("junit: %v, failures %d", err, suites.Failures)
	}

	// A snapshot pair with the client's run and a rule file, as JSON.
	beforePath := filepath.Join(dir, "before.prom")
	if _, _, code, err := runMetricsCmd(t, "scrape", on.URL+"/metrics", "-o", beforePath); code != 0 {
		t.Fatal(err)
	}
	runPath := filepath.Join(dir, "run.jsonl")
	f, err := os.Create(runPath)
	if err != nil {
		t.Fatal(err)
	}
	w := results.NewWriter(f)
	if err := w.WriteHeader(results.Header{SchemaVersion: results.SchemaVersion, StartedAt: time.Now().UTC().Format(time.RFC3339)}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	rules := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rules, []byte("rules:\n  - family: requests_success_total\n    expect: \"== run.completed\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code, err = runMetricsCmd(t, "check", beforePath, on.URL+"/metrics", "--run", runPath, "--rules", rules, "--format", "json")
	var doc struct {
		OK      bool `json:"ok"`
		Results []struct {
			Rule     string `json:"rule"`
			Status   string `json:"status"`
			Expected string `json:"expected"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil || !doc.OK || len(doc.Results) != 1 ||
		doc.Results[0].Status != "pass" || doc.Results[0].Expected != "== 0 (run.completed)" {
		t.Errorf("pair + run + rules: code %d, err %v\n%s", code, err, out)
	}

	// Unusable input: exit 2.
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("rules:\n  - family: x\n    exist: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"check", on.URL + "/metrics", "--rules", bad},
		{"check", filepath.Join(dir, "nope.prom")},
		{"check", on.URL + "/metrics", "--profile", "nginx"},
		{"check", on.URL + "/metrics", "--run", filepath.Join(dir, "nope.jsonl")},
		{"check", on.URL + "/metrics", "--stats", "maybe"},
		{"check", on.URL + "/metrics", "--profile", "none"},
		{"check"},
	} {
		if _, _, code, err := runMetricsCmd(t, args...); code != 2 {
			t.Errorf("%v: code %d (%v), want 2", args, code, err)
		}
	}
}

// TestCheckOutputFits: on a healthy simulator, `check` prints its summary
// and its verdict line (PASS) within 100 columns; --verbose lists every rule within 100
// columns too; JSON lists every rule.
func TestCheckOutputFits(t *testing.T) {
	for _, stats := range []bool{true, false} {
		sim := startCheckSimulator(t, stats)
		out, _, code, err := runMetricsCmd(t, "check", sim.URL+"/metrics")
		if code != 0 {
			t.Fatalf("stats %v: code %d, %v\n%s", stats, code, err, out)
		}
		lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
		if len(lines) > 4 || widest(out) > 100 || !strings.HasPrefix(lines[len(lines)-1], "PASS: ") {
			t.Errorf("stats %v: %d lines, widest %d columns:\n%s", stats, len(lines), widest(out), out)
		}
		verbose, _, _, _ := runMetricsCmd(t, "check", sim.URL+"/metrics", "--verbose")
		listed := 0
		for _, l := range strings.Split(verbose, "\n") {
			if strings.HasPrefix(l, "PASS ") || strings.HasPrefix(l, "SKIP ") || strings.HasPrefix(l, "FAIL ") {
				listed++
			}
		}
		if w := widest(verbose); w > 100 || listed < 100 {
			t.Errorf("stats %v: --verbose: %d rules listed, widest %d columns", stats, listed, w)
		}
		js, _, _, _ := runMetricsCmd(t, "check", sim.URL+"/metrics", "--format", "json")
		var doc struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal([]byte(js), &doc); err != nil || len(doc.Results) != listed {
			t.Errorf("stats %v: json lists %d rules (%v), verbose %d", stats, len(doc.Results), err, listed)
		}
	}
}

// TestCheckFormatProfile: `check --profile format FILE` exits 0 on a valid
// exposition and 1 on an invalid one, naming the file's line and token; a
// body that does not parse is a failed rule (exit 1), not unusable input.
func TestCheckFormatProfile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	out, _, code, err := runMetricsCmd(t, "check", "--profile", "format", "../../internal/metrics/check/testdata/format/valid/python-client.om")
	if code != 0 || !strings.HasPrefix(out, "24 rules, 0 failed") {
		t.Errorf("valid OpenMetrics: code %d (%v)\n%s", code, err, out)
	}
	nan := write("nan.prom", "# TYPE c_total counter\nc_total{a=\"1\"} NaN\n")
	out, _, code, _ = runMetricsCmd(t, "check", "--profile", "format", nan)
	if code != 1 || !strings.HasPrefix(out, "FAIL format: counter\n") || !strings.Contains(out, `line      2: c_total{a="1"} NaN`) ||
		!strings.Contains(out, "1 of 19 rules failed") {
		t.Errorf("NaN counter: code %d\n%s", code, out)
	}
	broken := write("broken.prom", "ok 1\nbad{a=\"1\" 2\n")
	out, _, code, _ = runMetricsCmd(t, "check", broken)
	if code != 1 || !strings.Contains(out, "FAIL format: parser") || !strings.Contains(out, "FAIL format: syntax") {
		t.Errorf("unparseable with the vllm-omni profile: code %d\n%s", code, out)
	}
	if _, _, code, _ = runMetricsCmd(t, "check", "--profile", "none", "--rules", write("r.yaml", "rules:\n  - family: ok\n    exists: true\n"), broken); code != 2 {
		t.Errorf("unparseable without format rules: code %d, want 2", code)
	}
	// A bare OpenMetrics file that lost its # EOF is text unless --accept says otherwise.
	om := write("cut.om", "# TYPE g gauge\ng 1\n")
	if _, _, code, _ = runMetricsCmd(t, "check", "--profile", "format", om); code != 0 {
		t.Errorf("as text: code %d", code)
	}
	out, _, code, _ = runMetricsCmd(t, "check", "--profile", "format", "--accept", "openmetrics", om)
	if code != 1 || !strings.Contains(out, "FAIL format: eof") {
		t.Errorf("--accept openmetrics: code %d\n%s", code, out)
	}
	// Protobuf: not applicable, and said so.
	sim := startCheckSimulator(t, true)
	out, _, code, _ = runMetricsCmd(t, "check", "--profile", "format", "--accept", "proto", sim.URL+"/metrics")
	if code != 0 || !strings.Contains(out, "note: format rules not applicable to the protobuf exposition") {
		t.Errorf("protobuf: code %d\n%s", code, out)
	}
}

func widest(s string) int {
	w := 0
	for _, l := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(l))
	}
	return w
}

// TestScrapeFileFormats: scrape writes text to .prom by default, protobuf
// only to .pb (picked by the extension or asked for), and refuses a format
// the extension does not hold.
func TestScrapeFileFormats(t *testing.T) {
	sim := startCheckSimulator(t, true)
	dir := t.TempDir()
	for _, c := range []struct {
		file   string
		args   []string
		code   int
		format string
	}{
		{"a.prom", nil, 0, scrape.FormatText},
		{"b.pb", nil, 0, scrape.FormatProtobuf},
		{"c.om", nil, 0, scrape.FormatOpenMetrics},
		{"d.pb", []string{"--accept", "text"}, 2, ""},
		{"e.prom", []string{"--accept", "proto"}, 2, ""},
		{"f.prom", []string{"--accept", "openmetrics"}, 2, ""},
		{"g.txt", []string{"--accept", "openmetrics"}, 0, scrape.FormatOpenMetrics},
	} {
		path := filepath.Join(dir, c.file)
		_, _, code, err := runMetricsCmd(t, append([]string{"scrape", sim.URL + "/metrics", "-o", path}, c.args...)...)
		if code != c.code {
			t.Errorf("%s %v: code %d (%v), want %d", c.file, c.args, code, err, c.code)
			continue
		}
		if c.code != 0 {
			if _, err := os.Stat(path); err == nil {
				t.Errorf("%s: written although refused", c.file)
			}
			continue
		}
		snap, err := scrape.ReadSnapshot(path)
		if err != nil || snap.Format() != c.format {
			t.Errorf("%s: format %q (%v), want %s", c.file, snap.Format(), err, c.format)
		}
	}
}

// TestScrapeFileReadByPromtool runs `promtool check metrics < file.prom` on
// what scrape saved from the simulator: promtool must parse it (exit 0, or
// 3 for its lint warnings on the vllm:omni_ colon names the design
// mandates), never fail to parse it (exit 1). Without promtool the test is
// skipped, except in CI ($CI set), where it fails.
func TestScrapeFileReadByPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is not on PATH (CI installs Debian's prometheus package, which has it)")
		}
		t.Skip("promtool is not on PATH")
	}
	for _, stats := range []bool{true, false} {
		sim := startCheckSimulator(t, stats)
		path := filepath.Join(t.TempDir(), "metrics.prom")
		if _, _, code, err := runMetricsCmd(t, "scrape", sim.URL+"/metrics", "-o", path); code != 0 {
			t.Fatalf("scrape: %v", err)
		}
		in, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
		cmd.Stdin = in
		out, err := cmd.CombinedOutput()
		cancel()
		in.Close()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if (code != 0 && code != 3) || strings.Contains(string(out), "error while linting") || strings.Contains(string(out), "parsing error") {
			t.Errorf("stats %v: promtool exit %d:\n%s", stats, code, out)
		}
		if code == 3 {
			for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if !strings.Contains(l, "should not contain ':'") && !strings.Contains(l, "abbreviated units") {
					t.Errorf("stats %v: promtool finds more than the mandated names: %s", stats, l)
				}
			}
		}
	}
}

// TestDiffFits: `diff` of two scrapes around real traffic on the simulator
// (stats on: pipeline and upstream families, long label sets) keeps within
// 100 columns, with --buckets --all too, and still names every series.
func TestDiffFits(t *testing.T) {
	sim := startCheckSimulator(t, true)
	dir := t.TempDir()
	before, after := filepath.Join(dir, "before.prom"), filepath.Join(dir, "after.prom")
	if _, _, code, err := runMetricsCmd(t, "scrape", sim.URL+"/metrics", "-o", before); code != 0 {
		t.Fatal(err)
	}
	if _, _, code, err := runMetricsCmd(t, "run", "--url", sim.URL, "-n", "3", "-c", "3", "--scrape", "off"); code != 0 {
		t.Fatalf("run: code %d, %v", code, err)
	}
	if _, _, code, err := runMetricsCmd(t, "scrape", sim.URL+"/metrics", "-o", after); code != 0 {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"--buckets", "--all"}} {
		out, _, code, err := runMetricsCmd(t, append([]string{"diff", before, after}, args...)...)
		if code != 0 {
			t.Fatalf("diff %v: code %d, %v", args, code, err)
		}
		if w := widest(out); w > 100 {
			t.Errorf("diff %v: widest line %d columns:\n%s", args, w, out)
		}
		// The runtime families (http_*, process_*) carry no model_name, so
		// the series keep it, wrapped within the width.
		for _, want := range []string{`http_requests_total{handler="/v1/chat/completions",method="POST",status="2xx"}`,
			`vllm:omni_transfer_size_bytes{from_replica="0",from_stage="0",`, `vllm:omni_requests_success_total{finished_reason="stop",`} {
			if !strings.Contains(out, want) {
				t.Errorf("diff %v: no %q in\n%s", args, want, out)
			}
		}
	}
}
