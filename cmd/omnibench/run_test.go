package main

// End-to-end tests of `omnibench run`: the command line in process against a
// simulator on loopback (report formats, output files, flag errors, the API
// key), and the built binary under SIGINT and SIGTERM.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/runner"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scenarios"
)

// runSimConfig is a simulator serving the chat-voice model with millisecond
// timing: a response takes a few tens of milliseconds.
func runSimConfig(t *testing.T) simulator.Config {
	t.Helper()
	sc, err := scenarios.Get("chat-voice")
	if err != nil {
		t.Fatal(err)
	}
	cfg := simulator.DefaultConfig()
	cfg.Addr = "127.0.0.1:0"
	cfg.Model = sc.Model
	cfg.StatsEnabled = true
	cfg.Timing = simulator.Timing{
		TTFT: 2 * time.Millisecond, WordInterval: time.Millisecond, TTFA: 5 * time.Millisecond,
		ChunkAudio: 40 * time.Millisecond, RTF: 0.05, Jitter: 0.1, AudioPerChar: 3 * time.Millisecond,
		MinAudio: 100 * time.Millisecond, MaxAudio: 400 * time.Millisecond,
	}
	return cfg
}

// startRunSim starts a simulator with cfg for one test.
func startRunSim(t *testing.T, cfg simulator.Config) string {
	t.Helper()
	sim, err := simulator.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })
	return sim.URL
}

// execRun runs `omnibench run args...` in process and returns stdout,
// stderr and the process exit status the outcome maps to.
func execRun(t *testing.T, args ...string) (stdout, stderr string, code int, err error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	root := newRootCmd("test")
	var out, errb bytes.Buffer
	root.SetArgs(append([]string{"run"}, args...))
	root.SetOut(&out)
	root.SetErr(&errb)
	err = root.ExecuteContext(ctx)
	if ctx.Err() != nil {
		t.Fatalf("run %q did not finish within a minute", args)
	}
	// The error is returned, not printed on the test's stderr as main
	// would print it on the command's.
	return out.String(), errb.String(), exitCodeTo(ctx, io.Discard, err), err
}

// decodeRunDocument parses a run summary (--summary or --format json).
func decodeRunDocument(t *testing.T, what string, data []byte) runner.Document {
	t.Helper()
	var doc runner.Document
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s is not a run document: %v\n%s", what, err, data)
	}
	if doc.SchemaVersion != results.SchemaVersion || doc.Summary == nil {
		t.Fatalf("%s: schema version %d, summary %v", what, doc.SchemaVersion, doc.Summary)
	}
	return doc
}

func TestRunCmdJSON(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	stdout, stderr, code, err := execRun(t, "--url", url, "-n", "4", "-c", "2", "--format", "json", "--settle", "0")
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	doc := decodeRunDocument(t, "stdout", []byte(stdout))
	if doc.Run.Target != url || doc.Run.Scenario != "chat-voice" || doc.Run.Mode != "closed" || doc.Run.Concurrency != 2 || doc.Interrupted {
		t.Errorf("run %+v, interrupted %v", doc.Run, doc.Interrupted)
	}
	r := doc.Summary.Requests
	if r.Total != 4 || r.Completed != 4 || r.Warmup != 2 {
		t.Errorf("requests %+v: want 4 measured, all completed, 2 warm-up (the scenario's)", r)
	}
	if doc.Load.Started != 4 || doc.Load.WarmupStarted != 2 {
		t.Errorf("load %+v", doc.Load)
	}
	if doc.Bench["completed"] != 4 {
		t.Errorf("bench completed %v, want 4", doc.Bench["completed"])
	}
	if doc.Server == nil || doc.Server.Before == nil || doc.Server.After == nil || len(doc.Server.ServerVsClient) == 0 {
		t.Fatalf("server section %+v: want both snapshots and the comparison", doc.Server)
	}
	for _, c := range doc.Server.ServerVsClient {
		if c.Figure == "requests completed" && (c.Server == nil || *c.Server != 6 || c.Client == nil || *c.Client != 6) {
			t.Errorf("requests completed: server %v, client %v, want 6 each (warm-up included)", c.Server, c.Client)
		}
	}
}

func TestRunCmdFormats(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	for _, tc := range []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"table", func(t *testing.T, out string) {
			if !regexp.MustCompile(`\nsent \(measured\) +3\n`).MatchString(out) || !strings.Contains(out, "Server vs client") {
				t.Errorf("table report:\n%s", out)
			}
		}},
		{"markdown", func(t *testing.T, out string) {
			if !strings.Contains(out, "### Requests") || !regexp.MustCompile(`\| sent \(measured\) +\| 3 +\|`).MatchString(out) || !strings.Contains(out, "|:---") {
				t.Errorf("markdown report:\n%s", out)
			}
		}},
		{"csv", func(t *testing.T, out string) {
			rd := csv.NewReader(strings.NewReader(out))
			rows, err := rd.ReadAll() // tidy: every record has the header's four fields
			if err != nil {
				t.Fatalf("csv report: %v\n%s", err, out)
			}
			found := false
			for _, r := range rows {
				found = found || (r[0] == "Requests" && r[1] == "sent (measured)" && r[2] == "count" && r[3] == "3")
			}
			if len(rows) == 0 || strings.Join(rows[0], ",") != "table,row,column,value" || !found {
				t.Errorf("csv report: want header table,row,column,value and a row \"Requests,sent (measured),count,3\":\n%s", out)
			}
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code, err := execRun(t, "--url", url, "-n", "3", "-c", "3", "--warmup", "0", "--format", tc.format, "--settle", "0")
			if code != 0 {
				t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
			}
			tc.check(t, stdout)
		})
	}
}

func TestRunCmdFiles(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	dir := t.TempDir()
	out, sum := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.json")
	_, stderr, code, err := execRun(t, "--url", url, "-n", "4", "-c", "2", "--out", out, "--summary", sum, "--seed", "9", "--settle", "0")
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	h, recs, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if h.Seed != 9 || h.Target != url || h.Flags["out"] != out || len(recs) != 6 {
		t.Errorf("header %+v with %d records, want seed 9, 6 records (4 + 2 warm-up)", h, len(recs))
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	doc := decodeRunDocument(t, sum, data)
	if doc.Interrupted || doc.Summary.Requests.Total != 4 || doc.Run.StartedAt != h.StartedAt {
		t.Errorf("summary: interrupted %v, requests %+v, started %q (results file %q)", doc.Interrupted, doc.Summary.Requests, doc.Run.StartedAt, h.StartedAt)
	}
	if _, err := os.Stat(sum + ".tmp"); !os.IsNotExist(err) {
		t.Errorf("the temporary summary file is left behind (%v)", err)
	}
}

func TestRunCmdFlagErrors(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: a flag error must come before any request.
	const nowhere = "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--threshold", "abc"}, `--threshold "abc": want seconds (0.1) or a duration (100ms)`},
		{[]string{"--threshold", "-0.1"}, `--threshold "-0.1"`},
		{[]string{"--extra-body", "{"}, "--extra-body: not a JSON object"},
		{[]string{"--extra-body", "[1]"}, "--extra-body: not a JSON object"},
		{[]string{"--scenario", "nosuch"}, `unknown scenario "nosuch" (built-in: chat-voice, speech-pcm, tts-long, tts-short`},
		{[]string{"--scenario", filepath.Join(t.TempDir(), "missing.yaml")}, "missing.yaml"},
		{[]string{"--format", "xml"}, `unknown --format "xml" (want table, markdown, json, csv)`},
		{[]string{"--header", "novalue"}, `--header "novalue": want "Name: value"`},
		{[]string{"--continuity-mode", "loose"}, "--continuity-mode"},
		{[]string{"--goodput", "ttfp"}, "--goodput"},
		{[]string{"--accept", "yaml"}, "--accept"},
		{[]string{"--rate", "5", "--arrival", "bursty"}, `arrival must be one of [constant poisson gamma], got "bursty"`},
		{[]string{"--burstiness", "0.5"}, `burstiness 0.5 needs arrival "gamma"`},
		// Negative counts must not fall back silently to the scenario's.
		{[]string{"-c", "-1"}, "--concurrency"},
		{[]string{"-n", "-1"}, "--requests"},
		{[]string{"--warmup", "-5"}, "--warmup"},
		{[]string{"--kind", "video"}, "video"},
		{[]string{"--scrape", "maybe"}, `scrape mode "maybe" (want auto, on or off)`},
		{[]string{"--rate", "abc"}, `invalid argument "abc" for "--rate"`},
		{[]string{"extra"}, `unknown command "extra"`},
	} {
		stdout, _, code, err := execRun(t, append([]string{"--url", nowhere, "--scrape", "off"}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("run %q: error %v, want %q", tc.args, err, tc.want)
		}
		if code != 2 || stdout != "" {
			t.Errorf("run %q: exit %d, stdout %q: want 2 (unusable input) and nothing", tc.args, code, stdout)
		}
	}
}

// keyServer serves the simulator behind a check of the Authorization
// header; with reject set it answers 401 quoting the header back, as some
// gateways do.
type keyServer struct {
	next   http.Handler
	reject bool
	mu     sync.Mutex
	auth   []string
}

func (k *keyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/metrics" {
		k.mu.Lock()
		k.auth = append(k.auth, r.Header.Get("Authorization"))
		k.mu.Unlock()
		if k.reject {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprintf(w, `{"error":{"message":"invalid credentials %q"}}`, r.Header.Get("Authorization"))
			return
		}
	}
	k.next.ServeHTTP(w, r)
}

// TestRunCmdAPIKeyNeverWritten sends an API key and a secret header and
// checks every output (stdout, stderr, the results file and the summary),
// also when the server quotes the credentials back in its error.
func TestRunCmdAPIKeyNeverWritten(t *testing.T) {
	t.Parallel()
	const key, header = "secret123", "hdrsecret456"
	for _, reject := range []bool{false, true} {
		t.Run(fmt.Sprintf("reject=%v", reject), func(t *testing.T) {
			t.Parallel()
			srv, err := simulator.New(runSimConfig(t))
			if err != nil {
				t.Fatal(err)
			}
			ks := &keyServer{next: srv.Handler(), reject: reject}
			hs := httptest.NewServer(ks)
			defer hs.Close()
			dir := t.TempDir()
			out, sum := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.json")
			outputs := map[string]string{}
			for _, format := range []string{"json", "table"} {
				stdout, stderr, code, err := execRun(t, "--url", hs.URL, "--no-probe", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0",
					"--api-key", key, "-H", "X-Api-Key: "+header, "--format", format, "--out", out, "--summary", sum)
				// Every request rejected: nothing was measured (exit 1).
				if want := map[bool]int{false: 0, true: 1}[reject]; code != want {
					t.Fatalf("exit %d (%v), want %d\nstderr:\n%s", code, err, want, stderr)
				}
				outputs[format+" stdout"], outputs[format+" stderr"] = stdout, stderr+fmt.Sprint(err)
				for _, f := range []string{out, sum} {
					data, err := os.ReadFile(f)
					if err != nil {
						t.Fatal(err)
					}
					outputs[format+" "+filepath.Base(f)] = string(data)
				}
			}
			for what, text := range outputs {
				if strings.Contains(text, key) || strings.Contains(text, header) {
					t.Errorf("%s contains a secret:\n%s", what, text)
				}
			}
			_, recs, err := results.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if reject && (r.ErrorClass != results.ErrHTTPStatus || r.Status != http.StatusUnauthorized || !strings.Contains(r.Error, "[redacted]")) {
					t.Errorf("seq %d: class %q status %d error %q: want the 401 with its quote redacted", r.Seq, r.ErrorClass, r.Status, r.Error)
				}
				if !reject && !r.OK() {
					t.Errorf("seq %d failed: %s", r.Seq, r.Error)
				}
			}
			ks.mu.Lock()
			defer ks.mu.Unlock()
			if len(ks.auth) != 4 {
				t.Errorf("the server saw %d requests, want 4", len(ks.auth))
			}
			for _, a := range ks.auth {
				if a != "Bearer "+key {
					t.Errorf("Authorization %q, want the bearer key", a)
				}
			}
		})
	}
}

// TestRunCmdEmbeddedSpeechScenario runs a TTS scenario with no --url: the
// embedded simulator must serve the scenario's model, or every request is
// a 404 ("model does not exist").
func TestRunCmdEmbeddedSpeechScenario(t *testing.T) {
	t.Parallel()
	stdout, stderr, code, err := execRun(t, "--scenario", "tts-short", "-n", "2", "-c", "2", "--warmup", "0",
		"--format", "json", "--settle", "0", "--scrape", "off")
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	doc := decodeRunDocument(t, "stdout", []byte(stdout))
	if r := doc.Summary.Requests; r.Completed != 2 || !doc.Run.Simulator {
		t.Errorf("requests %+v (simulator %v): the embedded simulator must answer the scenario's model", r, doc.Run.Simulator)
	}
}

// buildRunBinary builds omnibench from the module root for the signal
// tests, which need a real process.
func buildRunBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build omnibench with")
	}
	bin := filepath.Join(t.TempDir(), "omnibench")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, goTool, "build", "-o", bin, "./cmd/omnibench")
	build.Dir = filepath.Join("..", "..") // the module root: tests run in the package directory
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// requestLines counts the request records in a results file being written.
func requestLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), []byte(`"type":"request"`)) {
			n++
		}
	}
	return n
}

// TestRunCmdSignal interrupts a real `omnibench run` process mid-run: it
// exits 130 and leaves a valid results file and summary saying it was
// interrupted.
func TestRunCmdSignal(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT for a child process on Windows")
	}
	if testing.Short() {
		t.Skip("builds the omnibench binary")
	}
	t.Parallel()
	bin := buildRunBinary(t)
	// About 200 ms per request: 1000 requests at concurrency 4 would take
	// close to a minute, so the run is surely mid-way when signalled.
	cfg := runSimConfig(t)
	cfg.Timing.TTFA, cfg.Timing.RTF = 20*time.Millisecond, 0.5
	cfg.Timing.MinAudio, cfg.Timing.MaxAudio = 300*time.Millisecond, 300*time.Millisecond
	url := startRunSim(t, cfg)

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			out, sum := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.json")
			cmd := exec.Command(bin, "run", "--url", url, "--out", out, "--summary", sum,
				"-n", "1000", "-c", "4", "--warmup", "0", "--format", "json", "--settle", "0")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			kill := func() {
				_ = cmd.Process.Kill()
				<-exited
			}

			deadline := time.Now().Add(30 * time.Second)
			for requestLines(out) < 3 {
				select {
				case err := <-exited:
					t.Fatalf("omnibench exited before it was signalled: %v\nstderr:\n%s", err, stderr.String())
				default:
				}
				if time.Now().After(deadline) {
					kill()
					t.Fatalf("fewer than 3 records in %s after 30 s\nstderr:\n%s", out, stderr.String())
				}
				time.Sleep(10 * time.Millisecond)
			}
			if err := cmd.Process.Signal(sig); err != nil {
				kill()
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(30 * time.Second):
				kill()
				t.Fatalf("omnibench did not exit within 30 s of %v\nstderr:\n%s", sig, stderr.String())
			}
			if code := cmd.ProcessState.ExitCode(); code != 130 {
				t.Errorf("exit status %d after %v, want 130\nstderr:\n%s", code, sig, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted; the results gathered so far were written") {
				t.Errorf("stderr does not say the run was interrupted:\n%s", stderr.String())
			}

			h, recs, err := results.ReadFile(out)
			if err != nil {
				t.Fatalf("the results file is not valid after %v: %v", sig, err)
			}
			if h.Type != "header" || len(recs) < 3 || len(recs) >= 1000 {
				t.Errorf("header %+v and %d records, want at least 3 and fewer than 1000", h, len(recs))
			}
			data, err := os.ReadFile(sum)
			if err != nil {
				t.Fatal(err)
			}
			var raw map[string]any
			if err := json.Unmarshal(data, &raw); err != nil || raw["interrupted"] != true {
				t.Errorf("summary (%v): \"interrupted\" is %v, want true", err, raw["interrupted"])
			}
			doc := decodeRunDocument(t, sum, data)
			if doc.Summary.Requests.Total != len(recs) {
				t.Errorf("summary counts %d requests, the results file %d", doc.Summary.Requests.Total, len(recs))
			}
			if stdoutDoc := decodeRunDocument(t, "stdout", stdout.Bytes()); !stdoutDoc.Interrupted {
				t.Error("the report on stdout does not say the run was interrupted")
			}
		})
	}
}
