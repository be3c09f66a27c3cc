package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/scenarios"
)

// --audio-format pcm alone takes the documented default rate, and an error
// about a value a flag set names the flag, not the scenario's YAML field.
func TestRunPCMFlagsNameTheFlag(t *testing.T) {
	t.Parallel()
	url := startRunSim(t, runSimConfig(t))
	out := filepath.Join(t.TempDir(), "run.jsonl")
	_, stderr, code, err := execRun(t, "--url", url, "--kind", "speech", "--audio-format", "pcm", "-n", "1", "--warmup", "0",
		"--settle", "0", "--out", out)
	if code != 0 {
		t.Fatalf("--audio-format pcm: exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	f, ferr := os.Open(out)
	if ferr != nil {
		t.Fatal(ferr)
	}
	defer f.Close()
	_, recs, rerr := results.Read(f)
	if rerr != nil || len(recs) != 1 || !recs[0].OK() || recs[0].SampleRate != scenarios.DefaultPCMSampleRate {
		t.Fatalf("records %+v (%v): want one %d Hz response", recs, rerr, scenarios.DefaultPCMSampleRate)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "speech", "--audio-format", "pcm", "--pcm-sample-rate", "5"}, "--pcm-sample-rate: must be between 1000 and 768000 Hz (got 5)"},
		{[]string{"--audio-format", "ogg"}, `--audio-format: must be wav, pcm`},
		{[]string{"--kind", "speech", "--audio-format", "mp3"}, "--audio-format: mp3 is measured for kind chat only"},
	} {
		_, _, code, err := execRun(t, append(tc.args, "-n", "1")...)
		if code != 2 || !strings.HasPrefix(fmt.Sprint(err), tc.want) || strings.Contains(fmt.Sprint(err), "_") {
			t.Errorf("run %q: exit %d, error %q; want exit 2 and %q", tc.args, code, err, tc.want)
		}
	}
}

// A misspelt command, flag or scenario is refused (exit 2) with the names
// meant; a flag after an unknown command is not the error.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"runn", "--url", "X"}, `unknown command "runn" for "omnibench"; did you mean run?`},
		{[]string{"run", "--urll", "X"}, "unknown flag: --urll; did you mean --url?"},
		{[]string{"run", "--concurency", "3"}, "did you mean --concurrency?"},
		{[]string{"sweep", "--concurency", "1,2"}, "did you mean --concurrency?"},
		{[]string{"check", "--runn", "x.jsonl"}, "did you mean --run?"},
		{[]string{"run", "--scenario", "tts-shrt"}, `unknown scenario "tts-shrt"; did you mean tts-short?`},
		{[]string{"scenarios", "chat-voise"}, "did you mean chat-voice?"},
	} {
		_, _, code, err := runMetricsCmd(t, tc.args...)
		if code != 2 || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("omnibench %q: exit %d, error %q; want exit 2 and %q", tc.args, code, err, tc.want)
		}
	}
}
