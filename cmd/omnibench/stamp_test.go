package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatStreamStart posts a streaming chat request and returns the first
// bytes of the event stream.
func chatStreamStart(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"Hi"}],"stream":true}`))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestServeStampIsOptIn: serve sends what a real server sends (no comment
// lines) unless --stamp asks for send stamps; --no-stamp still parses.
func TestServeStampIsOptIn(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		stamp bool
	}{{nil, false}, {[]string{"--stamp"}, true}, {[]string{"--no-stamp"}, false}} {
		url, _ := startServe(t, append([]string{"--ttfa", "1ms", "--rtf", "0.01"}, tc.args...)...)
		if got := chatStreamStart(t, url); strings.HasPrefix(got, ": sent=") != tc.stamp {
			t.Errorf("serve %v: the stream starts %q; want a send stamp: %v", tc.args, got, tc.stamp)
		}
	}
}

// TestRunEmbeddedSimulatorStamps: run's embedded simulator stamps its
// events, so the load generator's send-stamp delay is measured.
func TestRunEmbeddedSimulatorStamps(t *testing.T) {
	t.Parallel()
	sum := filepath.Join(t.TempDir(), "run.json")
	if _, stderr, code, err := execRun(t, "-n", "2", "-c", "1", "--warmup", "0", "--scrape", "off", "--summary", sum); code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if doc := decodeRunDocument(t, sum, data); doc.Client == nil || doc.Client.StampDelayP99MS == nil {
		t.Errorf("client health %+v: no send-stamp delay from the embedded simulator", doc.Client)
	}
}
