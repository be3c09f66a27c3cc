//go:build unix

package abtest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// The A/B runs with server commands: real processes (this test binary as a
// helper server), started, health-checked and stopped by abtest.

func TestRunServerCommands(t *testing.T) {
	const n, rounds = 6, 2
	a, b := LogStatsArms(helperCmd("serve", "--port", PortPlaceholder), []string{"--stats=on"}, []string{"--stats=off"})
	cfg := testConfig(t, a, b, n, rounds)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkRun(t, res, n, rounds)
	checkFiles(t, cfg.OutDir, res, n, rounds)
	// A B B A with one server at a time: A starts twice, B once.
	if res.A.ServerStarts != 2 || res.B.ServerStarts != 1 {
		t.Errorf("server starts A %d, B %d; want 2 and 1", res.A.ServerStarts, res.B.ServerStarts)
	}
	if res.A.Label != "stats on (--stats=on)" || res.B.Label != "stats off (--stats=off)" {
		t.Errorf("labels %q, %q", res.A.Label, res.B.Label)
	}
	assertGone(t, append(res.A.ServerPIDs, res.B.ServerPIDs...)...)
	for _, arm := range []*ArmResult{res.A, res.B} {
		log, err := os.ReadFile(arm.ServerLog)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Count(string(log), "helper: stopped"); got != arm.ServerStarts {
			t.Errorf("arm %s log shows %d clean stops, want %d:\n%s", arm.Name, got, arm.ServerStarts, log)
		}
	}
}

func TestRunServerFailsToStart(t *testing.T) {
	a := Arm{Cmd: helperCmd("serve", "--port", PortPlaceholder)}
	b := Arm{Cmd: helperCmd("exit")}
	b.URL = "http://127.0.0.1:1" // no {port} in the command: the URL says where it would listen
	cfg := testConfig(t, a, b, 4, 2)
	res, err := Run(context.Background(), cfg)
	if err == nil {
		t.Fatal("no error although B cannot start")
	}
	for _, want := range []string{"arm B", "exited before it became healthy", "exit status 3", "b-server.log", "helper: failing on purpose"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if res == nil || len(res.A.ServerPIDs) != 1 || len(res.B.ServerPIDs) != 1 {
		t.Fatalf("result %+v: want one start of each server", res)
	}
	assertGone(t, res.A.ServerPIDs[0], res.B.ServerPIDs[0])
}

func TestRunServerNeverHealthy(t *testing.T) {
	a := Arm{Cmd: helperCmd("unhealthy", "--port", PortPlaceholder)}
	b, _ := SimulatorArms(fastSimulator(false))
	cfg := testConfig(t, a, b, 4, 2)
	cfg.StartupTimeout = 300 * time.Millisecond
	res, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "did not become healthy within the start-up timeout 300ms") {
		t.Fatalf("error %v", err)
	}
	assertGone(t, res.A.ServerPIDs...)
}

func TestRunInterrupted(t *testing.T) {
	a, b := LogStatsArms(helperCmd("serve", "--port", PortPlaceholder), []string{"--stats=on"}, []string{"--stats=off"})
	cfg := testConfig(t, a, b, 20, 2)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	records := 0
	cfg.Run.OnRecord = func(*results.Record) {
		// Sequential requests: one record at a time, no race.
		records++
		if records == 3 {
			cancel() // like Ctrl-C in the middle of arm A's first round
		}
	}
	res, err := Run(ctx, cfg)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if res == nil || !res.Interrupted || res.A.Rounds != 1 || res.B.Rounds != 0 {
		t.Fatalf("result %+v: want interrupted in A's first round", res)
	}
	assertGone(t, res.A.ServerPIDs...)
	if res.B.ServerStarts != 0 {
		t.Errorf("B started %d times after the interruption", res.B.ServerStarts)
	}
	// What was measured is written and marked.
	data, err := os.ReadFile(filepath.Join(cfg.OutDir, ResultFile))
	if err != nil || !strings.Contains(string(data), `"interrupted": true`) {
		t.Errorf("ab.json (%v): %s", err, data)
	}
	_, recs, err := results.ReadFile(filepath.Join(cfg.OutDir, "a.jsonl"))
	if err != nil || len(recs) < 3 {
		t.Errorf("a.jsonl: %d records, %v", len(recs), err)
	}
	if _, err := os.Stat(filepath.Join(cfg.OutDir, "b.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("b.jsonl of an arm that never ran: %v", err)
	}
}

// A managed server that breaks during a round is not a result: Run fails
// with what broke and gives no verdict.
func TestRunServerBreaksDuringRound(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string
	}{
		{"crash", []string{"arm B: the server exited during round 1 (exit status 1)", "b-server.log", "helper: crashing on /v1/"}},
		{"hang", []string{"arm B: the server stopped answering during round 1 (GET http://127.0.0.1:", "/health:", "b-server.log"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			a, _ := SimulatorArms(fastSimulator(true))
			b := Arm{Cmd: helperCmd(tc.mode, "--port", PortPlaceholder)}
			cfg := testConfig(t, a, b, 4, 2)
			cfg.Run.Client.Timeout = 300 * time.Millisecond // the hanging server's requests time out
			cfg.Run.Load.Warmup = 0
			res, err := Run(context.Background(), cfg)
			if err == nil {
				t.Fatal("no error although B broke")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q: %v", want, err)
				}
			}
			if res == nil || res.Verdict != "" {
				t.Errorf("a verdict was given: %+v", res)
			}
			if res != nil {
				assertGone(t, res.B.ServerPIDs...)
			}
		})
	}
}
