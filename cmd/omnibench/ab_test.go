//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/experiment/abtest"
)

// runAB runs `omnibench ab args...` in-process and returns stdout, stderr
// and the error the command returned.
func runAB(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd("test")
	var out, errb bytes.Buffer
	// --allow-saturated: these small runs test ab's wiring; on a loaded
	// machine or under -race the client may count as saturated.
	root.SetArgs(append([]string{"ab", "--allow-saturated"}, args...))
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func TestABCmdFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--server-cmd", "srv --port {port}"}, "--server-cmd runs the --log-stats experiment"},
		{[]string{"--log-stats", "--a-url", "http://127.0.0.1:1"}, "--log-stats compares one server with stats on and off"},
		{[]string{"--stats-off-flag", "--disable-log-stats"}, "--stats-on-flag and --stats-off-flag need --log-stats --server-cmd"},
		{[]string{"--url", "http://127.0.0.1:1"}, "--url does not apply to ab: use --a-url and --b-url"},
		{[]string{"--scrape", "on"}, "--scrape does not apply to ab"},
		{[]string{"--a-url", "http://127.0.0.1:1"}, "arm b: give --b-url or --b-cmd"},
		{[]string{"--format", "csv"}, `unknown --format "csv" (want table, markdown, json)`},
		{[]string{"--a-cmd", "srv 'x", "--b-url", "http://127.0.0.1:1"}, "--a-cmd: command \"srv 'x\": unterminated ' quote opened at byte 4"},
		{[]string{"--a-cmd", "srv --api-key sk-123", "--b-url", "http://127.0.0.1:1"}, "put {port} where the port goes"},
		{[]string{"--rounds", "0"}, "--rounds 0: want at least 1"},
		{[]string{"-n", "3", "--rounds", "4"}, "3 requests per arm cannot be split into 4 rounds"},
		{[]string{"--fail-on-regression", "ttft:5"}, `--fail-on-regression: regression gate "ttft:5": unknown metric "ttft" (want one of e2e, ttfp, audio_rtf)`},
	} {
		_, _, err := runAB(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ab %q: error %v, want %q", tc.args, err, tc.want)
		}
		if ee := (*exitError)(nil); !errors.As(err, &ee) || ee.code != 2 {
			t.Errorf("ab %q: error %v, want exit status 2 (unusable input)", tc.args, err)
		}
		if err != nil && strings.Contains(err.Error(), "sk-123") {
			t.Errorf("ab %q: the error leaks the API key: %v", tc.args, err)
		}
	}
	out, _, err := runAB(t, "--help")
	if err != nil || !strings.Contains(out, "--a-cmd") || !strings.Contains(out, "--stats-off-flag") || strings.Contains(out, "--sim-log-stats") {
		t.Errorf("ab --help (%v):\n%s", err, out)
	}
}

// abBuildOmnibench builds the command once for the tests that start it as a
// server process (`omnibench serve`) or run it whole (to send it SIGINT).
func abBuildOmnibench(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the omnibench binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build omnibench with")
	}
	bin := filepath.Join(t.TempDir(), "omnibench")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// abServeCmd is `omnibench serve` on {port} with millisecond timing, so a
// request takes a few tens of milliseconds.
func abServeCmd(bin string, extra ...string) string {
	args := append([]string{bin, "serve", "--addr", "127.0.0.1:{port}",
		"--ttft", "2ms", "--word-interval", "1ms", "--ttfa", "5ms", "--chunk-audio", "40ms", "--rtf", "0.05",
		"--audio-per-char", "2ms", "--min-audio", "50ms", "--max-audio", "300ms"}, extra...)
	return strings.Join(args, " ")
}

// abDoc is the part of ab.json (and of --format json) the tests read.
type abDoc struct {
	Verdict     string `json:"verdict"`
	Interrupted bool   `json:"interrupted"`
	A, B        struct {
		Label        string `json:"label"`
		Used         int    `json:"used"`
		ServerPIDs   []int  `json:"server_pids"`
		ServerStarts int    `json:"server_starts"`
		ResultsFile  string `json:"results_file"`
		Metrics      *struct {
			Lines            int      `json:"lines"`
			UpstreamFamilies int      `json:"upstream_families"`
			EmptyFamilies    []string `json:"empty_families"`
		} `json:"metrics"`
	}
	Metrics []struct {
		Metric string `json:"metric"`
		Tested bool   `json:"tested"`
	} `json:"metrics"`
}

func abParseDoc(t *testing.T, data []byte) abDoc {
	t.Helper()
	var doc abDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("ab JSON: %v\n%s", err, data)
	}
	return doc
}

// abCheckStats checks a complete stats-on (A) against stats-off (B) run.
func abCheckStats(t *testing.T, doc abDoc, n int) {
	t.Helper()
	if doc.Verdict == "" || doc.Interrupted {
		t.Errorf("verdict %q, interrupted %v", doc.Verdict, doc.Interrupted)
	}
	if doc.A.Used != n || doc.B.Used != n {
		t.Errorf("samples A %d, B %d, want %d each", doc.A.Used, doc.B.Used, n)
	}
	if len(doc.Metrics) != 3 {
		t.Errorf("%d metrics, want e2e, ttfp, audio_rtf", len(doc.Metrics))
	}
	for _, m := range doc.Metrics {
		if !m.Tested {
			t.Errorf("%s not tested", m.Metric)
		}
	}
	if doc.A.Metrics == nil || doc.B.Metrics == nil {
		t.Fatal("an arm's /metrics was not measured")
	}
	if !(doc.B.Metrics.Lines < doc.A.Metrics.Lines) {
		t.Errorf("/metrics lines: stats off %d, stats on %d: off must be smaller", doc.B.Metrics.Lines, doc.A.Metrics.Lines)
	}
	if doc.A.Metrics.UpstreamFamilies == 0 || doc.B.Metrics.UpstreamFamilies != 0 || len(doc.B.Metrics.EmptyFamilies) == 0 {
		t.Errorf("stats on: %d upstream families; stats off: %d upstream, %d empty families",
			doc.A.Metrics.UpstreamFamilies, doc.B.Metrics.UpstreamFamilies, len(doc.B.Metrics.EmptyFamilies))
	}
}

// abAssertGone fails unless every process has exited. A stopped server is
// reaped before ab returns, so kill(pid, 0) must say ESRCH; polling with a
// deadline covers a server reaped by a child omnibench that is itself
// still exiting.
func abAssertGone(t *testing.T, pids ...int) {
	t.Helper()
	if len(pids) == 0 {
		t.Error("no server pids to check")
	}
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
			if time.Now().After(deadline) {
				t.Errorf("server process %d still exists", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// abLogPIDs reads the pids abtest wrote into a server log.
func abLogPIDs(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, m := range regexp.MustCompile(`# omnibench ab: pid (\d+)`).FindAllStringSubmatch(string(data), -1) {
		pid, _ := strconv.Atoi(m[1])
		pids = append(pids, pid)
	}
	return pids
}

func TestABCmd(t *testing.T) {
	bin := abBuildOmnibench(t)

	t.Run("embedded simulator", func(t *testing.T) {
		dir := t.TempDir()
		prompts := filepath.Join(dir, "prompts.txt")
		if err := os.WriteFile(prompts, []byte("Hi.\nYes.\nNo.\nOK.\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		out, stderr, err := runAB(t, "--log-stats", "--scenario", "tts-short", "--prompts", prompts,
			"-n", "4", "--warmup", "0", "--settle", "0", "--format", "json", "--out", filepath.Join(dir, "out"))
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		doc := abParseDoc(t, []byte(out))
		abCheckStats(t, doc, 4)
		saved, err := os.ReadFile(filepath.Join(dir, "out", "ab.json"))
		if err != nil || abParseDoc(t, saved).Verdict != doc.Verdict {
			t.Errorf("ab.json (%v) does not match the output", err)
		}
	})

	t.Run("server commands", func(t *testing.T) {
		dir := t.TempDir()
		out, stderr, err := runAB(t, "--a-cmd", abServeCmd(bin, "--log-stats"), "--b-cmd", abServeCmd(bin, "--disable-log-stats"),
			"-n", "6", "--settle", "0", "--format", "json", "--out", dir)
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		doc := abParseDoc(t, []byte(out))
		abCheckStats(t, doc, 6)
		if doc.A.ServerStarts != 2 || doc.B.ServerStarts != 1 {
			t.Errorf("server starts A %d, B %d, want 2 and 1 (A B B A, one server at a time)", doc.A.ServerStarts, doc.B.ServerStarts)
		}
		abAssertGone(t, append(doc.A.ServerPIDs, doc.B.ServerPIDs...)...)
		// Both arms' records are ordinary results files: compare reads them.
		root := newRootCmd("test")
		var cmpOut bytes.Buffer
		root.SetArgs([]string{"compare", doc.A.ResultsFile, doc.B.ResultsFile})
		root.SetOut(&cmpOut)
		root.SetErr(&cmpOut)
		if err := root.ExecuteContext(context.Background()); err != nil || !strings.Contains(cmpOut.String(), "e2e (ms)") {
			t.Errorf("compare of the ab files (%v):\n%s", err, cmpOut.String())
		}
	})

	t.Run("log-stats server-cmd", func(t *testing.T) {
		// A server of the original metrics design: stats off by default,
		// --log-stats on (docs/reference/server-versions.md, section 3).
		out, stderr, err := runAB(t, "--log-stats", "--server-cmd", abServeCmd(bin), "--stats-off-flag", "--disable-log-stats",
			"-n", "4", "--settle", "0", "--format", "json", "--out", t.TempDir())
		if err != nil {
			t.Fatalf("%v\n%s", err, stderr)
		}
		doc := abParseDoc(t, []byte(out))
		abCheckStats(t, doc, 4)
		if doc.A.Label != "stats on (--log-stats)" || doc.B.Label != "stats off (--disable-log-stats)" {
			t.Errorf("labels %q, %q", doc.A.Label, doc.B.Label)
		}
		abAssertGone(t, append(doc.A.ServerPIDs, doc.B.ServerPIDs...)...)
	})

	t.Run("throughput with a stats cost", func(t *testing.T) { abCheckThroughput(t, bin) })

	t.Run("log-stats arms that do not differ", func(t *testing.T) {
		// The reproduction: serve keeps stats off without a flag,
		// so an empty --stats-on-flag leaves both arms off.
		for _, tc := range []struct {
			name, on, off string
			want          []string
		}{
			{"both off", "", "--disable-log-stats", []string{
				"arm A (claimed stats on, with no argument) showed off (detected: no upstream vllm:* family",
				"arm B (claimed stats off, with --disable-log-stats) showed off (detected",
				"probably wrong: arm A's stats-on argument(s)", `given --stats-on-flag "", --stats-off-flag "--disable-log-stats"`}},
			{"both on", "--log-stats", "--log-stats", []string{
				"arm A (claimed stats on, with --log-stats) showed on (detected: ",
				"arm B (claimed stats off, with --log-stats) showed on (detected: ",
				"probably wrong: arm B's stats-off argument(s)"}},
			{"swapped", "--disable-log-stats", "--log-stats", []string{"look swapped"}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				out, _, err := runAB(t, "--log-stats", "--server-cmd", abServeCmd(bin), "--stats-on-flag", tc.on, "--stats-off-flag", tc.off,
					"-n", "4", "--settle", "0", "--format", "json", "--out", t.TempDir())
				var ee *exitError
				if !errors.As(err, &ee) || ee.code != 2 {
					t.Fatalf("error %v, want exit status 2", err)
				}
				for _, want := range tc.want {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error lacks %q:\n%v", want, err)
					}
				}
				if out != "" || strings.Contains(err.Error(), "no significant difference") {
					t.Errorf("a verdict was given:\n%s", out)
				}
			})
		}
	})

	t.Run("failing arm", func(t *testing.T) {
		// 70% of arm A's requests fail (HTTP 500): no verdict, exit 1.
		out, _, err := runAB(t, "--a-cmd", abServeCmd(bin, "--log-stats", "--fault-500", "0.7"), "--b-cmd", abServeCmd(bin, "--log-stats"),
			"-n", "20", "--settle", "0", "--out", t.TempDir())
		var ee *exitError
		if err == nil || errors.As(err, &ee) || !errors.Is(err, abtest.ErrArmBroken) ||
			!strings.Contains(err.Error(), "A fails more often than B beyond chance: A ") {
			t.Fatalf("error %v, want exit 1 and an arm that broke", err)
		}
		if strings.Contains(out, "no significant difference at alpha") || !strings.Contains(out, "no latency verdict") {
			t.Errorf("stdout:\n%s", out)
		}
		// B failing under --fail-on-regression is a regression: exit 3.
		_, _, err = runAB(t, "--a-cmd", abServeCmd(bin, "--log-stats"), "--b-cmd", abServeCmd(bin, "--log-stats", "--fault-500", "0.7"),
			"-n", "20", "--settle", "0", "--fail-on-regression", "e2e:50", "--out", t.TempDir())
		if !errors.As(err, &ee) || ee.code != 3 || !strings.Contains(err.Error(), "failure_rate: B fails more often: ") {
			t.Fatalf("error %v, want exit 3 and the failure-rate gate", err)
		}
	})

	t.Run("server fails to start", func(t *testing.T) {
		dir := t.TempDir()
		// --replicas 0 makes serve exit with an error before it listens.
		_, _, err := runAB(t, "--a-cmd", abServeCmd(bin, "--replicas", "0"), "--b-cmd", abServeCmd(bin),
			"-n", "4", "--settle", "0", "--out", dir)
		if err == nil {
			t.Fatal("no error")
		}
		// serve exits 2 on a bad flag value (unusable input).
		for _, want := range []string{"arm A", "exited before it became healthy", "exit status 2", filepath.Join(dir, "a-server.log"), "--replicas"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q: %v", want, err)
			}
		}
		abAssertGone(t, abLogPIDs(t, filepath.Join(dir, "a-server.log"))...)
	})

	t.Run("server never healthy", func(t *testing.T) {
		dir := t.TempDir()
		// sleep never listens: the start-up timeout ends it.
		_, _, err := runAB(t, "--a-cmd", "sleep 30", "--a-url", "http://127.0.0.1:9", "--b-cmd", abServeCmd(bin),
			"-n", "4", "--startup-timeout", "300ms", "--out", dir)
		if err == nil || !strings.Contains(err.Error(), "did not become healthy within the start-up timeout 300ms") {
			t.Fatalf("error %v", err)
		}
		abAssertGone(t, abLogPIDs(t, filepath.Join(dir, "a-server.log"))...)
	})

	t.Run("interrupted", func(t *testing.T) {
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, "ab", "--allow-saturated", "--a-cmd", abServeCmd(bin, "--log-stats"), "--b-cmd", abServeCmd(bin),
			"-n", "10000", "--settle", "0", "--out", dir)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Interrupt once arm A has recorded a few requests.
		deadline := time.Now().Add(time.Minute)
		for {
			data, _ := os.ReadFile(filepath.Join(dir, "a.jsonl"))
			if bytes.Count(data, []byte("\n")) >= 4 {
				break
			}
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("no records after a minute:\n%s", stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("exit %v, want status 130\n%s", err, stderr.String())
		}
		saved, err := os.ReadFile(filepath.Join(dir, "ab.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc := abParseDoc(t, saved)
		if !doc.Interrupted || doc.A.Used < 3 {
			t.Errorf("ab.json: interrupted %v, A used %d", doc.Interrupted, doc.A.Used)
		}
		abAssertGone(t, abLogPIDs(t, filepath.Join(dir, "a-server.log"))...)
	})
}

// TestABRefusalIsTheVerdict: an arm measured by a saturated load generator
// gets no verdict, and every output says so with the reason: the table,
// its last line, the JSON and the HTML page, none showing the refused
// comparison's verdict; the status is 1, as compare's refusal.
func TestABRefusalIsTheVerdict(t *testing.T) {
	t.Parallel()
	sim := startRunSim(t, runSimConfig(t))
	dir := t.TempDir()
	page := filepath.Join(dir, "ab.html")
	args := []string{"ab", "--a-url", sim, "--b-url", sim, "--rounds", "1", "-n", "4", "-c", "1", "--warmup", "0",
		"--client-cpu-threshold", "1e-12", "--client-delay-threshold", "1ns"}
	out, stderr, code := execCmd(t, append(args, "--html", page)...)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (refused)\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if line := verdictLine(out); !strings.HasPrefix(line, "NO VERDICT: ") || !strings.Contains(line, "saturated load generator") {
		t.Errorf("last line %q, want NO VERDICT and the reason", line)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"table": out, "html": string(html)} {
		if !strings.Contains(text, "no verdict") {
			t.Errorf("%s does not say there is no verdict:\n%s", name, text)
		}
		if strings.Contains(text, "no significant difference") || strings.Contains(text, "B slower") || strings.Contains(text, "B faster") {
			t.Errorf("%s shows the refused verdict:\n%s", name, text)
		}
	}
	if !strings.Contains(string(html), `class="verdict none"`) {
		t.Errorf("the HTML page has no NO VERDICT badge")
	}

	out, _, code = execCmd(t, append(args, "--format", "json")...)
	var doc struct {
		Verdict, Refused string
		Metrics          []struct{ Verdict string }
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || code != 1 {
		t.Fatalf("--format json: exit %d, %v:\n%s", code, err, out)
	}
	if !strings.HasPrefix(doc.Verdict, "no verdict: ") || doc.Refused == "" {
		t.Errorf("json verdict %q, refused %q", doc.Verdict, doc.Refused)
	}
	for _, m := range doc.Metrics {
		if m.Verdict != "no verdict" {
			t.Errorf("json metric verdict %q, want no verdict", m.Verdict)
		}
	}
}
