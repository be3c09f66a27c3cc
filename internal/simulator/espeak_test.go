package simulator

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/audiocheck"
	"github.com/omnibench/omnibench/internal/audio/wav"
)

const spokenText = "The quick brown fox jumps over the lazy dog. Then it runs away into the forest."

// needEspeak skips a test where espeak-ng is not installed.
func needEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (Debian package espeak-ng): the spoken voice is not tested")
	}
}

func espeakConfig(f Faults) Config {
	cfg := testConfig()
	cfg.VoiceEngine = VoiceEspeak
	cfg.Faults = f
	return cfg
}

// espeakDirect runs espeak-ng as the engine does and returns its PCM at
// its own rate, for comparison.
func espeakDirect(t *testing.T, text string) (int, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "espeak-ng", "-v", "en-us", "-s", "150", "--stdout")
	cmd.Stdin = strings.NewReader(text)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("espeak-ng: %v", err)
	}
	h, err := wav.ParseHeader(out)
	if err != nil {
		t.Fatalf("espeak-ng's WAV: %v", err)
	}
	return h.Format.SampleRate, out[h.DataOffset:]
}

func check(t *testing.T, pcm []byte) audiocheck.Report {
	t.Helper()
	a, err := audiocheck.New(audiocheck.Config{SampleRate: 24000, Channels: 1})
	if err != nil {
		t.Fatal(err)
	}
	a.Write(pcm)
	return a.Report()
}

// TestEspeakVoice: with --voice-engine espeak-ng a speech response is
// espeak-ng's speech of the input at the model's rate (as long as espeak-ng
// makes it, resampled from 22,050 Hz), streamed in the same chunks as
// the whole file, and sound: no defects.
func TestEspeakVoice(t *testing.T) {
	needEspeak(t)
	run := startSim(t, espeakConfig(Faults{}))
	status, _, pcm := doSpeech(t, run, speechReq(spokenText, map[string]any{"response_format": "pcm"}))
	if status != 200 {
		t.Fatalf("status %d: %s", status, pcm)
	}
	rate, direct := espeakDirect(t, spokenText)
	wantFrames := (len(direct)/2-1)*24000/rate + 1
	if len(pcm) != 2*wantFrames {
		t.Errorf("%d frames, want %d (espeak-ng's %d frames at %d Hz, resampled to 24 kHz)", len(pcm)/2, wantFrames, len(direct)/2, rate)
	}
	if r := check(t, pcm); r.Defects != 0 || r.AllSilent || r.RMSDBFS < -35 {
		t.Errorf("spoken audio: %+v, defects %q", r, r.Defects)
	}
	_, _, streamed := doSpeech(t, run, speechReq(spokenText, map[string]any{"stream_format": "audio", "response_format": "pcm", "stream": true}))
	if !bytes.Equal(streamed, pcm) {
		t.Errorf("streamed PCM (%d bytes) differs from the whole file (%d bytes)", len(streamed), len(pcm))
	}
	_, _, fast := doSpeech(t, run, speechReq(spokenText, map[string]any{"speed": 2.0, "response_format": "pcm"}))
	if !(len(fast) < len(pcm)*3/4) {
		t.Errorf("speed 2: %d bytes, not much shorter than %d at speed 1", len(fast), len(pcm))
	}
}

// TestEspeakVoiceFaults: each fault at probability 1 damages the speech so
// that the signal checks see it: the mute an internal gap, the clip a
// clipped share, the cut an abrupt end, and the swap another request's
// audio.
func TestEspeakVoiceFaults(t *testing.T) {
	needEspeak(t)
	clean := func() []byte {
		run := startSim(t, espeakConfig(Faults{}))
		_, _, pcm := doSpeech(t, run, speechReq(spokenText, map[string]any{"response_format": "pcm"}))
		return pcm
	}()
	for _, tc := range []struct {
		name   string
		faults Faults
		ok     func(r audiocheck.Report, pcm []byte) bool
	}{
		{"mute", Faults{VoiceMute: 1}, func(r audiocheck.Report, pcm []byte) bool {
			return r.Defects == audiocheck.InternalGap && r.LongestInternalGap >= 1490*time.Millisecond && len(pcm) == len(clean)
		}},
		{"clip", Faults{VoiceClip: 1}, func(r audiocheck.Report, pcm []byte) bool {
			return r.Defects == audiocheck.Clipped && len(pcm) == len(clean)
		}},
		{"cut end", Faults{VoiceCutEnd: 1}, func(r audiocheck.Report, pcm []byte) bool {
			return r.Defects == 0 && r.AbruptEnd && bytes.HasPrefix(clean, pcm) && len(pcm) >= int(float64(len(clean)/2)*voiceCutKeep)*2 && len(pcm) < len(clean)*3/4
		}},
	} {
		run := startSim(t, espeakConfig(tc.faults))
		status, _, pcm := doSpeech(t, run, speechReq(spokenText, map[string]any{"response_format": "pcm"}))
		if r := check(t, pcm); status != 200 || !tc.ok(r, pcm) {
			t.Errorf("%s: status %d, %d bytes (clean %d), %+v defects %q", tc.name, status, len(pcm), len(clean), r, r.Defects)
		}
	}
	if r := check(t, clean); r.AbruptEnd {
		t.Errorf("clean speech ends abruptly: %+v", r)
	}
	run := startSim(t, espeakConfig(Faults{VoiceSwap: 1}))
	_, _, first := doSpeech(t, run, speechReq(spokenText, map[string]any{"response_format": "pcm"}))
	_, _, second := doSpeech(t, run, speechReq("Good night", map[string]any{"response_format": "pcm"}))
	_, _, third := doSpeech(t, run, speechReq("Good night", map[string]any{"response_format": "pcm"}))
	if !bytes.Equal(second, clean) || !bytes.Equal(third, clean) || bytes.Equal(first, clean) {
		t.Errorf("swap: the second and third requests' audio is the first's text: %v %v; the first (no earlier text) is not: %v",
			bytes.Equal(second, clean), bytes.Equal(third, clean), !bytes.Equal(first, clean))
	}
}

// TestEspeakLimits: the output cap and the deadline fail a synthesis with
// an error that says so.
func TestEspeakLimits(t *testing.T) {
	needEspeak(t)
	e, err := NewEspeak(Espeak{MaxBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Speak(t.Context(), spokenText, 1, 24000); err == nil || !strings.Contains(err.Error(), "over 1000 bytes") {
		t.Errorf("capped output: %v", err)
	}
	e, _ = NewEspeak(Espeak{Timeout: time.Nanosecond})
	if _, err := e.Speak(t.Context(), spokenText, 1, 24000); err == nil {
		t.Error("1 ns deadline: no error")
	}
	if _, err := NewEspeak(Espeak{Path: "/nonexistent/espeak-ng"}); err == nil || !strings.Contains(err.Error(), "Debian package espeak-ng") {
		t.Errorf("missing program: %v", err)
	}
}

// TestResampleLinear: by hand, 2 Hz to 3 Hz (frame 4 sits 2/3 of the way
// from 600 to -601: 600 - 800.67, rounded -201); and a 440 Hz sine sampled at
// 22,050 Hz and resampled to 24 kHz stays within 0.2 % of full scale of
// the sine sampled at 24 kHz directly (the interpolation error of a 440 Hz
// sine at 22 kHz is about (pi*440/22050)^2/2 of its amplitude).
func TestResampleLinear(t *testing.T) {
	in := s16(0, 300, 600, -601)
	if got := samplesOf(resampleLinear(in, 2, 3)); !equalInts(got, []int{0, 200, 400, 600, -201}) {
		t.Errorf("2 to 3 Hz: %v, want [0 200 400 600 -201]", got)
	}
	if got := samplesOf(resampleLinear(in, 3, 2)); !equalInts(got, []int{0, 450, -601}) {
		t.Errorf("3 to 2 Hz: %v, want [0 450 -601]", got)
	}
	sineAt := func(rate, n int) []byte {
		b := make([]byte, 2*n)
		for i := range n {
			binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(math.Round(16000*math.Sin(2*math.Pi*440*float64(i)/float64(rate))))))
		}
		return b
	}
	got := samplesOf(resampleLinear(sineAt(22050, 22050), 22050, 24000))
	want := samplesOf(sineAt(24000, 24000))
	if len(got) != 24000-1 {
		t.Fatalf("%d frames, want 23999 (the last whole position inside one second)", len(got))
	}
	for i, g := range got {
		if math.Abs(float64(g-want[i])) > 0.002*32768 {
			t.Fatalf("frame %d: %d, want %d within 0.2%%", i, g, want[i])
		}
	}
}

func s16(v ...int) []byte {
	b := make([]byte, 2*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint16(b[2*i:], uint16(int16(x)))
	}
	return b
}

func samplesOf(b []byte) []int {
	x := make([]int, len(b)/2)
	for i := range x {
		x[i] = int(int16(binary.LittleEndian.Uint16(b[2*i:])))
	}
	return x
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestVoiceConfig: an unknown engine, and voice faults without the spoken
// voice, are configuration errors naming the flag or field.
func TestVoiceConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{VoiceEngine: "festival"}, `--voice-engine: "festival"`},
		{Config{Faults: Faults{VoiceClip: 0.5}}, "--fault-voice-clip: damages the spoken voice; needs --voice-engine espeak-ng"},
		{Config{VoiceEngine: VoiceEspeak, Faults: Faults{VoiceMute: 2}}, "--fault-voice-mute: probability 2"},
		{Config{VoiceEngine: VoiceEspeak, Faults: Faults{VoiceMuteFor: -time.Second}}, "--fault-voice-mute-for: -1s is outside"},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg.Faults, err, tc.want)
		}
	}
}

// countingEngine speaks every text as len(text) frames of its first byte,
// counting its calls: the engine behind the cache under test.
type countingEngine struct{ calls int }

func (e *countingEngine) Speak(_ context.Context, text string, _ float64, _ int) ([]byte, error) {
	e.calls++
	return bytes.Repeat([]byte{text[0], 0}, len(text)), nil
}

// TestVoiceCache: the cache serves a repeated text without the engine,
// holds at most its byte bound (dropping the least recently used text
// first), and does not keep a text larger than the bound.
func TestVoiceCache(t *testing.T) {
	e := &countingEngine{}
	c := newVoiceCache(e, 24000, 40) // room for two 10-character texts (20 bytes each)
	speak := func(text string) {
		t.Helper()
		if pcm, err := c.speak(t.Context(), text, 1); err != nil || len(pcm) != 2*len(text) || pcm[0] != text[0] {
			t.Fatalf("%q: %d bytes, %v", text, len(pcm), err)
		}
	}
	for _, text := range []string{"aaaaaaaaaa", "bbbbbbbbbb", "aaaaaaaaaa"} {
		speak(text)
	}
	if e.calls != 2 {
		t.Errorf("%d engine calls for two texts, want 2", e.calls)
	}
	speak("cccccccccc") // evicts b, the least recently used
	speak("aaaaaaaaaa")
	speak("bbbbbbbbbb")
	if e.calls != 4 || c.bytes > 40 || c.order.Len() != 2 {
		t.Errorf("%d calls (want 4: a, b, c, b again), %d bytes in %d entries (bound 40)", e.calls, c.bytes, c.order.Len())
	}
	speak(strings.Repeat("d", 30)) // 60 bytes: not kept
	if c.bytes > 40 || c.order.Len() != 2 {
		t.Errorf("after a text over the bound: %d bytes in %d entries", c.bytes, c.order.Len())
	}
}

type failingEngine struct{}

func (failingEngine) Speak(context.Context, string, float64, int) ([]byte, error) {
	return nil, errors.New("synthesizer crashed")
}

// TestVoiceEngineFailure: when the engine cannot speak a text the request
// fails as a generation error (a 500 for a whole file), not with the tone
// voice in its place.
func TestVoiceEngineFailure(t *testing.T) {
	cfg := espeakConfig(Faults{})
	cfg.voiceEngine = failingEngine{}
	run := startSim(t, cfg)
	if status, _, body := doSpeech(t, run, speechReq(spokenText, map[string]any{"response_format": "pcm"})); status != 500 {
		t.Errorf("status %d (%d bytes), want 500", status, len(body))
	}
}

// TestEspeakChat: a streaming chat response speaks its reply text with the
// same voice as a speech request for that text, in events of the planned
// chunk size.
func TestEspeakChat(t *testing.T) {
	needEspeak(t)
	run := startSim(t, espeakConfig(Faults{}))
	cs := doChat(t, run, chatReq(spokenText, nil))
	pcm := pcmOf(t, cs.audio, true)
	_, _, want := doSpeech(t, run, speechReq(spokenText, map[string]any{"response_format": "pcm"}))
	if len(pcm) == 0 || !bytes.Equal(pcm, want) {
		t.Errorf("chat audio: %d bytes; the speech of its text: %d bytes; equal %v", len(pcm), len(want), bytes.Equal(pcm, want))
	}
	for i, a := range cs.audio[:len(cs.audio)-1] {
		if h, _ := wav.ParseHeader(a); h.DataSize != 4800 {
			t.Errorf("audio event %d: %d PCM bytes, want 4800 (0.1 s chunks)", i, h.DataSize)
		}
	}
}
