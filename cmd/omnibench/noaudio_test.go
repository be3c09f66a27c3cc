package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/results"
)

// textOnlyChat is a chat server that answers in text only, as a text model
// served by plain vLLM does whatever modalities the request names: text
// chunks without a modality field, the usage chunk and [DONE].
func textOnlyChat(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, word := range []string{"Hello", " there", "."} {
			fmt.Fprintf(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1767000000,\"model\":\"m\","+
				"\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"logprobs\":null,\"finish_reason\":null}]}\n\n", word)
		}
		fmt.Fprint(w, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1767000000,\"model\":\"m\","+
			"\"choices\":[],\"usage\":{\"prompt_tokens\":9,\"completion_tokens\":3,\"total_tokens\":12}}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestRunVoiceWithoutAudioFails runs the default (voice) scenario against a
// text-only server: no response carries audio, so the run fails with that
// reason and what came instead, and every request is a no_audio failure.
func TestRunVoiceWithoutAudioFails(t *testing.T) {
	t.Parallel()
	srv := textOnlyChat(t)
	sum := filepath.Join(t.TempDir(), "run.json")
	_, stderr, code, err := execRun(t, "--url", srv.URL, "-n", "3", "-c", "1", "--warmup", "0", "--scrape", "off", "--summary", sum)
	if code != 1 {
		t.Fatalf("exit %d (%v), want 1: no response carried audio\nstderr:\n%s", code, err, stderr)
	}
	if want := "no response carried audio: text only (3 of 3 requests)"; !strings.Contains(fmt.Sprint(err), want) {
		t.Errorf("error %q lacks %q\nstderr:\n%s", err, want, stderr)
	}
	data, rerr := os.ReadFile(sum)
	if rerr != nil {
		t.Fatal(rerr)
	}
	doc := decodeRunDocument(t, sum, data)
	r := doc.Summary.Requests
	if r.Completed != 0 || r.Failed != 3 || r.ErrorRate != 1 || r.ByError[results.ErrNoAudio] != 3 {
		t.Errorf("requests %+v, want 3 no_audio failures", r)
	}
	if len(doc.Summary.Errors) != 1 || doc.Summary.Errors[0].Class != results.ErrNoAudio || doc.Summary.Errors[0].Message != "text only" {
		t.Errorf("error set %+v, want one no_audio group: text only", doc.Summary.Errors)
	}
}
