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
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/scrape"
	"github.com/omnibench/omnibench/simulator"
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

	_, _, code, err = runMetricsCmd(t, "scrape", srv.URL+"/down")
	if code != 2 || !strings.Contains(err.Error(), "HTTP 503") {
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
	if code != 0 || !strings.Contains(out, "PASS: ") || !strings.Contains(out, "Server stats: on") {
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
