//go:build unix

package abtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// running reports whether pid is a live process (a zombie is not: it has
// exited, only its parent or init has not collected it yet).
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return false
	}
	return !zombie(pid)
}

// assertGone fails unless every pid has stopped running. Signals are
// delivered asynchronously, so it polls, with a deadline.
func assertGone(t *testing.T, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for _, pid := range pids {
		for running(pid) {
			if time.Now().After(deadline) {
				t.Errorf("process %d still runs", pid)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

func startHelper(t *testing.T, ctx context.Context, mode string, timeout, grace time.Duration, extra ...string) (*server, string, error) {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "a-server.log")
	argv := substitutePort(helperCmd(mode, append([]string{"--port", PortPlaceholder}, extra...)...), port)
	srv, err := startServer(ctx, "A", argv, "http://127.0.0.1:"+port, logPath, timeout, grace, nil)
	return srv, logPath, err
}

func TestServerStartStop(t *testing.T) {
	srv, logPath, err := startHelper(t, context.Background(), "serve", 30*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !running(srv.pid) {
		t.Fatalf("pid %d is not running after a healthy start", srv.pid)
	}
	srv.stop(5 * time.Second)
	srv.stop(5 * time.Second) // idempotent
	assertGone(t, srv.pid)
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# omnibench ab: arm A: starting", "pid " + strconv.Itoa(srv.pid), "helper: serving on", "helper: stopped", "exit status 0"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("server log lacks %q:\n%s", want, log)
		}
	}
}

func TestServerExitsBeforeHealthy(t *testing.T) {
	srv, logPath, err := startHelper(t, context.Background(), "exit", 30*time.Second, 5*time.Second)
	if err == nil {
		t.Fatal("no error from a server that exits at once")
	}
	for _, want := range []string{"arm A", "exited before it became healthy", "exit status 3", logPath, "helper: failing on purpose: no model here"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if srv == nil {
		t.Fatal("no server returned: cannot check its pid")
	}
	assertGone(t, srv.pid)
}

func TestServerStartupTimeout(t *testing.T) {
	srv, logPath, err := startHelper(t, context.Background(), "unhealthy", 500*time.Millisecond, 5*time.Second)
	if err == nil {
		t.Fatal("no error from a server that never becomes healthy")
	}
	for _, want := range []string{"did not become healthy within the start-up timeout 500ms", "503", logPath} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	assertGone(t, srv.pid)
}

func TestServerStartMissingProgram(t *testing.T) {
	logPath := filepath.Join(t.TempDir(), "b-server.log")
	srv, err := startServer(context.Background(), "B", []string{filepath.Join(t.TempDir(), "no-such-server")}, "http://127.0.0.1:1", logPath, time.Second, time.Second, nil)
	if err == nil || srv != nil {
		t.Fatalf("starting a missing program: server %v, error %v", srv, err)
	}
	if !strings.Contains(err.Error(), "arm B: starting server") || !strings.Contains(err.Error(), "no-such-server") {
		t.Errorf("error does not say what failed: %v", err)
	}
}

func TestServerStartCancelled(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	// Cancelled before the start, and cancelled (by a deadline) while
	// waiting for /health: either way nothing may survive.
	midWait, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel2()
	for name, ctx := range map[string]context.Context{"before": cancelled, "during": midWait} {
		t.Run(name, func(t *testing.T) {
			srv, _, err := startHelper(t, ctx, "unhealthy", time.Minute, 5*time.Second)
			if err == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
				t.Fatalf("error %v, want %v", err, ctx.Err())
			}
			if srv == nil {
				t.Fatal("no server returned: cannot check its pid")
			}
			assertGone(t, srv.pid)
		})
	}
}

func TestServerStopEscalatesToSIGKILL(t *testing.T) {
	srv, logPath, err := startHelper(t, context.Background(), "ignore-term", 30*time.Second, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	srv.stop(200 * time.Millisecond)
	assertGone(t, srv.pid)
	log, _ := os.ReadFile(logPath)
	if !strings.Contains(string(log), "sending SIGKILL") || !strings.Contains(string(log), "signal: killed") {
		t.Errorf("log does not show the SIGKILL:\n%s", log)
	}
}

func TestServerStopReachesChildren(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc to tell exited children (zombies) from running ones")
	}
	// A child that exits on SIGTERM goes with its parent; a stubborn one
	// is killed when the grace period is over.
	for _, stubborn := range []bool{false, true} {
		t.Run("stubborn="+strconv.FormatBool(stubborn), func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "child.pid")
			srv, logPath, err := startHelper(t, context.Background(), "fork", 30*time.Second, 5*time.Second,
				"--pidfile", pidfile, "--stubborn="+strconv.FormatBool(stubborn))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(pidfile)
			if err != nil {
				srv.stop(time.Second)
				t.Fatal(err)
			}
			child, err := strconv.Atoi(string(data))
			if err != nil || !running(child) {
				srv.stop(time.Second)
				t.Fatalf("forked child %q is not running (%v)", data, err)
			}
			srv.stop(300 * time.Millisecond)
			assertGone(t, srv.pid, child)
			log, err := os.ReadFile(logPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(log), "exit status 0") {
				t.Errorf("the leader did not exit cleanly on SIGTERM:\n%s", log)
			}
		})
	}
}

func TestFreePort(t *testing.T) {
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	if n, err := strconv.Atoi(p); err != nil || n <= 0 || n > 65535 {
		t.Errorf("port %q", p)
	}
}

func TestReadTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	var b strings.Builder
	for i := 0; i < 1000; i++ {
		b.WriteString("line " + strconv.Itoa(i) + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := readTail(path, 20)
	if err != nil {
		t.Fatal(err)
	}
	// The last 20 bytes are "7\nline 998\nline 999\n": the partial first
	// line is dropped.
	if string(got) != "line 998\nline 999\n" {
		t.Errorf("tail %q", got)
	}
}
