package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/omnibench/omnibench/internal/breakdown"
	"github.com/omnibench/omnibench/load"
)

// breakdownSection is the text of the breakdown's tables in a text report:
// from the stages table's title to the next table after the attribution.
func breakdownSection(t *testing.T, text string) string {
	t.Helper()
	i := strings.Index(text, breakdown.TitleStages)
	j := strings.Index(text, breakdown.TitleAttribution)
	if i < 0 || j < i {
		t.Fatalf("no breakdown in the report:\n%s", text)
	}
	end := strings.Index(text[j:], "\n\n")
	if end < 0 {
		end = len(text) - j
	}
	return text[i : j+end]
}

// report re-renders the breakdown a run printed from its results file
// alone, in text and JSON.
func TestReportRerendersBreakdown(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	stdout, stderr, err := runRunCmd(t, "-n", "2", "-c", "2", "--warmup", "0", "--scrape", "on", "--scrape-interval", "1ms", "--out", path)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr)
	}
	ran := breakdownSection(t, stdout)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `{"type":"scrape","phase":"first"`) ||
		!strings.Contains(string(raw), `{"type":"scrape","phase":"last"`) {
		t.Fatalf("the results file has no first and last scrape lines")
	}
	text, errText := runRoot(t, "report", path)
	if errText != nil {
		t.Fatalf("report: %v", errText)
	}
	if got := breakdownSection(t, text); got != ran {
		t.Errorf("report's breakdown:\n%s\nthe run's:\n%s", got, ran)
	}
	js, err := runRoot(t, "report", path, "--format", "json")
	if err != nil {
		t.Fatalf("report --format json: %v", err)
	}
	var doc reportDocument
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Breakdown == nil || !doc.Breakdown.Computable || doc.Breakdown.Requests != 2 || len(doc.ServerTimeline) == 0 {
		t.Errorf("report's JSON breakdown %+v, %d timeline points", doc.Breakdown, len(doc.ServerTimeline))
	}
}

// runRoot runs the root command with args and returns its stdout.
func runRoot(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errOut strings.Builder
	root := newRootCmd("test")
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	if err != nil {
		t.Logf("stderr: %s", errOut.String())
	}
	return out.String(), err
}

// Interval scrapes are on by default only for runs bounded by a duration
// over a minute; a given --scrape-interval always wins.
func TestScrapeIntervalDefault(t *testing.T) {
	for _, c := range []struct {
		args     []string
		duration time.Duration
		want     time.Duration
	}{
		{nil, 0, 0},
		{nil, time.Minute, 0},
		{nil, 2 * time.Minute, defaultScrapeInterval},
		{[]string{"--scrape-interval", "0"}, time.Hour, 0},
		{[]string{"--scrape-interval", "2s"}, 0, 2 * time.Second},
	} {
		f := pflag.NewFlagSet("run", pflag.ContinueOnError)
		var given time.Duration
		f.DurationVar(&given, "scrape-interval", 0, "")
		if err := f.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := scrapeInterval(f, given, load.Config{Duration: c.duration}); got != c.want {
			t.Errorf("%v with --duration %v: %v, want %v", c.args, c.duration, got, c.want)
		}
	}
}

// An SLO on a figure of the breakdown passes and fails on the server's own
// value, in the run and again in the report of its results file.
func TestSLOOnBreakdownFigure(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	pass := `server_stage_e2e_mean{stage="2"}<1m`
	_, stderr, err := runRunCmd(t, "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "on", "--out", path,
		"--slo", pass, "--slo", "replica_imbalance<1000")
	if err != nil {
		t.Fatalf("run with SLOs the server meets: %v\n%s", err, stderr)
	}
	miss := `server_stage_e2e_mean{stage="2"}<1us`
	stdout, _, err := runRunCmd(t, "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "on", "--slo", miss)
	if code := exitCodeTo(context.Background(), io.Discard, err); code != 3 {
		t.Fatalf("run with an SLO the server misses: exit %d (%v), want 3\n%s", code, err, stdout)
	}
	if !strings.Contains(stdout, `server_stage_e2e_mean{stage="2"}`) {
		t.Errorf("the verdict does not name the server figure:\n%s", stdout)
	}
	if _, err := runRoot(t, "report", path); err != nil {
		t.Errorf("report of the passing run: %v", err)
	}
	if _, err := runRoot(t, "report", path, "--slo", miss); exitCodeTo(context.Background(), io.Discard, err) != 3 {
		t.Errorf("report --slo %s: %v, want exit 3", miss, err)
	}
}

// compare shows the per-stage differences of two runs' breakdowns, in
// text and JSON, when both results files have scrape lines.
func TestCompareShowsBreakdownDiff(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for _, name := range []string{"a.jsonl", "b.jsonl"} {
		path := filepath.Join(dir, name)
		if _, stderr, err := runRunCmd(t, "-n", "3", "-c", "1", "--warmup", "0", "--scrape", "on", "--out", path); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr)
		}
		paths = append(paths, path)
	}
	text, err := runRoot(t, "compare", paths[0], paths[1])
	if err != nil {
		t.Fatalf("compare: %v", err)
	}
	if !strings.Contains(text, breakdown.TitleDiff) || !strings.Contains(text, "pipeline") {
		t.Errorf("compare shows no breakdown comparison:\n%s", text)
	}
	js, err := runRoot(t, "compare", paths[0], paths[1], "--format", "json")
	if err != nil {
		t.Fatalf("compare --format json: %v", err)
	}
	var doc struct {
		Breakdown *breakdown.Diff `json:"breakdown"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if d := doc.Breakdown; d == nil || len(d.Reasons) > 0 || len(d.Stages) == 0 || d.Pipeline.A.Requests != 3 {
		t.Errorf("compare's JSON breakdown %+v", d)
	}
}
