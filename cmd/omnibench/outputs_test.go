package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/simulator"
)

// A results file cut off in the middle of its last line (what SIGKILL
// during a large write leaves) still serves report, compare and replay:
// every complete record is used and the cut is warned about once.
func TestCutOffResultsFileStillReads(t *testing.T) {
	bin := buildRunBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	// No scrape: the file is the header, the records and the client line.
	_, stderr, code, err := execRun(t, "-n", "5", "-c", "1", "--warmup", "0", "--settle", "0", "--scrape", "off", "--scenario", "tts-short", "--out", path)
	if code != 0 {
		t.Fatalf("run: exit %d (%v)\n%s", code, err, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A run killed while writing a record has not written the client line
	// that ends a finished run's file: drop it, then cut the last record.
	lastStart := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	if !bytes.Contains(data[lastStart:], []byte(`"type":"client"`)) {
		t.Fatalf("the file does not end with the client line: %s", data[lastStart:])
	}
	data = data[:lastStart]
	lastStart = bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
	cut := data[:lastStart+(len(data)-lastStart)/2] // half of the last record
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"report", path},
		{"compare", path, path},
		{"replay", path},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, args...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		cancel()
		if err != nil {
			t.Errorf("%s: %v\nstderr:\n%s", args[0], err, errb.String())
			continue
		}
		warning := path + ":6: the last line is cut off"
		want := 1
		if args[0] == "compare" {
			want = 2 // one per file read
		}
		if n := strings.Count(errb.String(), warning); n != want {
			t.Errorf("%s: %d warnings %q, want %d:\n%s", args[0], n, warning, want, errb.String())
		}
		if out.Len() == 0 {
			t.Errorf("%s printed nothing", args[0])
		}
	}
	if out, _ := exec.Command(bin, "report", path, "--format", "json").Output(); !bytes.Contains(out, []byte(`"requests": 4`)) && !bytes.Contains(out, []byte(`"completed": 4`)) {
		t.Errorf("report does not count the 4 complete records:\n%.2000s", out)
	}
}

// Two output flags naming one file are refused before the run (exit 2).
func TestRunRefusesOutputsNamingOneFile(t *testing.T) {
	dir := t.TempDir()
	x := filepath.Join(dir, "x.json")
	link := filepath.Join(dir, "link.json")
	if err := os.WriteFile(x, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(x, link); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]string{{"--out", "--summary"}, {"--summary", "--html"}, {"--html", "--junit"}, {"--out", "--metrics-out"}} {
		for _, second := range []string{x, filepath.Join(dir, ".", "x.json"), link} {
			_, stderr, code, err := execRun(t, "-n", "1", pair[0], x, pair[1], second)
			if code != 2 || err == nil || !strings.Contains(err.Error(), "name the same file") {
				t.Errorf("%s %s %s %s: exit %d (%v)\n%s", pair[0], x, pair[1], second, code, err, stderr)
			}
		}
	}
	if data, _ := os.ReadFile(x); string(data) != "keep" {
		t.Errorf("the file was touched: %q", data)
	}
}

// One output that cannot be written does not drop the others: the report
// is printed, the other files are written, and the exit status (1) names
// what failed.
func TestRunOneOutputFailingKeepsTheOthers(t *testing.T) {
	dir := t.TempDir()
	blocked := filepath.Join(dir, "no-such-dir", "file")
	files := map[string]string{
		"--summary": filepath.Join(dir, "run.json"), "--html": filepath.Join(dir, "run.html"),
		"--junit": filepath.Join(dir, "slo.xml"), "--out": filepath.Join(dir, "run.jsonl"),
	}
	for _, failing := range []string{"--summary", "--html", "--junit"} {
		args := []string{"-n", "2", "-c", "1", "--warmup", "0", "--settle", "0", "--slo", "error_rate<0.5"}
		for flag, path := range files {
			_ = os.Remove(path)
			if flag == failing {
				path = blocked
			}
			args = append(args, flag, path)
		}
		stdout, stderr, code, err := execRun(t, args...)
		if code != 1 || err == nil || !strings.Contains(err.Error(), failing) {
			t.Errorf("%s failing: exit %d (%v), want 1 naming it\n%s", failing, code, err, stderr)
		}
		if !strings.Contains(stdout, "TTFP") && !strings.Contains(stdout, "ttfp") {
			t.Errorf("%s failing: no report on stdout:\n%s", failing, stdout)
		}
		for flag, path := range files {
			if flag == failing {
				continue
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s failing: %s not written: %v", failing, flag, err)
			}
		}
	}
}

// ab scrapes each arm's /metrics after its last round; an endpoint that
// never answers costs --scrape-timeout and becomes a note in the result.
func TestABHungScrapeIsANote(t *testing.T) {
	sim, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			<-r.Context().Done() // never answers
			return
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer hung.Close()
	ok := httptest.NewServer(sim.Handler())
	defer ok.Close()
	out, stderr, err := runAB(t, "--a-url", hung.URL, "--b-url", ok.URL, "-n", "2", "--rounds", "1", "--settle", "0",
		"--scrape-timeout", "200ms", "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var doc struct {
		A struct {
			Metrics struct {
				Error string `json:"error"`
			} `json:"metrics"`
		} `json:"a"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(doc.A.Metrics.Error, "no answer within 200ms") {
		t.Errorf("arm A metrics error %q, want the hung scrape named", doc.A.Metrics.Error)
	}
}

// --save-scrapes writes the snapshots as files diff reads, and the summary
// names them instead of embedding their bodies.
func TestRunSummaryNamesSavedScrapes(t *testing.T) {
	url := startRunSim(t, runSimConfig(t))
	dir := t.TempDir()
	sum, prefix := filepath.Join(dir, "run.json"), filepath.Join(dir, "run")
	_, stderr, code, err := execRun(t, "--url", url, "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0",
		"--summary", sum, "--save-scrapes", prefix)
	if code != 0 {
		t.Fatalf("exit %d (%v)\n%s", code, err, stderr)
	}
	doc := decodeRunDocument(t, sum, []byte(readTestFile(t, sum)))
	if doc.Server == nil || doc.Server.Before == nil || doc.Server.After == nil {
		t.Fatalf("no snapshots described: %+v", doc.Server)
	}
	data := readTestFile(t, sum)
	if strings.Contains(data, "# HELP") || strings.Contains(data, `"body"`) {
		t.Error("the summary embeds a snapshot body")
	}
	for _, s := range []struct {
		file  string
		bytes int
	}{{doc.Server.Before.File, doc.Server.Before.Bytes}, {doc.Server.After.File, doc.Server.After.Bytes}} {
		if !strings.HasPrefix(s.file, prefix+".") || s.bytes == 0 {
			t.Errorf("snapshot file %q, %d bytes", s.file, s.bytes)
			continue
		}
		if _, err := os.Stat(s.file); err != nil {
			t.Errorf("the summary names %s, which was not written: %v", s.file, err)
		}
	}
	root := newRootCmd("test")
	var out bytes.Buffer
	root.SetArgs([]string{"diff", doc.Server.Before.File, doc.Server.After.File})
	root.SetOut(&out)
	root.SetErr(&out)
	if err := root.ExecuteContext(context.Background()); err != nil {
		t.Errorf("diff of the saved scrapes: %v\n%s", err, out.String())
	}
}
