package simulator

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// Voice engines (Config.VoiceEngine).
const (
	// VoiceTones is the default: every character a vowel-like tone
	// (synth.go), rendered as it streams, its length from the timing model.
	VoiceTones = "tones"
	// VoiceEspeak speaks the response's text with espeak-ng: real speech, so
	// that a transcript can be scored against the text asked for. The audio
	// is as long as espeak-ng makes it (Timing.AudioPerChar is unused);
	// Timing.MaxAudio still bounds it and Timing.MinAudio pads it with
	// silence.
	VoiceEspeak = "espeak-ng"
)

// VoiceEngine synthesizes the speech of a response's text.
type VoiceEngine interface {
	// Speak returns text spoken at speed (1 is normal) as s16le mono PCM at
	// sampleRate.
	Speak(ctx context.Context, text string, speed float64, sampleRate int) ([]byte, error)
}

// Defaults of Espeak.
const (
	DefaultEspeakVoice = "en-us"
	DefaultEspeakWPM   = 150
	// DefaultEspeakTimeout bounds one synthesis: espeak-ng speaks a long
	// paragraph in well under a second on an idle core.
	DefaultEspeakTimeout = 10 * time.Second
	// DefaultEspeakMaxBytes caps espeak-ng's output: 16 MiB is over six
	// minutes of its 22,050 Hz 16-bit audio, beyond any MaxAudio.
	DefaultEspeakMaxBytes = 16 << 20
)

// espeak-ng's accepted speaking rates, in words per minute.
const minEspeakWPM, maxEspeakWPM = 80, 450

// Espeak is the espeak-ng engine: it runs the program once per text, the
// text on its standard input (never parsed as options or markup), and
// resamples the WAV it writes to the requested rate by linear
// interpolation between neighbouring samples (exact integer arithmetic; no
// anti-alias filter: espeak-ng's 22,050 Hz output has little energy near
// the Nyquist frequency of 16 kHz and higher model rates).
type Espeak struct {
	Path           string        // the program; default "espeak-ng" on the PATH
	Voice          string        // -v; default DefaultEspeakVoice
	WordsPerMinute int           // -s at speed 1; default DefaultEspeakWPM
	Timeout        time.Duration // one synthesis; default DefaultEspeakTimeout
	MaxBytes       int           // cap of the program's output; default DefaultEspeakMaxBytes
}

// NewEspeak returns the engine with defaults filled in, after checking that
// the program can be found.
func NewEspeak(e Espeak) (*Espeak, error) {
	if e.Path == "" {
		e.Path = "espeak-ng"
	}
	path, err := exec.LookPath(e.Path)
	if err != nil {
		return nil, fmt.Errorf("voice engine %s: %w (Debian package espeak-ng)", VoiceEspeak, err)
	}
	e.Path = path
	if e.Voice == "" {
		e.Voice = DefaultEspeakVoice
	}
	if e.WordsPerMinute == 0 {
		e.WordsPerMinute = DefaultEspeakWPM
	}
	if e.Timeout == 0 {
		e.Timeout = DefaultEspeakTimeout
	}
	if e.MaxBytes == 0 {
		e.MaxBytes = DefaultEspeakMaxBytes
	}
	return &e, nil
}

// Speak runs espeak-ng on text and returns its speech at sampleRate.
func (e *Espeak) Speak(ctx context.Context, text string, speed float64, sampleRate int) ([]byte, error) {
	if speed <= 0 {
		speed = 1
	}
	wpm := min(max(int(math.Round(float64(e.WordsPerMinute)*speed)), minEspeakWPM), maxEspeakWPM)
	ctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, e.Path, "-v", e.Voice, "-s", strconv.Itoa(wpm), "--stdout")
	cmd.Stdin = strings.NewReader(text)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("espeak-ng: %w", err)
	}
	var stderr cappedBuffer
	stderr.max = 512
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("espeak-ng: %w", err)
	}
	out, readErr := io.ReadAll(io.LimitReader(stdout, int64(e.MaxBytes)+1))
	if len(out) > e.MaxBytes {
		cancel() // stop the program; its exit error is not the news
		_ = cmd.Wait()
		return nil, fmt.Errorf("espeak-ng: output over %d bytes for %d characters of text", e.MaxBytes, len(text))
	}
	if err := cmd.Wait(); err != nil || readErr != nil {
		return nil, fmt.Errorf("espeak-ng -v %s -s %d: %w (stderr: %q)", e.Voice, wpm, errors.Join(err, readErr, ctx.Err()), stderr.String())
	}
	f, pcm, err := espeakPCM(out)
	if err != nil {
		return nil, fmt.Errorf("espeak-ng output: %w", err)
	}
	return resampleLinear(pcm, f.SampleRate, sampleRate), nil
}

// espeakPCM returns the PCM of espeak-ng's WAV. Writing to a pipe, it cannot
// seek back to fill in the sizes, so its data chunk declares a placeholder
// size larger than what follows; the PCM is then what follows.
func espeakPCM(b []byte) (wav.Format, []byte, error) {
	h, err := wav.ParseHeader(b)
	if err != nil {
		return wav.Format{}, nil, err
	}
	if h.Format.Channels != 1 || h.Format.BitsPerSample != 16 || h.Format.SampleRate <= 0 {
		return wav.Format{}, nil, fmt.Errorf("want 16-bit mono, got %d channels of %d bits at %d Hz",
			h.Format.Channels, h.Format.BitsPerSample, h.Format.SampleRate)
	}
	pcm := b[h.DataOffset:]
	if !h.Streaming && h.DataSize < int64(len(pcm)) {
		pcm = pcm[:h.DataSize]
	}
	return h.Format, pcm[:len(pcm)&^1], nil
}

// resampleLinear converts s16le mono PCM from one rate to another: output
// frame k sits at input position k*from/to, between input frames i and
// i+1, and takes x[i] + (x[i+1]-x[i]) * r/to, r = k*from mod to, rounded
// to the nearest integer. The last output frame is the last whole position
// inside the input.
func resampleLinear(pcm []byte, from, to int) []byte {
	n := len(pcm) / 2
	if from == to || n == 0 {
		return pcm
	}
	x := func(i int) int64 { return int64(int16(binary.LittleEndian.Uint16(pcm[2*i:]))) }
	outN := (int64(n-1)*int64(to))/int64(from) + 1
	out := make([]byte, 2*outN)
	for k := range outN {
		pos := k * int64(from)
		i, r := int(pos/int64(to)), pos%int64(to)
		y := x(i)
		if r != 0 {
			num := (x(i+1) - y) * r
			y += roundDiv(num, int64(to))
		}
		binary.LittleEndian.PutUint16(out[2*k:], uint16(int16(y)))
	}
	return out
}

// roundDiv is a/b rounded to the nearest integer, halves away from zero
// (b > 0).
func roundDiv(a, b int64) int64 {
	if a >= 0 {
		return (a + b/2) / b
	}
	return -((-a + b/2) / b)
}

// cappedBuffer keeps the first max bytes written to it and discards the
// rest, so a chatty program cannot grow it.
type cappedBuffer struct {
	bytes.Buffer
	max int
}

func (b *cappedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.Len(); room > 0 {
		b.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
