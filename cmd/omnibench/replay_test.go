package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var replayTestdata = filepath.Join("..", "..", "internal", "experiment", "replay", "testdata")

// runReplayCmd runs a fresh root command and returns stdout, stderr (with
// the returned error appended, as main prints it) and the exit status main
// would return.
func runReplayCmd(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	root := newRootCmd("test")
	var out, errb bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(stdin))
	err := root.ExecuteContext(context.Background())
	// Mirror exitCode without its printing to the real stderr.
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func TestReplayCmdJSON(t *testing.T) {
	out, stderr, code := runReplayCmd(t, "", "replay", filepath.Join(replayTestdata, "traces.jsonl"),
		"--threshold", "0.1", "--threshold", "250ms,100ms", "--prebuffer", "200ms", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc struct {
		Format    string `json:"format"`
		Responses []struct {
			ID           string          `json:"id"`
			MaxUnderrunS float64         `json:"max_underrun_s"`
			Events       int             `json:"underrun_events"`
			OK           map[string]bool `json:"ok"`
			StallResume  struct {
				Stalls int `json:"stalls"`
			} `json:"stall_resume"`
		} `json:"responses"`
		Summary struct {
			Responses      int                `json:"responses"`
			Thresholds     []float64          `json:"thresholds_s"`
			ContinuousRate map[string]float64 `json:"continuous_rate"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	// Hand-computed in replay.TestRun: doc 0.2 s / 2 events, stereo 0.4 s;
	// continuous at 100 ms 2/4, at 250 ms 3/4. 100ms duplicates 0.1.
	if doc.Format != "trace" || len(doc.Responses) != 4 || doc.Summary.Responses != 4 || len(doc.Summary.Thresholds) != 2 {
		t.Fatalf("document %+v", doc)
	}
	d := doc.Responses[0]
	if d.ID != "doc" || d.MaxUnderrunS != 0.2 || d.Events != 2 || d.OK["100"] || !d.OK["250"] || d.StallResume.Stalls != 1 {
		t.Fatalf("doc response %+v", d)
	}
	if doc.Summary.ContinuousRate["100"] != 0.5 || doc.Summary.ContinuousRate["250"] != 0.75 {
		t.Fatalf("rates %v", doc.Summary.ContinuousRate)
	}
}

func TestReplayCmdTableAndCSV(t *testing.T) {
	path := filepath.Join(replayTestdata, "run.jsonl")
	out, stderr, code := runReplayCmd(t, "", "replay", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"Responses", path, "r1", "r4", "Summary", "failed 1, no_audio 1, warmup 1", "continuous <=100ms", "50.0%", "Mode default"} {
		if !strings.Contains(out, want) {
			t.Errorf("table output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "w0") {
		t.Errorf("warm-up request replayed:\n%s", out)
	}

	// CSV from stdin, reference mode: r1 has one 300 ms underrun
	// (0.5*48000 - 9600 = 14400 bytes).
	data := readTestFile(t, path)
	out, stderr, code = runReplayCmd(t, data, "replay", "-", "--format", "csv", "--mode", "reference")
	if code != 0 {
		t.Fatalf("csv exit %d: %s", code, stderr)
	}
	if !strings.HasPrefix(out, "table,row,column,value\n") || !strings.Contains(out, "\nResponses,r1,max underrun (ms),300.0\n") || !strings.Contains(out, "\nSummary,") {
		t.Errorf("csv output:\n%s", out)
	}
}

func TestReplayCmdErrors(t *testing.T) {
	traces := filepath.Join(replayTestdata, "traces.jsonl")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"malformed file", []string{"replay", filepath.Join(replayTestdata, "malformed.jsonl")}, `malformed.jsonl:3: "arrivals_s" has 2 entries but "bytes" has 1`},
		{"missing file", []string{"replay", filepath.Join(t.TempDir(), "none.jsonl")}, "none.jsonl"},
		{"no file", []string{"replay"}, "accepts 1 arg"},
		{"bad threshold", []string{"replay", traces, "--threshold", "soon"}, `--threshold: "soon"`},
		{"negative threshold", []string{"replay", traces, "--threshold", "-1"}, "non-negative"},
		{"bad mode", []string{"replay", traces, "--mode", "exact"}, "--mode"},
		{"bad format", []string{"replay", traces, "--format", "xml"}, "--format"},
		{"negative prebuffer", []string{"replay", traces, "--prebuffer", "-1s"}, "must not be negative"},
		{"unknown flag", []string{"replay", traces, "--nope"}, "unknown flag"},
	} {
		out, stderr, code := runReplayCmd(t, "", c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", c.name, code, stderr, c.want)
		}
		if out != "" {
			t.Errorf("%s: wrote to stdout: %q", c.name, out)
		}
	}
}

func readTestFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
