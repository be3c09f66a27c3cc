//go:build unix

package client

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// limitChildEnv, set, makes TestClientLimitClass the child process that
// runs out of file descriptors; its value is the server's URL.
const limitChildEnv = "OMNIBENCH_TEST_FD_LIMIT_CHILD"

// TestClientLimitClass: a request that cannot open a socket because the
// client process is out of file descriptors is the client's failure,
// client_limit, with a message that says so and what to do, not a connect
// failure (which reads as the server's). The descriptors run out for real:
// a child process (this test binary again) lowers its own RLIMIT_NOFILE and
// opens files until the limit, so the limit of this process is untouched.
func TestClientLimitClass(t *testing.T) {
	if url := os.Getenv(limitChildEnv); url != "" {
		outOfFiles(t, url)
		return
	}
	srv := newServer(t, func(w http.ResponseWriter, r *http.Request, s *server) {
		sseStart(w)
		event(w, "", "[DONE]")
	})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestClientLimitClass$", "-test.count=1")
	cmd.Env = append(os.Environ(), limitChildEnv+"="+srv.URL)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var rec results.Record
	for line := range strings.Lines(string(out)) {
		if js, ok := strings.CutPrefix(line, "RECORD "); ok {
			if err := json.Unmarshal([]byte(js), &rec); err != nil {
				t.Fatalf("child's record %q: %v", js, err)
			}
		}
	}
	if rec.ErrorClass != results.ErrClientLimit || !strings.Contains(rec.Error, "the client ran out of file descriptors (EMFILE): raise ulimit -n") {
		t.Fatalf("class %q, error %q; want %s naming EMFILE and ulimit -n\nchild said:\n%s", rec.ErrorClass, rec.Error, results.ErrClientLimit, out)
	}
	if n := srv.conns.Load(); n != 0 {
		t.Errorf("server saw %d connections; want none", n)
	}
}

// outOfFiles is the child: with the open-file limit lowered and every
// descriptor under it taken, one request, whose record goes to stdout.
func outOfFiles(t *testing.T, url string) {
	c := newClient(t, url, Options{})
	lim := syscall.Rlimit{Cur: 64, Max: 64}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatalf("lowering RLIMIT_NOFILE: %v", err)
	}
	var held []*os.File
	defer func() {
		for _, f := range held {
			f.Close()
		}
	}()
	for range lim.Cur {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		if err != nil {
			t.Fatalf("opening %s: %v", os.DevNull, err)
		}
		held = append(held, f)
	}
	rec := do(t, c, Request{Kind: results.KindChat, Prompt: "x"})
	for _, f := range held {
		f.Close()
	}
	held = nil
	js, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("RECORD " + string(js) + "\n")
}
