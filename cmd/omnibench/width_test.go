package main

// Every command's default text output fits in 100 columns on realistic
// data: each test runs the command as a user would and measures the
// widest line it printed.

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/report"
)

// widestLine returns the widest line of out in runes (what a terminal
// shows) and the line itself.
func widestLine(out string) (int, string) {
	w, line := 0, ""
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > w {
			w, line = n, l
		}
	}
	return w, line
}

func assertFits(t *testing.T, what, out string) {
	t.Helper()
	if strings.TrimSpace(out) == "" {
		t.Fatalf("%s printed nothing", what)
	}
	if w, line := widestLine(out); w > report.DefaultWidth {
		t.Errorf("%s: widest line is %d columns (limit %d):\n%s\n\nwhole output:\n%s", what, w, report.DefaultWidth, line, out)
	}
}

// execCmd runs omnibench args... in process.
func execCmd(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return sweepExec(t, args...)
}

// TestRunReportFitsOnEmbeddedSimulator is the run a new user starts with:
// the embedded simulator, its default timing, a couple of requests, SLOs
// (one missed) and goodput.
func TestRunReportFitsOnEmbeddedSimulator(t *testing.T) {
	t.Parallel()
	out, stderr, code := execCmd(t, "run", "-n", "2", "--warmup", "0",
		"--slo", "audio_ttfp_p95<60s", "--slo", "audio_ttfp_p50<1ms", "--goodput", "ttfp:500ms,e2e:10s")
	if code != 3 {
		t.Fatalf("exit %d, want 3 (one SLO missed); stderr:\n%s", code, stderr)
	}
	assertFits(t, "run (embedded simulator)", out)

	// It starts with what ran, after the saturation warning that a loaded
	// machine (or the race detector) may put first: that warning belongs
	// on top.
	described := out
	if strings.HasPrefix(out, "WARNING\n") {
		if _, rest, ok := strings.Cut(out, "\nRun\n"); ok {
			described = "Run\n" + rest
		}
	}
	if !strings.HasPrefix(described, "Run\n") {
		t.Errorf("report does not start with the run description:\n%s", out)
	}
	for _, want := range []string{"embedded simulator, http://127.0.0.1:", "scenario   chat-voice", "kind       chat",
		"model      Qwen/Qwen3-Omni-30B-A3B-Instruct", "load       closed loop, c=2", "requests   2 measured", "seed       1",
		"Service-level objectives: 1 of 3 missed" /* the two --slo and --max-error-rate's error_rate<=0.5 */, "MISS", "Server vs client", "ttfp (ms)"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	// No row that says nothing: schedule lag in a closed loop, median
	// beside p50, audio_rtf identical to rtf_last_chunk for chat; stall
	// figures sit under continuity, not latency.
	latency := section(out, "Latency and real-time factor")
	for _, absent := range []string{"schedule_lag", "median", "\naudio_rtf", "stall_resume", "underrun"} {
		if strings.Contains(latency, absent) {
			t.Errorf("latency table shows %q:\n%s", absent, latency)
		}
	}
	if strings.Contains(latency, "stall") || !strings.Contains(section(out, "Playback continuity"), "stall-and-resume") {
		t.Errorf("stall counts are not under continuity:\n%s", out)
	}
	// Notes live below the tables, not in a column.
	if sv := section(out, "Server vs client"); !strings.Contains(sv, "\n  [1] ") || strings.Contains(sv, "  note") {
		t.Errorf("server-vs-client explanations are not footnotes:\n%s", sv)
	}
}

// section returns the part of out from the line title to the next blank
// line.
func section(out, title string) string {
	i := strings.Index(out, "\n"+title+"\n")
	if i < 0 {
		return ""
	}
	rest := out[i+1:]
	if j := strings.Index(rest, "\n\n"); j >= 0 {
		return rest[:j]
	}
	return rest
}

// TestOutputsFitOnFastSimulator covers the other commands' default tables
// against one fast simulator: an open-loop speech run, the report and the
// replay of its results file, a sweep with a missed SLO and a capacity
// search.
func TestOutputsFitOnFastSimulator(t *testing.T) {
	t.Parallel()
	cfg := runSimConfig(t)
	cfg.Model = "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice"
	url := startRunSim(t, cfg)
	dir := t.TempDir()
	results := filepath.Join(dir, "run.jsonl")

	out, stderr, code := execCmd(t, "run", "--url", url, "--scenario", "tts-short", "--rate", "40", "--arrival", "poisson",
		"-n", "8", "--threshold", "50ms,100ms,200ms", "--out", results)
	if code != 0 {
		t.Fatalf("open-loop run: exit %d\n%s", code, stderr)
	}
	assertFits(t, "run (open loop, speech-sse)", out)
	if !strings.Contains(out, "load       open loop, 40 req/s, poisson arrivals") || !strings.Contains(out, "schedule_lag (ms)") {
		t.Errorf("open-loop report:\n%s", out)
	}

	out, stderr, code = execCmd(t, "report", results, "--percentiles", "50,90,95,99,99.9")
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	assertFits(t, "report", out)
	if !strings.Contains(out, "kind       speech-sse") || !strings.Contains(out, "model      Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice") {
		t.Errorf("report of a saved run does not say what ran:\n%s", out)
	}

	for _, args := range [][]string{
		{"replay", results, "--threshold", "50ms,100ms,200ms"},
		{"replay", filepath.Join(replayTestdata, "traces.jsonl"), "--threshold", "0.1,0.2,0.5"},
	} {
		out, stderr, code = execCmd(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d\n%s", args, code, stderr)
		}
		assertFits(t, strings.Join(args, " "), out)
	}

	out, stderr, code = execCmd(t, "sweep", "--url", url, "--scenario", "tts-short", "-c", "1,2,4", "-n", "3", "--warmup", "0",
		"--slo", "audio_ttfp_p95<60s", "--slo", "e2e_p95<1ms")
	if code != 3 { // e2e_p95<1ms misses at every level
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	assertFits(t, "sweep", out)
	if !strings.Contains(out, "MISS [1]") || !strings.Contains(out, "\n  [1] concurrency 1: e2e_p95") {
		t.Errorf("sweep SLO misses are not footnotes:\n%s", out)
	}

	out, stderr, code = execCmd(t, "capacity", "--url", url, "--scenario", "tts-short", "--max", "4", "-n", "3", "--warmup", "0",
		"--slo", "audio_ttfp_p95<60s", "--slo", "error_rate<0.5")
	if code != 0 {
		t.Fatalf("capacity: exit %d\n%s", code, stderr)
	}
	assertFits(t, "capacity", out)
}

func TestListingsFit(t *testing.T) {
	out, err := runScenariosCmd(t)
	if err != nil {
		t.Fatal(err)
	}
	assertFits(t, "scenarios", out)

	// serve's start-up lines, as a user sees them on stderr.
	sim := simulator.DefaultConfig()
	sim.Capacity = 8
	cfg, err := (&serveOptions{cfg: sim, replicas: "2,1,4", logStats: true}).config()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	writeServeBanner(&buf, "http://127.0.0.1:8000", cfg)
	assertFits(t, "serve", buf.String())
}

// TestWideLiftsTheLimit: --wide prints notes and cells unwrapped.
func TestWideLiftsTheLimit(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	for _, wide := range []bool{false, true} {
		args := []string{"--url", url, "-n", "2", "--warmup", "0"}
		if wide {
			args = append(args, "--wide")
		}
		out, stderr, code, err := execRun(t, args...)
		if code != 0 {
			t.Fatalf("run %q: exit %d, %v\n%s", args, code, err, stderr)
		}
		const note = "RTF: server = generation time / audio duration, without network and queueing; client = the benchmark's audio_rtf (last chunk for chat, e2e for speech)"
		w, _ := widestLine(out)
		if wide && (w <= report.DefaultWidth || !strings.Contains(out, note)) {
			t.Errorf("--wide: widest line %d, note on one line %v:\n%s", w, strings.Contains(out, note), out)
		}
		if !wide && (w > report.DefaultWidth || strings.Contains(out, note)) {
			t.Errorf("default: widest line %d, note unwrapped %v", w, strings.Contains(out, note))
		}
	}
}
