//go:build unix

package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
)

// syncBuffer is a stderr a test can read while the process writes it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// signalledRun is one omnibench process under test.
type signalledRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stderr *syncBuffer
	exited chan struct{} // closed once Wait returned
}

func startSignalledRun(t *testing.T, bin string, args ...string) *signalledRun {
	t.Helper()
	r := &signalledRun{t: t, cmd: exec.Command(bin, append([]string{"run"}, args...)...), stderr: &syncBuffer{}, exited: make(chan struct{})}
	r.cmd.Stdout = &bytes.Buffer{}
	r.cmd.Stderr = r.stderr
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = r.cmd.Wait()
		close(r.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-r.exited:
		default:
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	})
	return r
}

// waitFor polls until cond holds, failing after a deadline or when the
// process exits first.
func (r *signalledRun) waitFor(what string, cond func() bool) {
	r.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case <-r.exited:
			r.t.Fatalf("omnibench exited (%v) before %s\nstderr:\n%s", r.cmd.ProcessState, what, r.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("no %s within a minute\nstderr:\n%s", what, r.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitExit waits (with a deadline far below the --grace of the tests) and
// returns the exit status.
func (r *signalledRun) waitExit() int {
	r.t.Helper()
	select {
	case <-r.exited:
	case <-time.After(time.Minute):
		r.t.Fatalf("omnibench did not exit within a minute of the signal\nstderr:\n%s", r.stderr.String())
	}
	return r.cmd.ProcessState.ExitCode()
}

func (r *signalledRun) signal(sig syscall.Signal) {
	r.t.Helper()
	if err := r.cmd.Process.Signal(sig); err != nil {
		r.t.Fatal(err)
	}
}

// summaryOf reads the interruption fields of a summary file.
func summaryOf(t *testing.T, path string) (interrupted bool, during string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Interrupted       bool   `json:"interrupted"`
		InterruptedDuring string `json:"interrupted_during"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Interrupted, doc.InterruptedDuring
}

// The first Ctrl-C says what it does and lets in-flight requests run on
// (--grace 10m); the second cancels them at once.
func TestRunSecondInterruptCancelsAtOnce(t *testing.T) {
	bin := buildRunBinary(t)
	cfg := runSimConfig(t)
	// Minute-long streams at real time: nothing finishes during the test.
	cfg.Timing.RTF, cfg.Timing.MinAudio, cfg.Timing.MaxAudio = 1, time.Minute, time.Minute
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var started atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			started.Add(1)
		}
		sim.Handler().ServeHTTP(w, r)
	}))
	defer hs.Close()
	dir := t.TempDir()
	out, sum := filepath.Join(dir, "run.jsonl"), filepath.Join(dir, "run.json")
	// --no-probe: the probe would be one more minute-long stream.
	r := startSignalledRun(t, bin, "--url", hs.URL, "--no-probe", "-n", "4", "-c", "2", "--warmup", "0", "--grace", "10m",
		"--out", out, "--summary", sum, "--settle", "0")
	r.waitFor("two requests in flight", func() bool { return started.Load() >= 2 })
	r.signal(syscall.SIGINT)
	want := "omnibench: interrupted: finishing 2 in-flight requests for up to 10m0s; Ctrl-C again to stop now"
	r.waitFor("the interrupt notice", func() bool { return strings.Contains(r.stderr.String(), want) })
	select {
	case <-r.exited:
		t.Fatalf("omnibench exited after the first interrupt, within --grace\nstderr:\n%s", r.stderr.String())
	default:
	}
	r.signal(syscall.SIGINT)
	if code := r.waitExit(); code != 130 {
		t.Errorf("exit %d, want 130\nstderr:\n%s", code, r.stderr.String())
	}
	if !strings.Contains(r.stderr.String(), "interrupted again: cancelling in-flight requests now") {
		t.Errorf("stderr does not say the second interrupt cancels:\n%s", r.stderr.String())
	}
	_, recs, err := results.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records, want the 2 cancelled in-flight requests", len(recs))
	}
	for _, rec := range recs {
		if rec.ErrorClass != results.ErrCancelled {
			t.Errorf("record %s: class %q, want cancelled", rec.ID, rec.ErrorClass)
		}
	}
	if in, during := summaryOf(t, sum); !in || during != "load" {
		t.Errorf("summary: interrupted %v during %q, want true during load", in, during)
	}
}

// An interrupt during --settle or --metrics-linger is recorded in the
// summary as an interruption of that phase.
func TestRunInterruptAfterTheRequests(t *testing.T) {
	bin := buildRunBinary(t)
	url := startRunSim(t, runSimConfig(t))
	for _, tc := range []struct {
		phase, notice string
		args          []string
	}{
		{"settle", "waiting 10m0s (--settle) before the second scrape", []string{"--settle", "10m"}},
		{"metrics-linger", "serving the final metrics at", []string{"--settle", "0", "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "10m"}},
	} {
		t.Run(tc.phase, func(t *testing.T) {
			sum := filepath.Join(t.TempDir(), "run.json")
			r := startSignalledRun(t, bin, append([]string{"--url", url, "-n", "2", "-c", "1", "--warmup", "0", "--summary", sum}, tc.args...)...)
			r.waitFor(tc.notice, func() bool { return strings.Contains(r.stderr.String(), tc.notice) })
			r.signal(syscall.SIGINT)
			if code := r.waitExit(); code != 130 {
				t.Errorf("exit %d, want 130\nstderr:\n%s", code, r.stderr.String())
			}
			if in, during := summaryOf(t, sum); !in || during != tc.phase {
				t.Errorf("summary: interrupted %v during %q, want true during %s\nstderr:\n%s", in, during, tc.phase, r.stderr.String())
			}
		})
	}
}
