package runner

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/report"
)

// The spoken prompts of the end-to-end test: a handful of sentences of
// about four seconds at espeak-ng's 150 words per minute, long enough that
// the mute fault's 1.5 s span has speech on both sides.
var spokenPrompts = []string{
	"a large rainbow appeared in the sky after the heavy rain had stopped",
	"i would like to book a table for two people at eight o'clock tonight",
	"we talked about the weather and the price of coffee for an hour",
	"glue the sheet to the dark blue background and let it dry overnight",
}

// espeakRate is espeak-ng's own rate: the simulator's model speaks at it,
// so that the speech is resampled once, by the transcription server's
// filter, rather than first by the simulator's linear interpolation, which
// costs pocketsphinx a third of the words it gets right.
const espeakRate = 22050

// recognizerRate is what pocketsphinx's en-us model takes: 16 kHz mono.
const recognizerRate = 16000

// noiseFloorDBFS is the RMS level of the noise added before recognition:
// pocketsphinx misreads pure digital silence (the gaps between words come
// out as words), and a faint floor, as any recording has, stops that.
const noiseFloorDBFS = -55

// needRecognizer skips a test unless espeak-ng and pocketsphinx (with its
// en-us model) are installed, and returns pocketsphinx's program.
func needRecognizer(t *testing.T) string {
	t.Helper()
	_, errSpeak := exec.LookPath("espeak-ng")
	sphinx, errSphinx := exec.LookPath("pocketsphinx_continuous")
	_, errModel := os.Stat("/usr/share/pocketsphinx/model/en-us/en-us")
	if errSpeak != nil || errSphinx != nil || errModel != nil {
		t.Skip("espeak-ng, pocketsphinx and pocketsphinx-en-us are not all installed (Debian packages of those names): the intelligibility test needs real speech and a real recognizer")
	}
	return sphinx
}

// sphinxServer is an OpenAI-compatible transcription server over
// pocketsphinx: the uploaded WAV is mixed to mono, resampled to 16 kHz,
// given the noise floor and recognized.
func sphinxServer(t *testing.T, program string) *httptest.Server {
	t.Helper()
	dir := t.TempDir()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		format, pcm, err := wav.Decode(data)
		if err != nil || format.BitsPerSample != 16 {
			http.Error(w, "want a 16-bit WAV file", http.StatusBadRequest)
			return
		}
		mono := withNoiseFloor(resample(toMono(pcm, format.Channels), format.SampleRate, recognizerRate))
		file, err := os.CreateTemp(dir, "utterance-*.wav")
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer os.Remove(file.Name())
		_, err = file.Write(wav.Encode(wav.Format{SampleRate: recognizerRate, Channels: 1, BitsPerSample: 16}, mono))
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		out, err := exec.CommandContext(r.Context(), program, "-infile", file.Name(), "-logfn", os.DevNull).Output()
		if err != nil {
			http.Error(w, "pocketsphinx: "+err.Error(), http.StatusInternalServerError)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"text": strings.Join(strings.Fields(string(out)), " ")})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// toMono averages the channels of s16le PCM.
func toMono(pcm []byte, channels int) []int16 {
	frames := len(pcm) / (2 * channels)
	out := make([]int16, frames)
	for i := range out {
		var sum int
		for c := range channels {
			sum += int(int16(binary.LittleEndian.Uint16(pcm[2*(i*channels+c):])))
		}
		out[i] = int16(sum / channels)
	}
	return out
}

// resample converts x from rate in to rate out with a windowed-sinc
// interpolator: each output sample is the sum of the input samples within
// resampleTaps of its position, weighted by a sinc whose cutoff is the lower
// rate's Nyquist frequency (so downsampling does not alias the fricatives'
// energy above 8 kHz into the speech band) under a Hann window.
func resample(x []int16, in, out int) []int16 {
	if in == out || len(x) == 0 {
		return x
	}
	const resampleTaps = 16
	ratio := min(1, float64(out)/float64(in)) // cutoff, as a share of the input's Nyquist frequency
	y := make([]int16, int(int64(len(x))*int64(out)/int64(in)))
	for i := range y {
		pos := float64(i) * float64(in) / float64(out)
		centre := int(pos)
		var sum float64
		for k := max(0, centre-resampleTaps+1); k <= min(len(x)-1, centre+resampleTaps); k++ {
			t := pos - float64(k)
			w := 0.5 + 0.5*math.Cos(math.Pi*t/resampleTaps)
			sum += float64(x[k]) * ratio * sinc(ratio*t) * w
		}
		y[i] = int16(max(-32768, min(32767, math.Round(sum))))
	}
	return y
}

func sinc(t float64) float64 {
	if t == 0 {
		return 1
	}
	return math.Sin(math.Pi*t) / (math.Pi * t)
}

// withNoiseFloor adds uniform noise at noiseFloorDBFS RMS (a uniform value
// in [-a, a] has RMS a/sqrt 3), seeded, and returns s16le bytes.
func withNoiseFloor(x []int16) []byte {
	a := 32768 * math.Pow(10, noiseFloorDBFS/20.0) * math.Sqrt(3)
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]byte, 2*len(x))
	for i, v := range x {
		s := math.Round(float64(v) + (2*rng.Float64()-1)*a)
		binary.LittleEndian.PutUint16(out[2*i:], uint16(int16(max(-32768, min(32767, s)))))
	}
	return out
}

// spokenRun runs n speech requests, one at a time, against a simulator
// speaking with espeak-ng with faults, checking the audio and, with asr,
// transcribing it. Recognition takes about a second of a core per 2.5 s of
// audio, so the run's guard is minutes, not runGuard's seconds.
func spokenRun(t *testing.T, n int, faults simulator.Faults, asr string) (*Outcome, []results.Record) {
	t.Helper()
	prompts := filepath.Join(t.TempDir(), "prompts.txt")
	if err := os.WriteFile(prompts, []byte(strings.Join(spokenPrompts, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	sc := workload(t, "speech-pcm", "speech", "pcm").Scenario().Clone()
	sc.PromptSpec.Source = prompts
	sc.PCMSampleRate = espeakRate
	wl, err := sc.Workload()
	if err != nil {
		t.Fatal(err)
	}
	sim := startSim(t, wl, func(c *simulator.Config) {
		c.VoiceEngine = simulator.VoiceEspeak
		c.Faults = faults
		c.Timing.MinAudio, c.Timing.MaxAudio = 0, 20*time.Second
		c.SampleRate = espeakRate
	})
	cfg := baseConfig(sim.URL, wl, n, 1)
	cfg.Scrape = ScrapeOff
	cfg.Client.AudioChecks = true
	if asr != "" {
		cfg.ASR = ASRConfig{URL: asr}
	}
	var jsonl bytes.Buffer
	cfg.Out = &jsonl
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := Run(ctx, cfg)
	if err != nil || out.Interrupted {
		t.Fatalf("run: %v (interrupted: %v)", err, out != nil && out.Interrupted)
	}
	_, recs, err := results.Read(&jsonl)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if !r.OK() || r.Audio == nil {
			t.Fatalf("%s: %s %s, audio check %v", r.ID, r.ErrorClass, r.Error, r.Audio)
		}
	}
	return out, recs
}

// TestSpokenIntelligibility is the end-to-end proof with real components:
// espeak-ng speech from the simulator, pocketsphinx behind an
// OpenAI-compatible transcription server, omnibench scoring WER. A clean
// run scores far below a run whose server swaps audio between requests.
func TestSpokenIntelligibility(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: recognizing seven utterances takes about 15 s of CPU")
	}
	asr := sphinxServer(t, needRecognizer(t)).URL
	clean, cleanRecs := spokenRun(t, 3, simulator.Faults{}, asr)
	swapped, _ := spokenRun(t, 4, simulator.Faults{VoiceSwap: 1}, asr)
	c, s := clean.Summary.Quality, swapped.Summary.Quality
	if c == nil || c.ASR == nil || c.ASR.Scored != 3 || s == nil || s.ASR == nil || s.ASR.Scored != 4 {
		t.Fatalf("clean %+v, swapped %+v: want 3 and 4 scored", c, s)
	}
	if c.Defects != 0 {
		t.Errorf("clean speech flagged: %+v", c)
	}
	for _, r := range cleanRecs {
		if r.ASR == nil || r.ASR.Reference == "" || r.ASR.AudioS <= 0 {
			t.Errorf("%s: score %+v", r.ID, r.ASR)
		}
	}
	// Measured here (Debian's pocketsphinx 0.8+5prealpha, en-us model):
	// clean 0.56, swapped 0.98. Both are deterministic (espeak-ng and
	// pocketsphinx are, the noise is seeded); the bounds leave room for
	// other versions of either.
	if !(c.ASR.WERMean < 0.7 && s.ASR.WERMean > 0.9 && s.ASR.WERMean-c.ASR.WERMean > 0.25) {
		t.Errorf("WER mean: clean %.2f, swapped %.2f: want the clean run below 0.7, the swapped one above 0.9, at least 0.25 apart",
			c.ASR.WERMean, s.ASR.WERMean)
	}
}

// TestSpokenDamageCaught: each of the simulator's damage knobs is caught by
// the signal check named for it: a muted span as an internal gap, clipping
// as clipped, a cut end as an abrupt end; clean speech by none.
func TestSpokenDamageCaught(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (Debian package espeak-ng): the damage knobs need real speech")
	}
	for _, tc := range []struct {
		name    string
		faults  simulator.Faults
		defects []string
		abrupt  bool
	}{
		{"clean", simulator.Faults{}, nil, false},
		{"mute", simulator.Faults{VoiceMute: 1}, []string{"internal_gap"}, false},
		{"clip", simulator.Faults{VoiceClip: 1}, []string{"clipped"}, false},
		{"cut-end", simulator.Faults{VoiceCutEnd: 1}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, recs := spokenRun(t, 2, tc.faults, "")
			for _, r := range recs {
				if !slices.Equal(r.Audio.Defects, tc.defects) || r.Audio.AbruptEnd != tc.abrupt {
					t.Errorf("%s: defects %q, abrupt end %v; want %q, %v (check %+v)", r.ID, r.Audio.Defects, r.Audio.AbruptEnd, tc.defects, tc.abrupt, *r.Audio)
				}
			}
		})
	}
}

// TestSpokenDefectsInErrorSet: responses whose speech the server muted are
// flagged internal_gap, and the error set (stderr's text, the report's table,
// the HTML page) shows them as an audio_defect group of their own, said to be
// no failure, while the error rate stays 0.
func TestSpokenDefectsInErrorSet(t *testing.T) {
	if _, err := exec.LookPath("espeak-ng"); err != nil {
		t.Skip("espeak-ng not installed (Debian package espeak-ng): the mute fault needs real speech")
	}
	out, _ := spokenRun(t, 2, simulator.Faults{VoiceMute: 1}, "")
	s := out.Summary
	if s.Requests.ErrorRate != 0 || len(s.Errors) != 0 {
		t.Fatalf("error rate %v, errors %+v: a defect is no failure", s.Requests.ErrorRate, s.Errors)
	}
	text := report.ErrorSetText(s, "omnibench: ")
	for _, want := range []string{"2 of 2 checked responses flagged audio_defect (not a failure", "2× audio_defect: internal_gap"} {
		if !strings.Contains(text, want) {
			t.Errorf("error set text lacks %q:\n%s", want, text)
		}
	}
	var page bytes.Buffer
	rep := out.Report()
	if err := report.WriteHTML(&page, report.HTMLReport{Title: "defects", Sections: report.RunSectionsSet(rep, out.Set, out.Worst)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "<td>audio_defect</td>") || !strings.Contains(page.String(), "internal_gap (not a failure") {
		t.Errorf("the HTML report has no audio_defect row for internal_gap")
	}
}
