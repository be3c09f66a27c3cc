package simulator

import (
	"encoding/base64"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/omnibench/omnibench/internal/audio/input"
	"github.com/omnibench/omnibench/internal/audio/wav"
)

// wavFile is seconds of 16 kHz mono silence as a WAV file.
func wavFile(seconds float64) []byte {
	return wav.Encode(wav.Format{SampleRate: 16000, Channels: 1, BitsPerSample: 16}, make([]byte, 2*int(seconds*16000)))
}

func wavBase64(seconds float64) string { return base64.StdEncoding.EncodeToString(wavFile(seconds)) }

// voiceChat is a chat body whose user message is a question of seconds
// of audio in the given style, and no text.
func voiceChat(style string, seconds float64) map[string]any {
	part := map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": wavBase64(seconds), "format": "wav"}}
	if style == "audio_url" {
		part = map[string]any{"type": "audio_url", "audio_url": map[string]any{"url": input.DataURL("wav", wavBase64(seconds))}}
	}
	return map[string]any{
		"stream": true, "stream_options": map[string]any{"include_usage": true}, "modalities": []string{"text"},
		"messages": []any{map[string]any{"role": "user", "content": []any{part}}},
	}
}

// The prefill of the plan grows by AudioPrefill per second of input audio,
// exactly: the same generator with 1 s and 4 s of audio differ by 3 *
// AudioPrefill in both first-event times.
func TestPlanPrefillGrowsWithInputAudio(t *testing.T) {
	tm := DefaultTiming()
	draw := func(audioS float64) *plan {
		r := rand.New(rand.NewPCG(7, 9))
		return newPlan(r, tm, Faults{}, planInput{words: 5, textRunes: 30, speed: 1, audio: true, sampleRate: 24000, audioInS: audioS})
	}
	short, long := draw(1), draw(4)
	want := 3 * tm.AudioPrefill // 60 ms with the default 20 ms per second
	if d := long.firstText(tm, 1) - short.firstText(tm, 1); d != want {
		t.Errorf("first text grows by %v, want %v", d, want)
	}
	if d := long.firstAudio(tm, 2) - short.firstAudio(tm, 2); d != 2*want {
		t.Errorf("first audio at slowdown 2 grows by %v, want %v", d, 2*want)
	}
	if none := draw(0); none.firstText(tm, 1) != time.Duration(float64(tm.TTFT)*none.ttftMul) {
		t.Error("no input audio changed the first text time")
	}
}

// Through HTTP, in both chat styles: the prompt tokens count the audio
// (12.5 per second), and the server-side prefill (the thinker's TTFT and
// prefill histograms, which hold the plan's model time, not wall time)
// grows with the length of the spoken question.
func TestChatPrefillGrowsWithInputAudio(t *testing.T) {
	for _, style := range []string{"input_audio", "audio_url"} {
		t.Run(style, func(t *testing.T) {
			cfg := testConfig()
			cfg.Timing.AudioPrefill = 50 * time.Millisecond
			run := startSim(t, cfg)
			stage0 := map[string]string{"stage": "0", "replica": "0"}
			var prev dto.Histogram
			meanPrefill := func() float64 {
				mfs, _ := scrape(t, run.URL, "")
				h := sample(mfs, "vllm:request_prefill_time_seconds", stage0).GetHistogram()
				n := h.GetSampleCount() - prev.GetSampleCount()
				mean := (h.GetSampleSum() - prev.GetSampleSum()) / float64(n)
				prev.SampleCount, prev.SampleSum = h.SampleCount, h.SampleSum
				return mean
			}
			var means []float64
			for _, seconds := range []float64{0.5, 2, 4} {
				var tokens int
				for range 3 {
					cs := doChat(t, run, voiceChat(style, seconds))
					last := cs.chunks[len(cs.chunks)-1]
					if last.Usage == nil {
						t.Fatal("no usage chunk")
					}
					tokens = last.Usage.PromptTokens
				}
				// No text: one token for the empty text plus ceil(12.5 * s).
				if want := 1 + int(math.Ceil(seconds*12.5)); tokens != want {
					t.Errorf("%v s: prompt tokens %d, want %d", seconds, tokens, want)
				}
				means = append(means, meanPrefill())
			}
			// With no jitter the prefill is TTFT + 50 ms per second of audio.
			for i, s := range []float64{0.5, 2, 4} {
				want := cfg.Timing.TTFT.Seconds() + s*0.05
				if math.Abs(means[i]-want) > 1e-9 {
					t.Errorf("%v s of audio: mean server prefill %v s, want %v s", s, means[i], want)
				}
			}
			if !(means[0] < means[1] && means[1] < means[2]) {
				t.Errorf("prefill means %v do not grow with the input audio", means)
			}
		})
	}
}

func TestSpeechRefAudioCountsAndRejects(t *testing.T) {
	run := startSim(t, testConfig())
	body := func(ref string) map[string]any {
		return map[string]any{"input": "Hello there.", "stream_format": "audio", "response_format": "pcm",
			"task_type": "Base", "ref_audio": ref, "ref_text": "A reference."}
	}
	resp := post(t, t.Context(), run.URL+"/v1/audio/speech", body(input.DataURL("wav", wavBase64(2))))
	_, _ = io.Copy(io.Discard, resp.Body) // the whole stream: the request then counts as finished
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	mfs, _ := scrape(t, run.URL, "")
	// ceil("Hello there." / 4) = 3 text tokens + 25 for 2 s of reference.
	if got := counter(mfs, "vllm:omni_prompt_tokens_total", nil); got != 28 {
		t.Errorf("prompt tokens %v, want the 28 of the text and the reference", got)
	}
	for _, tt := range []struct{ ref, want string }{
		{"https://example.com/voice.wav", "only data: URLs"},
		{"data:audio/wav;base64,@@@@", "illegal base64"},
		{input.DataURL("wav", base64.StdEncoding.EncodeToString([]byte("RIFF\x10\x00\x00\x00WAVEjunk"))), "cannot decode audio"},
		{input.DataURL("wav", base64.StdEncoding.EncodeToString([]byte("plain text"))), "not WAV, FLAC or MP3"},
	} {
		resp := post(t, t.Context(), run.URL+"/v1/audio/speech", body(tt.ref))
		status, typ, msg, param := apiErr(t, resp)
		if status != http.StatusBadRequest || typ != "BadRequestError" || !strings.Contains(msg, tt.want) || param == nil || *param != "ref_audio" {
			t.Errorf("%.40q: %d %s %q param %v, want a 400 on ref_audio saying %q", tt.ref, status, typ, msg, param, tt.want)
		}
	}
}

func TestChatRejectsMalformedInputAudio(t *testing.T) {
	run := startSim(t, testConfig())
	part := func(p map[string]any) map[string]any {
		return map[string]any{"stream": true, "messages": []any{map[string]any{"role": "user", "content": []any{
			map[string]any{"type": "text", "text": "Listen:"}, p}}}}
	}
	for _, tt := range []struct {
		part map[string]any
		want string
	}{
		{map[string]any{"type": "input_audio"}, "content[1].input_audio: field required"},
		{map[string]any{"type": "input_audio", "input_audio": map[string]any{"format": "wav"}}, "input_audio.data: field required"},
		{map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": "!!", "format": "wav"}}, "invalid base64"},
		{map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": wavBase64(1), "format": "ogg"}}, "unsupported audio format 'ogg'"},
		{map[string]any{"type": "input_audio", "input_audio": map[string]any{"data": base64.StdEncoding.EncodeToString(wavFile(1)[:100]), "format": "wav"}}, "declares 32000 bytes"},
		{map[string]any{"type": "audio_url", "audio_url": map[string]any{"url": "file:///etc/passwd"}}, "only data: URLs"},
		{map[string]any{"type": "audio_url"}, "audio_url: field required"},
	} {
		resp := post(t, t.Context(), run.URL+"/v1/chat/completions", part(tt.part))
		status, _, msg, param := apiErr(t, resp)
		if status != http.StatusBadRequest || !strings.Contains(msg, tt.want) || param == nil || *param != "messages" {
			t.Errorf("%v: %d %q, want a 400 saying %q", tt.part, status, msg, tt.want)
		}
	}
}
