package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/simulator"
)

// execQuiet runs the omnibench command line in process like main does,
// with the final error printed into the returned stderr (not the test's),
// and fails the test when it does not end within a minute: the commands
// under test must end at once, so a minute means a hang.
func execQuiet(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	root := newRootCmd("test")
	var out, errOut bytes.Buffer
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	cmd, err := root.ExecuteContextC(ctx)
	if ctx.Err() != nil {
		t.Fatalf("omnibench %q did not end within a minute: it hangs", args)
	}
	final := io.Writer(&errOut)
	if cmd != nil {
		final = commandRedactor(cmd.Flags()).Writer(final)
	}
	code = exitCodeTo(ctx, final, err)
	return out.String(), errOut.String(), code
}

// switchingMetrics serves the simulator, except /metrics, which answers 101
// Switching Protocols and then holds the connection without another byte
// until the test ends.
func switchingMetrics(t *testing.T) string {
	t.Helper()
	sim, err := simulator.New(runSimConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var held sync.WaitGroup
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			sim.Handler().ServeHTTP(w, r)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Errorf("hijack: %v", err)
			return
		}
		held.Add(1)
		defer held.Done()
		defer conn.Close()
		_, _ = io.WriteString(conn, "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
		<-done
	}))
	t.Cleanup(func() {
		close(done)
		held.Wait()
		srv.Close()
	})
	return srv.URL
}

// TestSwitchingProtocolsMetrics: a /metrics answering 101 and holding the
// connection ends scrape, check and diff at once with an error naming the
// URL and the status (exit 1, as for any server that cannot be scraped), and is a note in run, which writes its
// results.
func TestSwitchingProtocolsMetrics(t *testing.T) {
	base := switchingMetrics(t)
	metrics := base + "/metrics"
	for _, args := range [][]string{
		{"scrape", metrics, "--timeout", "10m"},
		{"check", metrics, "--timeout", "10m"},
		{"diff", metrics, metrics, "--timeout", "10m"},
	} {
		_, stderr, code := execQuiet(t, args...)
		if code != 1 || !strings.Contains(stderr, metrics) || !strings.Contains(stderr, "101") {
			t.Errorf("%s: exit %d, stderr %q: want 1 and an error naming %s and 101", args[0], code, stderr, metrics)
		}
	}

	out := filepath.Join(t.TempDir(), "run.jsonl")
	_, stderr, code := execQuiet(t, "run", "--url", base, "-n", "2", "-c", "1", "--warmup", "0", "--settle", "0",
		"--scrape-timeout", "10m", "--out", out)
	if code != 0 {
		t.Fatalf("run: exit %d, want 0 (the requests succeeded)\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "not comparing with server metrics") || !strings.Contains(stderr, "101") {
		t.Errorf("run: the failed scrape is not a note naming the status:\n%s", stderr)
	}
	if lines := strings.Count(readTestFile(t, out), "\n"); lines < 3 {
		t.Errorf("run wrote %d results lines, want the header, 2 records and the health line", lines)
	}
}
