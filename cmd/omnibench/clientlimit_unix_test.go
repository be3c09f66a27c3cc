//go:build unix

package main

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// clientLimitChildEnv, set, makes TestRunClientLimitExit the child that
// runs with a low open-file limit; its value is the simulator's URL.
const clientLimitChildEnv = "OMNIBENCH_TEST_RUN_FD_LIMIT_CHILD"

// TestRunClientLimitExit: an open loop whose client runs out of file
// descriptors fails (1), saying the figures are the client's, instead of
// counting the failures against the server and missing its SLO (3). The
// limit is real: a child process (this test binary again) lowers its own
// RLIMIT_NOFILE, hard limit too, so that the run cannot raise it back, and
// runs the command in process against a simulator in this one.
func TestRunClientLimitExit(t *testing.T) {
	if url := os.Getenv(clientLimitChildEnv); url != "" {
		lim := syscall.Rlimit{Cur: 40, Max: 40}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatalf("lowering RLIMIT_NOFILE: %v", err)
		}
		code, said := execContract(t, "run", "--url", url, "--rate", "300", "-n", "200", "--warmup", "0", "--scrape", "off", "--settle", "0")
		if code != 1 || !strings.Contains(said, "client_limit") || !strings.Contains(said, "the run measured the client, not the server") {
			t.Fatalf("exit %d; want 1 with the client's limit named. It said:\n%s", code, said)
		}
		return
	}
	t.Parallel()
	// Responses of half a second at 300 arrivals a second: about 150
	// streams at once, far over the child's 40 descriptors.
	cfg := runSimConfig(t)
	cfg.Timing.RTF, cfg.Timing.MinAudio, cfg.Timing.MaxAudio = 1, 500*time.Millisecond, 500*time.Millisecond
	sim := startRunSim(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRunClientLimitExit$", "-test.count=1")
	cmd.Env = append(os.Environ(), clientLimitChildEnv+"="+sim)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
}
