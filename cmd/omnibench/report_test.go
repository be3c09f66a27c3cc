package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestReportRerendersSavedRun writes a small results file by hand and checks
// that report prints the figures computed from it, in every format.
func TestReportRerendersSavedRun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	var buf bytes.Buffer
	w := results.NewWriter(&buf)
	if err := w.WriteHeader(results.Header{Scenario: "hand", Mode: "closed", Seed: 3}); err != nil {
		t.Fatal(err)
	}
	for i, ttfp := range []float64{0.1, 0.2, 0.3} {
		rec := results.Record{ID: "r", Seq: i, Kind: results.KindChat, SentS: float64(i), E2ES: 1, TTFPS: ttfp,
			AudioBytes: 48000, AudioFrames: 24000, AudioDurationS: 1, RTFLastChunk: 0.5, RTFE2E: 1}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	var out, errOut bytes.Buffer
	root := newRootCmd("test")
	root.SetArgs([]string{"report", path, "--format", "json", "--html", filepath.Join(dir, "r.html")})
	root.SetOut(&out)
	root.SetErr(&errOut)
	if err := root.Execute(); err != nil {
		t.Fatalf("report: %v (%s)", err, errOut.String())
	}
	var doc reportDocument
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("json output: %v", err)
	}
	// TTFP mean of 100, 200 and 300 ms.
	if got := doc.Bench["mean_audio_ttfp_ms"]; got < 199.999 || got > 200.001 {
		t.Errorf("mean_audio_ttfp_ms = %v, want 200", got)
	}
	if doc.Summary.Requests.Completed != 3 || doc.Run.Scenario != "hand" {
		t.Errorf("summary = %+v, run = %+v", doc.Summary.Requests, doc.Run)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.html")); err != nil {
		t.Errorf("--html not written: %v", err)
	}

	for _, format := range []string{"table", "markdown", "csv"} {
		out.Reset()
		root := newRootCmd("test")
		root.SetArgs([]string{"report", path, "--format", format})
		root.SetOut(&out)
		root.SetErr(&errOut)
		if err := root.Execute(); err != nil {
			t.Fatalf("report --format %s: %v", format, err)
		}
		if !strings.Contains(out.String(), "ttfp (ms)") {
			t.Errorf("--format %s output lacks ttfp (ms):\n%s", format, out.String())
		}
	}

	root = newRootCmd("test")
	root.SetArgs([]string{"report", filepath.Join(dir, "missing.jsonl")})
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	if code := exitCodeTo(t.Context(), io.Discard, err); code != 2 || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: exit %d, error %v", code, err)
	}
}

// TestReportGivenASummary: the --summary document is not a results file;
// report says what it got and what it wants, exit 2.
func TestReportGivenASummary(t *testing.T) {
	url := startRunSim(t, runSimConfig(t))
	sum := filepath.Join(t.TempDir(), "run.json")
	if _, stderr, code, err := execRun(t, "--url", url, "-n", "1", "--warmup", "0", "--summary", sum); code != 0 {
		t.Fatalf("run: exit %d, %v\n%s", code, err, stderr)
	}
	_, _, code := sweepExec(t, "report", sum)
	root := newRootCmd("test")
	root.SetArgs([]string{"report", sum})
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	err := root.Execute()
	if code != 2 || err == nil || !strings.Contains(err.Error(), sum+" is a run summary document") ||
		!strings.Contains(err.Error(), "omnibench run --out FILE") {
		t.Errorf("report %s: exit %d, %v; want exit 2 saying it is a run summary and naming run --out", sum, code, err)
	}
}

// TestReportIncludeRamp: ramp-phase records are left out of the figures
// unless --include-ramp.
func TestReportIncludeRamp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ramp.jsonl")
	var buf bytes.Buffer
	w := results.NewWriter(&buf)
	if err := w.WriteHeader(results.Header{Scenario: "hand", Mode: "closed"}); err != nil {
		t.Fatal(err)
	}
	for i, ttfp := range []float64{0.9, 0.1, 0.2, 0.3} {
		rec := results.Record{ID: "r", Seq: i, Kind: results.KindChat, SentS: float64(i), E2ES: 1, TTFPS: ttfp,
			AudioBytes: 48000, AudioFrames: 24000, AudioDurationS: 1, RTFLastChunk: 0.5, RTFE2E: 1}
		if i == 0 {
			rec.Phase = "ramp"
		}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		mean float64 // ms: 200 without the 900 ms ramp request, 375 with it
	}{{nil, 200}, {[]string{"--include-ramp"}, 375}} {
		var out, errOut bytes.Buffer
		root := newRootCmd("test")
		root.SetArgs(append([]string{"report", path, "--format", "json"}, tc.args...))
		root.SetOut(&out)
		root.SetErr(&errOut)
		if err := root.Execute(); err != nil {
			t.Fatalf("report %v: %v (%s)", tc.args, err, errOut.String())
		}
		var doc reportDocument
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		if got := doc.Bench["mean_audio_ttfp_ms"]; math.Abs(got-tc.mean) > 1e-6 {
			t.Errorf("report %v: mean_audio_ttfp_ms = %v, want %v", tc.args, got, tc.mean)
		}
	}
}

// TestReportOfARunThatMeasuredNothing: re-rendering a saved run gives the
// same verdict as the run did: every request failed, so exit 1 with the
// reason, and the error set is still printed.
func TestReportOfARunThatMeasuredNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "failed.jsonl")
	var buf bytes.Buffer
	w := results.NewWriter(&buf)
	if err := w.WriteHeader(results.Header{Scenario: "hand", Mode: "closed"}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		rec := results.Record{ID: "req-00000" + string(rune('0'+i)), Seq: i, Kind: results.KindChat, Status: 404,
			ErrorClass: results.ErrHTTPStatus, Error: `HTTP 404: {"error":"model does not exist"}`}
		if err := w.Write(&rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := execCmd(t, "report", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(out, "nothing was measured") || !strings.Contains(out, "model does not exist") {
		t.Errorf("want the reason and the error set in the report; stdout:\n%s\nstderr:\n%s", out, stderr)
	}
}

// TestReportShowsAndExitsWhatTheRunDid: a run that missed an SLO with a
// saturated load generator, then report of its file: the same SLO table,
// the saturation warning, the load generator section, the same verdict
// line and the same exit status.
func TestReportShowsAndExitsWhatTheRunDid(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "run.jsonl")
	sim := startRunSim(t, runSimConfig(t))
	runOut, stderr, code := execCmd(t, "run", "--url", sim, "-n", "3", "-c", "1", "--warmup", "0", "--settle", "0", "--scrape", "off",
		"--slo", "audio_ttfp_p95<1us", "--client-cpu-threshold", "1e-12", "--client-delay-threshold", "1ns", "--out", path)
	if code != 3 {
		t.Fatalf("run: exit %d, want 3\n%s", code, stderr)
	}
	repOut, stderr, code := execCmd(t, "report", path)
	if code != 3 {
		t.Fatalf("report: exit %d, want 3 as the run\nstdout:\n%s\nstderr:\n%s", code, repOut, stderr)
	}
	if got, want := sloSection(repOut), sloSection(runOut); got == "" || got != want {
		t.Errorf("report's SLO table:\n%s\nthe run's:\n%s", got, want)
	}
	for _, want := range []string{"WARNING", "the load generator was saturated", "Load generator"} {
		if !strings.Contains(repOut, want) {
			t.Errorf("report lacks %q:\n%s", want, repOut)
		}
	}
	if got, want := verdictLine(repOut), verdictLine(runOut); got != want || !strings.HasPrefix(got, "FAIL: SLO audio_ttfp_p95<1us: ") {
		t.Errorf("report ends with %q, the run with %q", got, want)
	}
}

// sloSection is the SLO table of a text report, up to the blank line
// after it.
func sloSection(out string) string {
	i := strings.Index(out, "Service-level objectives")
	if i < 0 {
		return ""
	}
	s, _, _ := strings.Cut(out[i:], "\n\n")
	return s
}

// verdictLine is the verdict line a report ends with, its wrapped
// continuation lines (indented) joined back.
func verdictLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	i := len(lines) - 1
	for i > 0 && strings.HasPrefix(lines[i], "  ") {
		i--
	}
	return strings.Join(strings.Fields(strings.Join(lines[i:], " ")), " ")
}
