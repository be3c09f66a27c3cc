package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// TestWebSocketKindsThroughCommands runs the WebSocket kinds through run
// (with the exporter's textfile), compare, replay, sweep, capacity and ab:
// they all work on the kinds' records unchanged.
func TestWebSocketKindsThroughCommands(t *testing.T) {
	const model = "Qwen/Qwen3-TTS-12Hz-1.7B-CustomVoice" // tts-short's
	scfg := simulator.DefaultConfig()
	scfg.Timing = sweepFastTiming()
	scfg.Model = model
	url := sweepStartSimulator(t, scfg)
	dir := t.TempDir()
	files := map[string]string{}
	for _, tc := range []struct {
		kind string
		args []string
	}{
		{results.KindSpeechWS, []string{"--utterances-per-session", "3", "--text-rate", "1000"}},
		{results.KindRealtime, []string{"--turns-per-session", "3"}},
	} {
		out := filepath.Join(dir, tc.kind+".jsonl")
		prom := filepath.Join(dir, tc.kind+".prom")
		args := append([]string{"run", "--url", url, "--scenario", "tts-short", "--kind", tc.kind, "-n", "2", "-c", "2",
			"--warmup", "0", "--settle", "0", "--format", "json", "--out", out, "--metrics-out", prom}, tc.args...)
		stdout, stderr, code := sweepExec(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", tc.kind, code, stderr)
		}
		var doc struct {
			Summary struct {
				Requests struct {
					Total, Completed, Failed int
				} `json:"requests"`
			} `json:"summary"`
		}
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatal(err)
		}
		if r := doc.Summary.Requests; r.Total != 6 || r.Completed != 6 || r.Failed != 0 {
			t.Errorf("%s: requests %+v, want 6 of 2 sessions x 3", tc.kind, r)
		}
		if n := requestLines(out); n != 6 {
			t.Errorf("%s: %d records in the results file", tc.kind, n)
		}
		metrics, err := os.ReadFile(prom)
		found := false
		for _, line := range strings.Split(string(metrics), "\n") {
			if strings.HasPrefix(line, "omnibench:requests_success_total{") && strings.Contains(line, `finished_reason="stop"`) {
				found = strings.HasSuffix(line, " 6")
			}
		}
		if err != nil || !found {
			t.Errorf("%s: exporter textfile (%v) does not count 6 successful requests", tc.kind, err)
		}
		files[tc.kind] = out
	}

	if _, stderr, code := sweepExec(t, "compare", files[results.KindSpeechWS], files[results.KindSpeechWS]); code != 0 {
		t.Errorf("compare: exit %d\n%s", code, stderr)
	}
	if stdout, stderr, code := sweepExec(t, "replay", files[results.KindRealtime], "--format", "json"); code != 0 || !strings.Contains(stdout, `"responses"`) {
		t.Errorf("replay: exit %d\n%s\n%.300s", code, stderr, stdout)
	}

	stdout, stderr, code := sweepExec(t, "sweep", "-c", "1,2", "--url", url, "--scenario", "tts-short", "--kind", "speech-ws",
		"--utterances-per-session", "2", "-n", "2", "--warmup", "0", "--settle", "0", "--format", "json")
	if code != 0 {
		t.Fatalf("sweep: exit %d\n%s", code, stderr)
	}
	for _, l := range sweepDecode(t, stdout).Levels {
		if l.Figures.Requests != 4 || l.Figures.Completed != 4 {
			t.Errorf("sweep level %v: %+v", l.Level, l.Figures)
		}
	}

	cfg := scfg
	cfg.Capacity = 1
	capURL := sweepStartSimulator(t, cfg)
	stdout, stderr, code = sweepExec(t, "capacity", "--url", capURL, "--scenario", "tts-short", "--kind", "realtime",
		"--warmup", "0", "-n", "2", "--max", "4", "--settle", "0", "--slo", "audio_ttfp_p95<10s", "--format", "json")
	if code != 0 {
		t.Fatalf("capacity: exit %d\n%s", code, stderr)
	}
	if c := sweepDecode(t, stdout).Capacity; c == nil || c.Runs == 0 {
		t.Errorf("capacity: %+v", c)
	}

	out, stderr, err := runAB(t, "--log-stats", "--scenario", "tts-short", "--kind", "speech-ws", "--utterances-per-session", "2",
		"-n", "2", "--warmup", "0", "--settle", "0", "--format", "json", "--out", filepath.Join(dir, "ab"))
	if err != nil {
		t.Fatalf("ab: %v\n%s", err, stderr)
	}
	abCheckStats(t, abParseDoc(t, []byte(out)), 4)
}

func TestWebSocketFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kind", "speech-ws", "--turns-per-session", "2"}, "--turns-per-session applies only to --kind realtime"},
		{[]string{"--kind", "chat", "--text-rate", "3"}, "--text-rate applies only to --kind speech-ws"},
		{[]string{"--kind", "speech-ws", "--utterances-per-session", "0"}, "must be at least 1"},
		{[]string{"--kind", "speech-ws", "--ws-audio", "mp3"}, `--ws-audio "mp3": want stream, file, timestamps`},
		{[]string{"--kind", "realtime", "--ws-max-message-bytes", "0"}, "--ws-max-message-bytes 0"},
	} {
		root := newRootCmd("test")
		root.SetArgs(append([]string{"run", "--scenario", "tts-short", "-n", "1"}, tc.args...))
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		err := root.ExecuteContext(t.Context())
		if code := exitCodeTo(t.Context(), io.Discard, err); code != 2 || !strings.Contains(fmt.Sprint(err), tc.want) {
			t.Errorf("%v: exit %d, error %v, want 2 and %q", tc.args, code, err, tc.want)
		}
	}
}
