package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/results"
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
	if code := exitCode(t.Context(), err); code != 2 || !strings.Contains(err.Error(), "missing.jsonl") {
		t.Errorf("missing file: exit %d, error %v", code, err)
	}
}
