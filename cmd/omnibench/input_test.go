package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/simulator"
)

// TestWireInputRefusedUpFront: a header or URL that cannot go on the wire is
// unusable input (exit 2) named by its flag, before any request; the value
// of a header (maybe a secret) and the raw control bytes of a URL are never
// echoed. Before, a control byte in -H failed every request (exit 1) and a
// line break in --metrics-url came back in the notes.
func TestWireInputRefusedUpFront(t *testing.T) {
	t.Parallel()
	const nowhere = "http://127.0.0.1:1"
	const secretVal = "s3cr3t-value"
	for _, tc := range []struct {
		args    []string
		want    string
		notShow []string
	}{
		{[]string{"run", "--url", nowhere, "-H", "X-Key: " + secretVal + "\x01"}, "--header X-Key: the value contains control characters", []string{secretVal, "\x01"}},
		{[]string{"run", "--url", nowhere, "-H", "X-Key: " + secretVal + "\r\nX-Other: 1"}, "--header X-Key:", []string{secretVal, "\r", "\n"}},
		{[]string{"run", "--url", nowhere, "-H", "X Key: v"}, `--header "X Key": not a valid HTTP header name`, nil},
		{[]string{"run", "--url", nowhere, "-H", secretVal + "\n"}, `--header: want "Name: value" (the value given is not shown)`, []string{secretVal, "\n"}},
		{[]string{"run", "--url", nowhere, "--metrics-url", nowhere + "/m\r\nX-Injected: y"}, "--metrics-url: the URL contains control characters", []string{"\r", "\n", "X-Injected"}},
		{[]string{"run", "--url", nowhere + "/\x7f"}, "--url: the URL contains control characters", []string{"\x7f"}},
		{[]string{"scrape", nowhere + "/metrics\r\nX: y"}, "argument 1: the URL contains control characters", []string{"\r", "\n"}},
		{[]string{"run", "--url", nowhere, "--api-key", "k-12345", "-H", "Authorization: Bearer " + secretVal},
			"--header Authorization and --api-key (or $OMNIBENCH_API_KEY) both set the request's credentials", []string{secretVal, "k-12345"}},
	} {
		stdout, stderr, code, err := runMetricsCmd(t, tc.args...)
		text := stdout + stderr + fmt.Sprint(err)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: exit %d, error %v: want exit 2 naming %q", tc.args, code, err, tc.want)
		}
		for _, s := range tc.notShow {
			if strings.Contains(text, s) {
				t.Errorf("%q: the output shows %q:\n%s", tc.args, s, text)
			}
		}
	}
}

// TestHeaderAuthorizationAllowed: -H 'Authorization: ...' is sent as given
// (the README's promise: a command-line credential, redacted from every
// output), where it used to be refused as "not in a scenario".
func TestHeaderAuthorizationAllowed(t *testing.T) {
	t.Parallel()
	const token = "hdr-token-98765"
	srv, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	ks := &keyServer{next: srv.Handler()}
	hs := httptest.NewServer(ks)
	defer hs.Close()
	sum := filepath.Join(t.TempDir(), "run.json")
	stdout, stderr, code, err := execRun(t, "--url", hs.URL, "--no-probe", "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0",
		"-H", "Authorization: Bearer "+token, "--format", "json", "--summary", sum)
	if code != 0 {
		t.Fatalf("exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	data, err := os.ReadFile(sum)
	if err != nil {
		t.Fatal(err)
	}
	if text := stdout + stderr + string(data); strings.Contains(text, token) {
		t.Errorf("an output contains the token:\n%s", text)
	}
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if len(ks.auth) != 2 {
		t.Errorf("the server saw %d requests, want 2", len(ks.auth))
	}
	for _, a := range ks.auth {
		if a != "Bearer "+token {
			t.Errorf("Authorization %q, want the -H value", a)
		}
	}
}
