package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A results file cut off in the middle of its last line (what SIGKILL
// during a large write leaves) still serves report, compare and replay:
// every complete record is used and the cut is warned about once.
func TestCutOffResultsFileStillReads(t *testing.T) {
	bin := buildRunBinary(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "run.jsonl")
	_, stderr, code, err := execRun(t, "-n", "5", "-c", "1", "--warmup", "0", "--settle", "0", "--scenario", "tts-short", "--out", path)
	if code != 0 {
		t.Fatalf("run: exit %d (%v)\n%s", code, err, stderr)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lastStart := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1
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
