package main

import (
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/internal/tlsconf"
)

// tlsSim serves the simulator over TLS with httptest's self-signed
// certificate and returns its URL and a PEM file holding that certificate.
func tlsSim(t *testing.T) (url, caFile string) {
	t.Helper()
	sim, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(sim.Handler())
	// The refused handshakes of the no-flag cases are expected.
	hs.Config.ErrorLog = log.New(io.Discard, "", 0)
	hs.StartTLS()
	t.Cleanup(hs.Close)
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	pemData := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: hs.Certificate().Raw})
	if err := os.WriteFile(caFile, pemData, 0o644); err != nil {
		t.Fatal(err)
	}
	return hs.URL, caFile
}

// TestRunTLSFlags: certificates are verified by default (a self-signed
// server fails, naming the URL); --ca-file trusts the given authority, for
// the streams, the /metrics scrapes and the WebSocket kinds alike;
// --insecure skips verification and says so on stderr, in the report and in
// the JSON document. Before, neither flag existed (exit 2, unknown flag).
func TestRunTLSFlags(t *testing.T) {
	t.Parallel()
	url, caFile := tlsSim(t)
	base := []string{"--url", url, "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0"}

	// runMetricsCmd, unlike execRun, does not print the final error.
	_, stderr, code, err := runMetricsCmd(t, append([]string{"run"}, append(base, "--scrape", "off")...)...)
	if stderr += fmt.Sprint(err); code != 1 || !strings.Contains(stderr, url) || !strings.Contains(stderr, "certificate") {
		t.Errorf("no flags: exit %d (%v), want 1 with a certificate error naming %s\nstderr:\n%s", code, err, url, stderr)
	}
	if !strings.Contains(stderr, "give --ca-file FILE") {
		t.Errorf("no flags: no hint at the TLS flags:\n%s", stderr)
	}

	for _, kind := range []string{"chat", "speech-ws"} {
		stdout, stderr, code, err := execRun(t, append(base, "--kind", kind, "--ca-file", caFile, "--format", "json")...)
		if code != 0 {
			t.Fatalf("--ca-file, %s: exit %d (%v)\nstderr:\n%s", kind, code, err, stderr)
		}
		doc := decodeRunDocument(t, "stdout", []byte(stdout))
		if doc.Summary.Requests.Completed != 2 {
			t.Errorf("--ca-file, %s: %d requests completed, want 2", kind, doc.Summary.Requests.Completed)
		}
		if doc.Server == nil || doc.Server.Before == nil || doc.Server.After == nil {
			t.Errorf("--ca-file, %s: /metrics was not scraped over TLS: %+v", kind, doc.Server)
		}
		if slices.Contains(doc.Notes, tlsconf.InsecureNote) || strings.Contains(stderr, "NOT verified") {
			t.Errorf("--ca-file, %s: reported as insecure", kind)
		}
	}

	stdout, stderr, code, err := execRun(t, append(base, "--insecure", "--format", "json")...)
	if code != 0 {
		t.Fatalf("--insecure: exit %d (%v)\nstderr:\n%s", code, err, stderr)
	}
	if doc := decodeRunDocument(t, "stdout", []byte(stdout)); !slices.Contains(doc.Notes, tlsconf.InsecureNote) {
		t.Errorf("--insecure: the document's notes %q lack the insecure note", doc.Notes)
	}
	if !strings.Contains(stderr, tlsconf.InsecureNote) {
		t.Errorf("--insecure: stderr lacks the warning:\n%s", stderr)
	}
	stdout, _, code, _ = execRun(t, append(base, "--insecure", "--scrape", "off")...)
	if code != 0 || !strings.Contains(stdout, "NOT verified") {
		t.Errorf("--insecure: exit %d, the table report lacks the note:\n%s", code, stdout)
	}
}

// TestTLSFlagErrors: a CA file that holds no certificate, or one beside
// --insecure, is unusable input.
func TestTLSFlagErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "key.der")
	if err := os.WriteFile(notPEM, []byte{0x30, 0x82, 0x01, 0x00}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--url", "https://127.0.0.1:1", "--ca-file", notPEM}, "no PEM certificate"},
		{[]string{"run", "--url", "https://127.0.0.1:1", "--ca-file", filepath.Join(dir, "missing.pem")}, "no such file"},
		{[]string{"run", "--url", "https://127.0.0.1:1", "--ca-file", notPEM, "--insecure"}, "give one"},
		{[]string{"scrape", "https://127.0.0.1:1/metrics", "--ca-file", notPEM}, "no PEM certificate"},
		{[]string{"check", "https://127.0.0.1:1/metrics", "--ca-file", notPEM}, "no PEM certificate"},
		{[]string{"diff", "https://127.0.0.1:1/metrics", "b.prom", "--ca-file", notPEM}, "no PEM certificate"},
	} {
		_, _, code, err := runMetricsCmd(t, tc.args...)
		if code != 2 || err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: exit %d (%v), want 2 naming %q", tc.args, code, err, tc.want)
		}
	}
}

// TestScrapeTLSFlags: scrape, diff and check fetch an https /metrics with
// the same flags.
func TestScrapeTLSFlags(t *testing.T) {
	t.Parallel()
	url, caFile := tlsSim(t)
	metrics := url + "/metrics"
	// A server whose certificate is not trusted could not be scraped: a
	// failure (1), as a server that cannot be reached.
	if _, _, code, err := runMetricsCmd(t, "scrape", metrics); code != 1 || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("scrape without flags: exit %d (%v), want 1 with a certificate error", code, err)
	}
	for _, args := range [][]string{
		{"scrape", metrics, "--ca-file", caFile},
		{"diff", metrics, metrics, "--ca-file", caFile},
		{"check", "--profile", "format", metrics, "--ca-file", caFile},
	} {
		if _, stderr, code, err := runMetricsCmd(t, args...); code != 0 {
			t.Errorf("%q: exit %d (%v)\nstderr:\n%s", args, code, err, stderr)
		}
	}
	_, stderr, code, err := runMetricsCmd(t, "scrape", metrics, "--insecure")
	if code != 0 || !strings.Contains(stderr, tlsconf.InsecureNote) {
		t.Errorf("scrape --insecure: exit %d (%v), stderr %q: want 0 and the warning", code, err, stderr)
	}
}
