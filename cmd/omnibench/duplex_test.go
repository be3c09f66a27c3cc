package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// fastServe are serve flags that make a response take milliseconds.
var fastServe = []string{"--ttft", "1ms", "--word-interval", "1ms", "--ttfa", "2ms", "--rtf", "0.01",
	"--audio-per-char", "3ms", "--min-audio", "100ms", "--max-audio", "400ms", "--chunk-audio", "40ms"}

// TestServeDuplexOnlyFailsChatRun: a chat run against `serve --duplex-only`
// (what a Qwen3-Omni duplex deploy does to it) exits 1 naming the route
// that is not available; with --duplex-chat the same run measures.
func TestServeDuplexOnlyFailsChatRun(t *testing.T) {
	url, _ := startServe(t, append([]string{"--duplex-only"}, fastServe...)...)
	args := []string{"--url", url, "--scenario", "chat-voice", "--kind", "chat", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0"}
	_, stderr, code, err := execRun(t, args...)
	said := stderr
	if err != nil {
		said += err.Error()
	}
	if code != 1 || !strings.Contains(said, "POST /v1/chat/completions is not available") {
		t.Fatalf("chat run against --duplex-only: exit %d, want 1 naming the route; said:\n%s", code, said)
	}

	url, _ = startServe(t, append([]string{"--duplex-only", "--duplex-chat"}, fastServe...)...)
	if _, stderr, code, _ := execRun(t, "--url", url, "--scenario", "chat-voice", "--kind", "chat", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0"); code != 0 {
		t.Fatalf("chat run against --duplex-only --duplex-chat: exit %d\n%s", code, stderr)
	}
}

// TestServeRealtimeEvents: `run --kind realtime` against serve in each
// spelling measures audio, and every record's ws block names the spelling.
func TestServeRealtimeEvents(t *testing.T) {
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{nil, results.EventsGA},
		{[]string{"--realtime-events", "legacy"}, results.EventsLegacy},
		{[]string{"--realtime-events", "ga", "--duplex-only"}, results.EventsGA},
	} {
		url, _ := startServe(t, append(tc.flags, fastServe...)...)
		out := filepath.Join(t.TempDir(), "r.jsonl")
		_, stderr, code, _ := execRun(t, "--url", url, "--scenario", "tts-short", "--model", "Qwen/Qwen3-Omni-30B-A3B-Instruct",
			"--kind", "realtime", "--turns-per-session", "2", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0", "--out", out)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.flags, code, stderr)
		}
		_, recs, err := results.ReadFile(out)
		if err != nil || len(recs) != 4 { // 2 sessions of 2 turns
			t.Fatalf("%v: %d records, %v", tc.flags, len(recs), err)
		}
		for _, r := range recs {
			if !r.OK() || !r.HasAudio() || r.WS == nil || r.WS.Events != tc.want {
				t.Errorf("%v: record %s %s, %d audio bytes, ws %+v; want audio and events %q", tc.flags, r.ErrorClass, r.Error, r.AudioBytes, r.WS, tc.want)
			}
		}
	}
}

// TestServeDuplexFlags: bad values are unusable input (exit 2) naming the
// flag, and the banner says how the duplex session speaks.
func TestServeDuplexFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--realtime-events", "beta"}, `--realtime-events: "beta" is neither "ga" nor "legacy"`},
		{[]string{"serve", "--duplex-chat"}, "--duplex-chat: only with --duplex-only"},
	} {
		if code, said := execContract(t, tc.args...); code != 2 || !strings.Contains(said, tc.want) {
			t.Errorf("%q: exit %d, want 2 with %q; said %s", tc.args, code, tc.want, said)
		}
	}
	if got := complete(t, "serve", "--realtime-events", ""); strings.Join(got, ",") != "ga,legacy" {
		t.Errorf("--realtime-events completes %q", got)
	}
	cfg, err := (&serveOptions{cfg: simulator.DefaultConfig(), replicas: "1,1,1"}).config()
	if err != nil {
		t.Fatal(err)
	}
	cfg.WS.RealtimeEvents, cfg.DuplexOnly = simulator.RealtimeEventsLegacy, true
	var banner bytes.Buffer
	writeServeBanner(&banner, "http://127.0.0.1:8000", cfg)
	for _, want := range []string{"duplex session events legacy (response.audio.*)\n", "duplex-only: the chat and speech routes answer not available\n"} {
		if !strings.Contains(banner.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, banner.String())
		}
	}
}
