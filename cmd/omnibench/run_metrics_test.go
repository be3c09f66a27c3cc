package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/spf13/pflag"
)

// fakeGateway records what is pushed to it and answers with status.
type fakeGateway struct {
	status int
	mu     sync.Mutex
	paths  []string
	bodies [][]byte
}

func (g *fakeGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.paths = append(g.paths, r.Method+" "+r.URL.Path)
	g.bodies = append(g.bodies, body)
	g.mu.Unlock()
	w.WriteHeader(g.status)
}

// runRunCmd runs `omnibench run` with args and returns stdout, stderr and
// the command's error.
func runRunCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cmd := newRunCmd(nil)
	var out, errb bytes.Buffer
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func TestRunExportsMetrics(t *testing.T) {
	gw := &fakeGateway{status: http.StatusOK}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	dir := t.TempDir()
	prom := filepath.Join(dir, "omnibench.prom")
	results := filepath.Join(dir, "run.jsonl")
	pushURL := strings.Replace(srv.URL, "http://", "http://ci:hunter2@", 1)
	stdout, stderr, err := runRunCmd(t, "-n", "4", "-c", "4", "--warmup", "0", "--scrape", "off", "--format", "json",
		"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "0",
		"--metrics-out", prom, "--out", results,
		"--push", pushURL, "--push-job", "bench", "--push-label", "run=7")
	if err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr)
	}
	if !strings.Contains(stdout, "{") {
		t.Errorf("no report on stdout: %q", stdout)
	}
	if !strings.Contains(stderr, "serving client metrics at http://127.0.0.1:") {
		t.Errorf("stderr does not say where the metrics are served:\n%s", stderr)
	}

	f, err := os.Open(prom)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(f)
	if err != nil {
		t.Fatalf("%s: %v", prom, err)
	}
	var finished float64
	for _, m := range fams["omnibench:requests_success_total"].GetMetric() {
		finished += m.GetCounter().GetValue()
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["scenario"] != "chat-voice" || labels["endpoint"] != "/v1/chat/completions" || labels["model_name"] == "" {
			t.Errorf("series labels %v lack the run identity", labels)
		}
	}
	if finished != 4 {
		t.Errorf("%s: requests_success_total sums to %v, want 4", prom, finished)
	}

	if len(gw.paths) != 1 || gw.paths[0] != "PUT /metrics/job/bench/run/7" || !bytes.Contains(gw.bodies[0], []byte("omnibench:requests_success_total")) {
		t.Errorf("pushes %v, want one PUT to /metrics/job/bench/run/7 carrying the series", gw.paths)
	}
	data, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, []byte("hunter2")) {
		t.Errorf("%s holds the push URL's password", results)
	}
}

func TestRunPushFailureKeepsResults(t *testing.T) {
	gw := &fakeGateway{status: http.StatusInternalServerError}
	srv := httptest.NewServer(gw)
	defer srv.Close()
	prom := filepath.Join(t.TempDir(), "omnibench.prom")
	// The root command, as main runs it: main prints the returned error once.
	stdout, stderr, code, err := execRun(t, "-n", "2", "-c", "2", "--warmup", "0", "--scrape", "off", "--format", "json",
		"--metrics-out", prom, "--push", srv.URL)
	if code != 1 {
		t.Errorf("a failed push exits %d, want 1", code)
	}
	if err == nil || strings.Count(err.Error(), "--push") != 1 || !strings.Contains(err.Error(), "the results were written") {
		t.Errorf("a failed push returned %v, want one error naming --push that says the results were written", err)
	}
	if strings.Contains(stderr, "--push") {
		t.Errorf("the push failure is reported on stderr and again as the error:\n%s", stderr)
	}
	if !strings.Contains(stdout, "{") {
		t.Errorf("no report on stdout after a failed push: %q", stdout)
	}
	if _, err := os.Stat(prom); err != nil {
		t.Errorf("--metrics-out not written after a failed push: %v", err)
	}
}

func TestRunRejectsUnwritableMetricsOut(t *testing.T) {
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "missing", "omnibench.prom"), dir} {
		out := filepath.Join(dir, "run.jsonl")
		_, _, err := runRunCmd(t, "-n", "1", "--metrics-out", path, "--out", out)
		if code := exitCodeTo(t.Context(), io.Discard, err); code != 2 || err == nil || !strings.Contains(err.Error(), "--metrics-out") {
			t.Errorf("--metrics-out %s: exit %d, %v; want exit 2 naming --metrics-out", path, code, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("--metrics-out %s: the run started (results file written) before the path was checked", path)
		}
	}
}

func TestRunRejectsBadPushLabel(t *testing.T) {
	_, _, err := runRunCmd(t, "-n", "1", "--push", "http://127.0.0.1:1", "--push-label", "model_name=x")
	if err == nil || !strings.Contains(err.Error(), "--push-label") {
		t.Errorf("a reserved push label gave %v, want an error naming --push-label before the run", err)
	}
}

func TestPushURLShown(t *testing.T) {
	for in, want := range map[string]string{
		"http://gw:9091":           "http://gw:9091",
		"http://u:secret@gw:9091":  "http://gw:9091",
		"u:secret@gw:9091":         "[redacted]@gw:9091",
		"http://u:sec ret@gw:9091": "[redacted]@gw:9091",
	} {
		if got := flagsWithoutSecrets(pushFlag(t, in))["push"]; got != want {
			t.Errorf("--push %q shown as %q, want %q", in, got, want)
		}
	}
}

// pushFlag is a flag set with --push set to v.
func pushFlag(t *testing.T, v string) *pflag.FlagSet {
	f := pflag.NewFlagSet("run", pflag.ContinueOnError)
	f.String("push", "", "")
	if err := f.Parse([]string{"--push", v}); err != nil {
		t.Fatal(err)
	}
	return f
}
