//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A SIGKILLed ab must not leave its managed server behind (the server gets
// the parent-death signal).
func TestABKilledLeavesNoServer(t *testing.T) {
	bin := abBuildOmnibench(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "ab", "--allow-saturated", "--a-cmd", abServeCmd(bin), "--b-cmd", abServeCmd(bin),
		"-n", "10000", "--settle", "0", "--out", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		data, _ := os.ReadFile(filepath.Join(dir, "a.jsonl"))
		if bytes.Count(data, []byte("\n")) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("no records after a minute:\n%s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pids := abLogPIDs(t, filepath.Join(dir, "a-server.log"))
	if len(pids) == 0 {
		t.Fatal("no server pid logged")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The server is not our child: reaped by init (or the subreaper), so
	// wait until kill(pid, 0) says it is gone.
	abAssertGone(t, pids...)
}

// A fixed port that already answers is refused before any server starts:
// exit 2, naming the port.
func TestABRefusesBusyPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	dir := t.TempDir()
	_, _, err = runAB(t, "--a-cmd", "sleep 30", "--a-url", "http://127.0.0.1:"+port, "--b-cmd", "true {port}",
		"-n", "2", "--startup-timeout", "5s", "--out", dir)
	if code := exitCodeTo(context.Background(), io.Discard, err); code != 2 {
		t.Errorf("exit %d (%v), want 2", code, err)
	}
	if err == nil || !strings.Contains(err.Error(), "port "+port) || !strings.Contains(err.Error(), "already accepts connections") {
		t.Errorf("error %v: want the busy port named", err)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "a-server.log")); err == nil && strings.Contains(string(data), "pid") {
		t.Errorf("a server was started on the busy port:\n%s", data)
	}
}

// Credentials in ab's server commands (an env assignment and a
// secret-looking flag) and what the server prints of them stay out of
// every output, the server logs ab keeps included.
func TestABSecretsNeverOut(t *testing.T) {
	bin := abBuildOmnibench(t)
	const envSecret, flagSecret = "envsecret-S6", "flagsecret-S7"
	dir := t.TempDir()
	// The server echoes its secret at start, as a verbose server would.
	serve := "env HF_TOKEN=" + envSecret + " sh -c 'echo token $HF_TOKEN; exec " + abServeCmd(bin) + "' --api-key " + flagSecret
	const headerSecret = "hdrsecret-S8"
	out, stderr, err := runAB(t, "--a-cmd", serve, "--b-cmd", abServeCmd(bin), "-n", "2", "--settle", "0", "--format", "json",
		"-H", "X-Tenant: "+headerSecret, "--out", dir, "--html", filepath.Join(dir, "ab.html"))
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	printed := map[string]string{"stdout": out, "stderr": stderr}
	_ = filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, rerr := os.ReadFile(path)
		if rerr != nil {
			return rerr
		}
		printed[path] = string(data)
		return nil
	})
	if _, ok := printed[filepath.Join(dir, "ab.html")]; !ok {
		t.Error("no ab.html written")
	}
	log := printed[filepath.Join(dir, "a-server.log")]
	if !strings.Contains(log, "token [redacted]") {
		t.Errorf("the server log does not show the echoed token redacted:\n%s", log)
	}
	for what, text := range printed {
		for _, s := range []string{envSecret, flagSecret, headerSecret} {
			if strings.Contains(text, s) {
				t.Errorf("%s contains %q", what, s)
			}
		}
	}
}
