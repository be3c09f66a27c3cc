package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// run --kind realtime-audio --scenario voice-chat: the built-in spoken
// questions go to plain /v1/realtime of the simulator, two commit cycles per
// connection; every record counts its input audio and has both TTFPs.
func TestRunCmdRealtimeAudioVoiceChat(t *testing.T) {
	scfg := simulator.DefaultConfig()
	scfg.Timing = sweepFastTiming()
	scfg.Model = "Qwen/Qwen3-Omni-30B-A3B-Instruct" // voice-chat's
	url := sweepStartSimulator(t, scfg)
	out := filepath.Join(t.TempDir(), "rta.jsonl")
	stdout, stderr, code := sweepExec(t, "run", "--url", url, "--scenario", "voice-chat", "--kind", "realtime-audio",
		"--turns-per-session", "2", "--audio-pace", "25", "-n", "2", "-c", "2", "--warmup", "0", "--settle", "0",
		"--format", "json", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var doc struct {
		Summary struct {
			Requests struct{ Total, Completed, Failed int } `json:"requests"`
			Audio    struct {
				InputS float64 `json:"total_input_audio_s"`
			} `json:"audio"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if r := doc.Summary.Requests; r.Total != 4 || r.Completed != 4 || r.Failed != 0 {
		t.Errorf("requests %+v, want 4 of 2 sessions x 2", r)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sumS float64
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r results.Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.Type != "request" {
			continue
		}
		n++
		sumS += r.InputAudioS
		if r.Kind != results.KindRealtimeAudio || r.Endpoint != "/v1/realtime" || r.WS == nil || !r.HasAudio() {
			t.Fatalf("record %s: kind %s, endpoint %s, ws %+v, %d audio bytes", r.ID, r.Kind, r.Endpoint, r.WS, r.AudioBytes)
		}
		// The built-in questions are 16 kHz PCM16: 32000 bytes per second.
		if r.InputAudioS <= 0 || r.InputAudioBytes != int64(r.InputAudioS*32000+0.5) {
			t.Errorf("record %s: input %v s, %d bytes", r.ID, r.InputAudioS, r.InputAudioBytes)
		}
		if r.WS.TTFPFirstAppendS <= r.TTFPS || r.WS.SpeechLeadS <= 0 {
			t.Errorf("record %s: ttfp %v, from first append %v, lead %v", r.ID, r.TTFPS, r.WS.TTFPFirstAppendS, r.WS.SpeechLeadS)
		}
	}
	if n != 4 || doc.Summary.Audio.InputS <= 0 || abs(doc.Summary.Audio.InputS-sumS) > 1e-6 {
		t.Errorf("%d records, summary input audio %v s, records %v s", n, doc.Summary.Audio.InputS, sumS)
	}
}

// Input realtime-audio cannot send is unusable input (exit 2) naming the
// file, line and field, before any connection.
func TestRunCmdRealtimeAudioRefusals(t *testing.T) {
	dir := t.TempDir()
	pcm := make([]byte, 4800)
	writeTestFile(t, filepath.Join(dir, "hi.wav"), wav.Encode(wav.Format{SampleRate: 24000, Channels: 1, BitsPerSample: 16}, pcm))
	writeTestFile(t, filepath.Join(dir, "q.wav"), noiseWAV(0.2, 3))
	jsonl := func(name, content string) string {
		p := filepath.Join(dir, name)
		writeTestFile(t, p, []byte(content))
		return p
	}
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"24 kHz", []string{"--prompts", jsonl("rate.jsonl", `{"audio": "q.wav"}`+"\n"+`{"audio": "hi.wav"}`)},
			[]string{"rate.jsonl:2: audio:", "hi.wav", "24000 Hz", "16 kHz mono PCM16"}},
		{"text prompt", []string{"--prompts", jsonl("text.jsonl", `{"prompt": "hello"}`)},
			[]string{"text.jsonl:1: audio:", "builtin:voice"}},
		{"cloning", []string{"--prompts", jsonl("clone.jsonl", `{"audio": "q.wav", "ref_audio": "q.wav"}`)},
			[]string{"clone.jsonl:1: ref_audio:"}},
		{"pace for another kind", []string{"--kind", "realtime", "--audio-pace", "2"}, []string{"--audio-pace applies only to --kind realtime-audio"}},
		{"negative pace", []string{"--prompts", "builtin:voice", "--audio-pace", "-1"}, []string{"--audio-pace -1"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := []string{"--url", "http://127.0.0.1:1", "--kind", "realtime-audio", "-n", "1", "--settle", "0", "--scrape", "off"}
			_, stderr, code, err := execRun(t, append(args, tt.args...)...)
			if code != 2 || err == nil {
				t.Fatalf("exit %d (%v), want 2\nstderr:\n%s", code, err, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}
