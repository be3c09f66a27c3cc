package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/run/slo"
	"github.com/omnibench/omnibench/internal/scale/merge/mergetest"
	"github.com/omnibench/omnibench/load"
)

// startServeProcess starts `omnibench serve` on a free loopback port with
// millisecond timing and no jitter, and returns its URL once it listens.
func startServeProcess(t *testing.T, bin string) string {
	t.Helper()
	// abServeCmd's server, with its port picked by the kernel.
	args := strings.Fields(strings.Replace(abServeCmd(bin, "--jitter", "0", "--log-stats"), "{port}", "0", 1))[1:]
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "omnibench serve: listening on "); ok {
				urls <- u
				io.Copy(io.Discard, stderr)
				return
			}
			t.Log(sc.Text())
		}
		urls <- "" // exited without listening
	}()
	select {
	case u := <-urls:
		if u == "" {
			t.Fatal("omnibench serve exited before it listened")
		}
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("omnibench serve did not say where it listens within 30s")
	}
	return ""
}

// runBinary runs the omnibench binary and fails the test unless it exits 0.
func runBinary(t *testing.T, ctx context.Context, bin string, args ...string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("omnibench %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// The proof on one machine: three shard processes of one test against one
// server give, merged, the one-process schedule (intended offsets to the
// microsecond, sequence numbers, prompts), server deltas equal to the
// merged counts, and the report of the concatenated records.
func TestShardsMergeToTheOneProcessTest(t *testing.T) {
	bin := abBuildOmnibench(t)
	url := startServeProcess(t, bin)
	const shards, seed = 3, 5
	for _, tc := range []struct {
		name string
		load []string
		cfg  load.Config // the one-process load, for the schedule
	}{
		{"open", []string{"--rate", "60", "--arrival", "poisson", "-n", "24"}, load.Config{Rate: 60, Arrival: load.Poisson, Requests: 24, Seed: seed}},
		{"closed", []string{"-c", "4", "-n", "18"}, load.Config{Concurrency: 4, Requests: 18, Seed: seed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			common := append([]string{"run", "--url", url, "--scenario", "chat-voice", "--seed", fmt.Sprint(seed), "--warmup", "0", "--format", "json"}, tc.load...)

			// Two seconds is ample for three processes to start: none is
			// late unless the machine stalls, and a late one still merges.
			startAt := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339Nano)
			errs := make(chan error, shards)
			for i := range shards {
				out := filepath.Join(dir, fmt.Sprintf("shard-%d", i))
				args := append(slices.Clone(common), "--shard", fmt.Sprintf("%d/%d", i, shards), "--start-at", startAt,
					"--out", out+".jsonl", "--save-scrapes", out)
				go func() {
					if msg, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
						errs <- fmt.Errorf("shard %d: %v\n%s", i, err, msg)
						return
					}
					errs <- nil
				}()
			}
			for range shards {
				if err := <-errs; err != nil {
					t.Fatal(err)
				}
			}
			merged := filepath.Join(dir, "merged.jsonl")
			files, _ := filepath.Glob(filepath.Join(dir, "shard-*.jsonl"))
			mergeOut := runBinary(t, ctx, bin, append(append([]string{"merge"}, files...), "--out", merged)...)
			if !strings.Contains(string(mergeOut), "start skew") || strings.Contains(string(mergeOut), "miss") {
				t.Errorf("merge output:\n%s", mergeOut)
			}
			h, recs, err := results.ReadFile(merged)
			if err != nil {
				t.Fatal(err)
			}
			if h.Merged == nil || len(h.Merged.Shards) != shards || h.StartAt == "" {
				t.Fatalf("merged header %+v", h)
			}
			t.Logf("%s loop: start skew %.3f ms; lateness per shard (ms): %.3f, %.3f, %.3f", tc.name, h.Merged.StartSkewS*1000,
				h.Merged.Shards[0].StartLateS*1000, h.Merged.Shards[1].StartLateS*1000, h.Merged.Shards[2].StartLateS*1000)

			// The schedule: every sequence number once, and in an open loop
			// each at the one-process schedule's offset.
			bySeq := mergetest.Schedule(t, recs, tc.cfg)

			// The prompts: each sequence number's prompt, as the server
			// counted its tokens, is the one-process run's.
			ref := filepath.Join(dir, "one-process.jsonl")
			refDoc := filepath.Join(dir, "one-process.json")
			slos := []string{"--slo", "audio_ttfp_p95<60s", "--slo", "error_rate<0.5", "--slo", "continuity_ok_rate_100ms>=0"}
			runBinary(t, ctx, bin, append(append(slices.Clone(common), "--out", ref, "--summary", refDoc), slos...)...)
			_, refRecs, err := results.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			mergetest.Prompts(t, bySeq, refRecs)

			// The server's deltas between shard 0's snapshots are the
			// merged counts.
			before, after := mergetest.Snapshots(t, merged)
			ok := mergetest.ServerDeltas(t, before, after, recs)
			runBinary(t, ctx, bin, "check", before.Path, after.Path, "--run", merged)

			// Shard 0's scrape lines came along: the merged report breaks
			// down every shard's requests, which the server served.
			var doc struct {
				Breakdown *struct {
					Computable bool    `json:"computable"`
					Requests   float64 `json:"requests"`
				} `json:"breakdown"`
			}
			if err := json.Unmarshal(runBinary(t, ctx, bin, "report", merged, "--format", "json"), &doc); err != nil {
				t.Fatal(err)
			}
			if b := doc.Breakdown; b == nil || !b.Computable || b.Requests != float64(ok) {
				t.Errorf("merged report's breakdown %+v, want the %d merged requests", b, ok)
			}

			// The other readers of results take the merge like any run.
			runBinary(t, ctx, bin, "compare", ref, merged)
			runBinary(t, ctx, bin, "replay", merged)

			// The merged report is the report of the concatenated records.
			var concat bytes.Buffer
			w := results.NewWriter(&concat)
			if err := w.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			for _, sc := range h.Scrapes { // shard 0's, as the merge keeps them
				if err := w.WriteScrape(sc); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range files {
				_, rs, err := results.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				for i := range rs {
					if err := w.Write(&rs[i]); err != nil {
						t.Fatal(err)
					}
				}
			}
			concatPath := filepath.Join(dir, "concatenated.jsonl")
			if err := os.WriteFile(concatPath, concat.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"table", "json"} {
				got := runBinary(t, ctx, bin, append([]string{"report", merged, "--format", format}, slos...)...)
				want := runBinary(t, ctx, bin, append([]string{"report", concatPath, "--format", format}, slos...)...)
				if !bytes.Equal(got, want) {
					t.Errorf("report --format %s of the merge differs from that of the concatenated records:\n%s\n---\n%s", format, got, want)
				}
			}
			checkReportSLOs(t, ctx, bin, ref, refDoc, merged, slos)
		})
	}
}

// writeShardFile writes a results file of shard i/n with the given seed.
func writeShardFile(t *testing.T, dir string, i, n int, seed int64) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := results.NewWriter(f)
	h := results.Header{StartedAt: "2026-12-01T10:00:00Z", Seed: seed, Mode: "closed", Concurrency: n, ShardIndex: i, ShardCount: n, StartAt: "2026-12-01T10:00:05Z"}
	if err := w.WriteHeader(h); err != nil {
		t.Fatal(err)
	}
	r := results.Record{ID: fmt.Sprintf("req-%06d", i), Seq: i, E2ES: 0.1}
	if err := w.Write(&r); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestMergeCmdUnusableInput(t *testing.T) {
	dir := t.TempDir()
	s0 := writeShardFile(t, dir, 0, 3, 1)
	s1 := writeShardFile(t, dir, 1, 3, 2)
	out := filepath.Join(dir, "merged.jsonl")
	for _, tc := range []struct {
		args    []string
		mention []string
	}{
		{[]string{"merge", s0, s1, "--out", out}, []string{"seed 2", "shard 2 of 3 missing"}},
		{[]string{"merge", s0, s0, "--out", out}, []string{"shard 0: 2 files", "--keep FILE or --prefer newest"}},
		{[]string{"merge", s0}, []string{"--out"}},
		{[]string{"merge", filepath.Join(dir, "none.jsonl"), "--out", out}, []string{"none.jsonl"}},
		{[]string{"run", "--shard", "auto/3"}, []string{"JOB_COMPLETION_INDEX is not set"}},
		{[]string{"run", "--shard", "0/3", "-c", "2"}, []string{"concurrency 2 is split over 3 shards"}},
		{[]string{"run", "--start-at", "soon"}, []string{"--start-at", "RFC 3339"}},
	} {
		t.Setenv("JOB_COMPLETION_INDEX", "")
		_, _, code, err := runMetricsCmd(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d (%v), want 2", tc.args, code, err)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%v: error %q does not mention %q", tc.args, err, m)
			}
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("a refused merge wrote %s", out)
	}
}

// checkReportSLOs: report --slo over a run's results file gives the run's
// own --slo verdicts (run and report evaluate SLOs on one code path), the
// merge's verdicts are in every format and in --junit, and a missed SLO
// exits 3.
func checkReportSLOs(t *testing.T, ctx context.Context, bin, ref, refDoc, merged string, slos []string) {
	t.Helper()
	var run struct {
		SLOs []slo.Result `json:"slos"`
	}
	raw, err := os.ReadFile(refDoc)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &run); err != nil {
		t.Fatal(err)
	}
	var rep reportDocument
	if err := json.Unmarshal(runBinary(t, ctx, bin, append([]string{"report", ref, "--format", "json"}, slos...)...), &rep); err != nil {
		t.Fatal(err)
	}
	// The run's verdicts also hold the scenario's own SLOs, which report
	// does not read: compare the --slo ones.
	var fromFlags []slo.Result
	for _, v := range run.SLOs {
		for _, r := range rep.SLOs {
			if v.SLO.Expr == r.SLO.Expr {
				fromFlags = append(fromFlags, v)
			}
		}
	}
	if len(rep.SLOs) != 3 || !reflect.DeepEqual(rep.SLOs, fromFlags) {
		t.Errorf("report --slo over the run's file:\n%+v\nthe run's verdicts:\n%+v", rep.SLOs, run.SLOs)
	}

	junitPath := filepath.Join(filepath.Dir(merged), "slo.xml")
	table := runBinary(t, ctx, bin, append([]string{"report", merged, "--junit", junitPath}, slos...)...)
	if !strings.Contains(string(table), "audio_ttfp_p95<60s") {
		t.Errorf("the table lacks the SLO verdicts:\n%s", table)
	}
	if x, err := os.ReadFile(junitPath); err != nil || !strings.Contains(string(x), "error_rate&lt;0.5") && !strings.Contains(string(x), "error_rate<0.5") {
		t.Errorf("--junit: %v\n%s", err, x)
	}
	cmd := exec.CommandContext(ctx, bin, "report", merged, "--slo", "audio_ttfp_p95<1us", "--format", "markdown")
	out, err := cmd.Output()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != slo.ExitSLOMiss || !strings.Contains(string(out), "audio_ttfp_p95<1us") {
		t.Errorf("a missed SLO: %v (want exit %d)\n%s", err, slo.ExitSLOMiss, out)
	}
}
