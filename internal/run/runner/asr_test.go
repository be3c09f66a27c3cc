package runner

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/wer"
)

// transcriber is a transcription server for the tests: it checks the
// multipart request (a WAV file, the model) and answers with text, or
// with status when it is not 200.
func transcriber(t *testing.T, status int, text func(pcm []byte) string) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Path != "/v1/audio/transcriptions" || r.Method != http.MethodPost {
			http.Error(w, "wrong route "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		if status != http.StatusOK {
			http.Error(w, `{"error":{"message":"busy"}}`, status)
			return
		}
		f, _, err := r.FormFile("file")
		if err != nil {
			http.Error(w, "no file: "+err.Error(), http.StatusBadRequest)
			return
		}
		defer f.Close()
		data, err := io.ReadAll(f)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		_, pcm, err := wav.Decode(data)
		if err != nil || r.FormValue("model") != "asr-model" {
			http.Error(w, "bad file or model", http.StatusBadRequest)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"text": text(pcm)})
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

// TestRunASR: every measured response's audio is transcribed after it is
// measured, scored against the text asked for (speech) or the response's
// own text (chat), written as an asr line that reads back into its record,
// and summarised; a failing transcriber is a note, not a request failure.
// speech-ws utterances are scored against their own input text, realtime
// turns against the transcript their answer came with.
func TestRunASR(t *testing.T) {
	const hyp = "hello there general kenobi"
	for _, tc := range []struct {
		scenario, kind, format string
		ws                     WSOptions
	}{
		{"speech-pcm", "speech", "pcm", WSOptions{}},
		{"chat-voice", "", "", WSOptions{}},
		{"tts-short", results.KindSpeechWS, "", WSOptions{Turns: 2}},
		{"tts-short", results.KindRealtime, "", WSOptions{Turns: 2}},
	} {
		t.Run(tc.scenario+"/"+tc.kind, func(t *testing.T) {
			wl := workload(t, tc.scenario, tc.kind, tc.format)
			asr, _ := transcriber(t, http.StatusOK, func([]byte) string { return hyp })
			cfg := baseConfig(startSim(t, wl, nil).URL, wl, 4, 2)
			cfg.Scrape = ScrapeOff
			cfg.ASR = ASRConfig{URL: asr.URL, Model: "asr-model"}
			cfg.WS = tc.ws
			out := mustRun(t, cfg)
			if n := 4 * tc.ws.turns(); len(out.Records) != n {
				t.Fatalf("%d records, want %d", len(out.Records), n)
			}
			var aligner wer.Aligner
			for _, rec := range out.Records {
				a := rec.ASR
				if a == nil {
					t.Fatalf("%s: no transcription score", rec.ID)
				}
				prompt := wl.Request(rec.Seq, cfg.Seed).Prompt
				switch chat := tc.kind == ""; {
				case tc.kind == results.KindRealtime:
					// The answer's transcript (which the simulator makes
					// the prompt's words): all the text the turn received.
					if a.Reference == "" || utf8.RuneCountInString(a.Reference) != rec.TextChars {
						t.Errorf("%s: reference %q, want the %d characters of the answer's transcript", rec.ID, a.Reference, rec.TextChars)
					}
				case (a.Reference == prompt) == chat || a.Reference == "":
					t.Errorf("%s: reference %q (prompt %q, chat %v)", rec.ID, a.Reference, prompt, chat)
				}
				words, _, err := aligner.Score(a.Reference, hyp)
				if w, _ := words.Rate(); err != nil || a.WER != w || a.Hypothesis != hyp || a.AudioS != rec.AudioDurationS {
					t.Errorf("%s: score %+v, want WER %v of %q (%v), audio %v s", rec.ID, a, w, hyp, err, rec.AudioDurationS)
				}
			}
			q := out.Summary.Quality
			n := len(out.Records)
			if q == nil || q.ASR == nil || q.ASR.Scored != n || q.ASR.Offered != n {
				t.Fatalf("quality %+v", q)
			}
			if !hasNote(out.Notes, fmt.Sprintf("asr: scored %d of %d responses", n, n)) {
				t.Errorf("notes %q", out.Notes)
			}
		})
	}
	t.Run("failing", func(t *testing.T) {
		wl := workload(t, "speech-pcm", "speech", "pcm")
		asr, calls := transcriber(t, http.StatusServiceUnavailable, nil)
		cfg := baseConfig(startSim(t, wl, nil).URL, wl, 3, 1)
		cfg.Scrape = ScrapeOff
		cfg.ASR = ASRConfig{URL: asr.URL + "/v1", Model: "asr-model"}
		out := mustRun(t, cfg)
		if out.Summary.Requests.Failed != 0 || calls.Load() != 3 {
			t.Errorf("%d requests failed, %d transcriptions asked: want 0 and 3", out.Summary.Requests.Failed, calls.Load())
		}
		if a := out.Summary.Quality.ASR; a.Scored != 0 || a.Failed != 3 {
			t.Errorf("asr %+v", a)
		}
		if !hasNote(out.Notes, "3 transcriptions failed, the first: req-") || !hasNote(out.Notes, "HTTP 503") {
			t.Errorf("notes %q", out.Notes)
		}
	})
}

func hasNote(notes []string, part string) bool {
	for _, n := range notes {
		if strings.Contains(n, part) {
			return true
		}
	}
	return false
}

// FuzzParseTranscription: any reply either gives a transcript or an error
// that quotes at most a clipped, valid-UTF-8 start of it.
func FuzzParseTranscription(f *testing.F) {
	f.Add(200, []byte(`{"text":"hello"}`))
	f.Add(200, []byte(`{"text":null}`))
	f.Add(500, []byte(`{"error":{"message":"x"}}`))
	f.Add(200, []byte("\xff\xfe{"))
	f.Fuzz(func(t *testing.T, status int, reply []byte) {
		text, err := parseTranscription(status, reply)
		if err != nil {
			if text != "" {
				t.Fatalf("error %v with text %q", err, text)
			}
			if msg := err.Error(); len(msg) > 400 {
				t.Fatalf("error of %d bytes: %.80q...", len(msg), msg)
			}
			return
		}
		if status < 200 || status > 299 {
			t.Fatalf("status %d gave a transcript", status)
		}
	})
}
