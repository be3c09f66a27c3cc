package main

// Tests of run's verdicts: a run that measured nothing exits 1 with its
// reason, a failure rate above --max-error-rate exits 3, and the error set
// reaches every report format. Every server is a real loopback server.

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/omnibench/omnibench/internal/simulator"
)

// modelNotFound answers every completion request as vLLM does for a model it
// does not serve, and lists what it serves on /v1/models.
func modelNotFound(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"object":"list","data":[{"id":"served-model-a","object":"model"},{"id":"served-model-b","object":"model"}]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprint(w, `{"object":"error","message":"The model `+"`nope`"+` does not exist.","type":"NotFoundError","param":null,"code":404}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunNothingMeasuredModelNotFound(t *testing.T) {
	t.Parallel()
	srv := modelNotFound(t)
	dir := t.TempDir()
	sum, html := filepath.Join(dir, "run.json"), filepath.Join(dir, "run.html")
	stdout, stderr, code, err := execRun(t, "--url", srv.URL, "--no-probe", "--model", "nope", "-n", "5", "-c", "2", "--warmup", "0",
		"--scrape", "off", "--format", "markdown", "--summary", sum, "--html", html)
	if code != 1 {
		t.Fatalf("exit %d (%v), want 1: nothing was measured\nstderr:\n%s", code, err, stderr)
	}
	stderr += fmt.Sprint(err) // what main prints last
	for _, want := range []string{"nothing was measured", "5× http_status: HTTP 404: The model `nope` does not exist.", "first req-000000"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	// Markdown: the error table, one row.
	if !strings.Contains(stdout, "### Errors") || !strings.Contains(stdout, "| 5 ") || !strings.Contains(stdout, "The model `nope` does not exist.") {
		t.Errorf("markdown report has no error set:\n%s", stdout)
	}
	// JSON document: the error set and the failure.
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeRunDocument(t, sum, data)
	if !strings.HasPrefix(doc.Failure, "nothing was measured") || len(doc.Summary.Errors) != 1 {
		t.Fatalf("document failure %q, errors %+v", doc.Failure, doc.Summary.Errors)
	}
	if g := doc.Summary.Errors[0]; g.Count != 5 || g.Status != 404 || g.Class != "http_status" || g.FirstID != "req-000000" {
		t.Errorf("error group %+v", g)
	}
	// HTML: the failure banner comes first.
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	banner := strings.Index(string(page), `class="alert"`)
	if banner < 0 || banner > strings.Index(string(page), "<h2>Summary</h2>") || !strings.Contains(string(page), "Run failed: nothing was measured") {
		t.Errorf("HTML report has no failure banner before the summary")
	}
}

func TestRunNothingMeasuredConnectionRefused(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, stderr, code, err := execRun(t, "--url", "http://"+addr, "--no-probe", "-n", "3", "-c", "1", "--warmup", "0", "--scrape", "off")
	if code != 1 {
		t.Fatalf("exit %d (%v), want 1\nstderr:\n%s", code, err, stderr)
	}
	stderr += fmt.Sprint(err)
	if !strings.Contains(stderr, "nothing was measured") || !strings.Contains(stderr, "3× connect:") || !strings.Contains(stderr, "connection refused") {
		t.Errorf("stderr does not give the reason:\n%s", stderr)
	}
}

// failingSimulator serves the simulator's handler, except that it answers
// chat requests number 0, 1, 2 of every 5 (60%) with a 503 of its own.
func failingSimulator(t *testing.T) *httptest.Server {
	t.Helper()
	sim, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	h := sim.Handler()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/chat/") && (n.Add(1)-1)%5 < 3 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `{"error":{"message":"overloaded, try again","type":"ServiceUnavailable"}}`)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestRunErrorRateAboveMaxExits3(t *testing.T) {
	t.Parallel()
	srv := failingSimulator(t)
	stdout, stderr, code, err := execRun(t, "--url", srv.URL, "-n", "10", "-c", "1", "--warmup", "0", "--scrape", "off", "--format", "json")
	if code != 3 {
		t.Fatalf("exit %d (%v), want 3: 60%% failed, above the default --max-error-rate 0.5\nstderr:\n%s", code, err, stderr)
	}
	if !strings.Contains(fmt.Sprint(err), "SLO error_rate<=0.5: error_rate = 0.6") || !strings.Contains(stderr, "6× http_status: HTTP 503: overloaded, try again") {
		t.Errorf("error %v, stderr:\n%s", err, stderr)
	}
	var doc struct {
		Summary struct {
			Requests struct {
				ErrorRate float64 `json:"error_rate"`
			} `json:"requests"`
		} `json:"summary"`
		SLOs []struct {
			Pass bool `json:"pass"`
		} `json:"slos"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("stdout: %v\n%s", err, stdout)
	}
	if doc.Summary.Requests.ErrorRate != 0.6 || len(doc.SLOs) != 1 || doc.SLOs[0].Pass {
		t.Errorf("document: error rate %v, slos %+v", doc.Summary.Requests.ErrorRate, doc.SLOs)
	}

	// The same run passes with the gate raised, and with the gate off.
	for _, limit := range []string{"0.6", "1"} {
		if _, stderr, code, err := execRun(t, "--url", srv.URL, "-n", "10", "-c", "1", "--warmup", "0", "--scrape", "off", "--max-error-rate", limit); code != 0 {
			t.Errorf("--max-error-rate %s: exit %d (%v)\n%s", limit, code, err, stderr)
		}
	}
	// As an SLO figure, a stricter limit.
	if _, stderr, code, _ := execRun(t, "--url", srv.URL, "-n", "5", "-c", "1", "--warmup", "0", "--scrape", "off", "--max-error-rate", "1", "--slo", "error_rate<=1%"); code != 3 {
		t.Errorf("--slo error_rate<=1%%: exit %d, want 3\n%s", code, stderr)
	}
}

func TestRunMaxErrorRateRejectsBadValues(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"-0.1", "1.5", "NaN", "x"} {
		if _, stderr, code, err := execRun(t, "--max-error-rate", v, "-n", "1"); code != 2 || !strings.Contains(fmt.Sprint(err), "max-error-rate") {
			t.Errorf("--max-error-rate %s: exit %d, want 2 naming the flag\n%s", v, code, stderr)
		}
	}
}

func TestRunHintModelNotServed(t *testing.T) {
	t.Parallel()
	srv := modelNotFound(t)
	_, stderr, code, _ := execRun(t, "--url", srv.URL, "--no-probe", "--model", "nope", "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "off")
	if code != 1 {
		t.Fatalf("exit %d, want 1", code)
	}
	if want := `hint: the server does not serve model "nope"; GET /v1/models lists "served-model-a", "served-model-b"`; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}

// A base URL ending in /v1 (as OpenAI clients take it) is stripped, with a
// note; the run then reaches the right paths and the right /metrics.
func TestRunURLEndingInV1(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	stdout, stderr, code, err := execRun(t, "--url", url+"/v1/", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	if !strings.Contains(stderr, "ends in /v1: using "+url) {
		t.Errorf("stderr does not say the /v1 was stripped:\n%s", stderr)
	}
	doc := decodeRunDocument(t, "stdout", []byte(stdout))
	if doc.Summary.Requests.Completed != 2 || doc.Server == nil || doc.Server.MetricsURL != url+"/metrics" || doc.Server.After == nil {
		t.Errorf("completed %d, server %+v: want both requests and /metrics at the root", doc.Summary.Requests.Completed, doc.Server)
	}
}

// The default scenario is chat-voice (modalities text, audio); --kind speech
// must run it as speech, saying what it dropped.
func TestRunKindSpeechOnDefaultScenario(t *testing.T) {
	t.Parallel()
	stdout, stderr, code, err := execRun(t, "--kind", "speech", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0", "--format", "json",
		"--sim-log-stats=false", "--scrape", "off")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	if !strings.Contains(stderr, "--kind speech: dropped the scenario's chat-only field modalities [text, audio]") {
		t.Errorf("stderr does not say what --kind dropped:\n%s", stderr)
	}
	doc := decodeRunDocument(t, "stdout", []byte(stdout))
	if doc.Summary.Requests.Completed != 2 || doc.Summary.Requests.WithAudio != 2 || doc.Summary.Requests.ChatWithAudio != 0 {
		t.Errorf("requests %+v: want two speech responses with audio", doc.Summary.Requests)
	}
}

// -d without -n runs for the whole duration: chat-voice's 40 requests do not
// stop it early. The bound is checked on the load generator's own account
// (a lower bound on elapsed time, never an upper one).
func TestRunDurationAloneRunsTheWholeDuration(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	stdout, stderr, code, err := execRun(t, "--url", url, "-d", "1500ms", "-c", "1", "--warmup", "0", "--scrape", "off", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	doc := decodeRunDocument(t, "stdout", []byte(stdout))
	if doc.Load.Planned != 0 || doc.Load.ElapsedS < 1.5 || doc.Load.Completed == 0 {
		t.Errorf("load %+v: want no count bound and at least 1.5 s of load", doc.Load)
	}
	if strings.Contains(stderr, "count bound") {
		t.Errorf("a duration-only run says a count bound stopped it:\n%s", stderr)
	}
}

// -n 0 is no count bound: an open loop at a constant 20/s for 1.5 s issues
// exactly 30 arrivals (offsets 0, 0.05, ..., 1.45 s), not the scenario's 40
// or the default 20. -n 0 alone has no bound at all and is refused.
func TestRunRequestsZeroIsNoCountBound(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	stdout, stderr, code, err := execRun(t, "--url", url, "-n", "0", "-d", "1500ms", "--rate", "20", "--arrival", "constant",
		"--warmup", "0", "--scrape", "off", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	if doc := decodeRunDocument(t, "stdout", []byte(stdout)); doc.Load.Scheduled != 30 || doc.Summary.Requests.Total != 30 {
		t.Errorf("load %+v, requests %+v: want 30 arrivals", doc.Load, doc.Summary.Requests)
	}
	if _, _, code, err := execRun(t, "--url", url, "-n", "0"); code != 2 || !strings.Contains(fmt.Sprint(err), "--duration") {
		t.Errorf("-n 0 without -d: exit %d (%v), want 2 asking for --duration", code, err)
	}
}

func TestRunSaysWhenTheCountBoundStopsBeforeTheDuration(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	stdout, stderr, code, err := execRun(t, "--url", url, "-n", "3", "-d", "10m", "-c", "1", "--warmup", "0", "--scrape", "off")
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	const want = "the count bound (3 requests) stopped the run after"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "before the duration bound 10m0s") {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	if !strings.Contains(stdout, want) {
		t.Errorf("the report's notes lack %q:\n%s", want, stdout)
	}
}

// Against a server with stats off the run says so once instead of setting
// the server's zeros beside the client's figures; with stats on it compares.
func TestRunAgainstServerWithStatsOff(t *testing.T) {
	t.Parallel()
	off := runSimConfig(t)
	off.StatsEnabled = false
	for _, tc := range []struct {
		name  string
		cfg   simulator.Config
		isOff bool
	}{{"off", off, true}, {"on", runSimConfig(t), false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url := startRunSim(t, tc.cfg)
			stdout, stderr, code, err := execRun(t, "--url", url, "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0")
			if code != 0 {
				t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
			}
			const note = "server stats are off: no server-side figures"
			if got := strings.Count(stderr, note); got != map[bool]int{true: 1, false: 0}[tc.isOff] {
				t.Errorf("stderr says %q %d times:\n%s", note, got, stderr)
			}
			if tc.isOff == strings.Contains(stdout, "Server vs client") || tc.isOff != strings.Contains(stdout, note) {
				t.Errorf("report (stats %s):\n%s", tc.name, stdout)
			}
		})
	}
}

// A login page or a proxy's page where the stream should be: every request
// fails, and the reason says it was HTML (the client's Content-Type check).
func TestRunNothingMeasuredHTMLPage(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<!DOCTYPE html>\n<html><head><title>Sign in</title></head>\n<body><form>...</form></body></html>\n")
	}))
	t.Cleanup(srv.Close)
	_, stderr, code, err := execRun(t, "--url", srv.URL, "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "off")
	reason := fmt.Sprint(err)
	if code != 1 || !strings.Contains(reason, "nothing was measured") || !strings.Contains(reason, "HTML") {
		t.Errorf("exit %d, reason %q: want 1, nothing was measured, saying HTML\n%s", code, reason, stderr)
	}
}
