package e2e

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scenarios"
)

// buildOmnibench builds the command for the tests that run it as shard
// processes.
func buildOmnibench(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go tool to build omnibench with")
	}
	bin := filepath.Join(t.TempDir(), "omnibench")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, goTool, "build", "-o", bin, "../../../../cmd/omnibench").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startPrometheusTargets starts Prometheus scraping every second one job
// per name, each with its targets (as one Kubernetes job scrapes N pods).
func startPrometheusTargets(t *testing.T, bin string, jobs map[string][]string) *promServer {
	t.Helper()
	dir := t.TempDir()
	var cfg strings.Builder
	cfg.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\nscrape_configs:\n")
	for name, targets := range jobs {
		fmt.Fprintf(&cfg, "  - job_name: %q\n    static_configs:\n      - targets: [\"%s\"]\n", name, strings.Join(targets, `", "`))
	}
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var lastErr error
	for attempt := range 3 {
		addr, err := freeLoopbackAddr()
		if err != nil {
			t.Fatal(err)
		}
		p, err := runPrometheus(t, bin, cfgPath, filepath.Join(dir, fmt.Sprintf("data%d", attempt)), addr)
		if err == nil {
			return p
		}
		lastErr = err
	}
	t.Fatalf("starting Prometheus: %v", lastErr)
	return nil
}

// shardedRequests is the test the shards split (requestsText for the flag).
const (
	shardedRequests = 30
	requestsText    = "30"
)

// Three shard processes of one open-loop test, each with its exporter,
// scraped by one real Prometheus: the series carry one shard label value
// per process, and summed across shards they equal the counts of the
// shards' merged results; every dashboard query returns data.
func TestPrometheusScrapesShards(t *testing.T) {
	promBin, _ := promTools(t)
	bin := buildOmnibench(t)
	ctx := t.Context()

	sc, err := scenarios.Get("chat-voice")
	if err != nil {
		t.Fatal(err)
	}
	simCfg := simulator.DefaultConfig()
	simCfg.Addr = "127.0.0.1:0"
	simCfg.Model = sc.Model
	simCfg.StatsEnabled = true
	simCfg.Seed = 7
	simCfg.Timing = fastTiming()
	simCfg.Faults.HTTP500 = fault500 // errors on both sides, for the error panels
	sim, err := simulator.Start(ctx, simCfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sim.Close() })

	const shards = 3
	addrs := make([]string, shards)
	for i := range addrs {
		if addrs[i], err = freeLoopbackAddr(); err != nil {
			t.Fatal(err)
		}
	}
	prom := startPrometheusTargets(t, promBin, map[string][]string{"omnibench": addrs, "simulator": {sim.Addr}})

	// The shards wait for an agreed start far enough ahead for Prometheus
	// to take in the new targets (it applies discovered targets every 5 s)
	// and scrape each exporter before its first request, so that every
	// eagerly created series starts at 0 in the TSDB.
	dir := t.TempDir()
	start := time.Now().Add(12 * time.Second)
	startAt := start.UTC().Format(time.RFC3339Nano)
	done := make(chan error, shards)
	for i := range shards {
		// --no-probe: Prometheus sums the server's counters since it
		// started, so an unmeasured probe request would be one the shards'
		// own series cannot show.
		cmd := exec.Command(bin, "run", "--url", sim.URL, "--no-probe", "--scenario", sc.Name, "--seed", "3", "--warmup", "0",
			"--rate", "15", "-n", requestsText, "--shard", fmt.Sprintf("%d/%d", i, shards), "--start-at", startAt,
			"--out", filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)),
			"--metrics-addr", addrs[i], "--metrics-linger", "2m")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stdout = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt) // ends the linger; our own child, by its PID
			select {
			case <-exited:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		// The run is over (results written) when the exporter starts to
		// linger; its stderr says so.
		go func() {
			sc := bufio.NewScanner(stderr)
			var log strings.Builder
			for sc.Scan() {
				log.WriteString(sc.Text() + "\n")
				if strings.Contains(sc.Text(), "serving the final metrics") {
					done <- nil
					io.Copy(io.Discard, stderr)
					return
				}
			}
			done <- fmt.Errorf("shard %d ended without lingering: %v\n%s", i, <-exited, log.String())
		}()
	}
	waitFor(t, "a scrape of every shard before the agreed start", time.Until(start), func() (bool, string) {
		res, err := prom.query(ctx, "omnibench:arrivals_started_total == 0", 0)
		if err != nil || len(res) != shards {
			return false, fmt.Sprintf("%d of %d shards scraped at 0 (%v)", len(res), shards, err)
		}
		return true, ""
	})
	deadline := time.NewTimer(2 * time.Minute)
	defer deadline.Stop()
	for range shards {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case <-deadline.C:
			t.Fatal("the shards did not finish within 2 minutes")
		}
	}
	end := float64(time.Now().UnixMilli())/1000 + 0.05

	var started, failed, frames, completed int
	for i := range shards {
		_, recs, err := results.ReadFile(filepath.Join(dir, fmt.Sprintf("shard-%d.jsonl", i)))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			if r.Warmup {
				continue
			}
			started++
			if r.OK() {
				completed++
			} else {
				failed++
			}
			frames += int(r.AudioFrames)
		}
	}
	if started != shardedRequests || frames == 0 || failed == 0 || completed == 0 {
		t.Fatalf("fixture: the shards recorded %d requests (%d failed) with %d frames, want %d with some of each (change the seed)",
			started, failed, frames, shardedRequests)
	}

	// Two scrapes of every shard and of the server after the last run ended.
	var tClient, tServer float64
	waitFor(t, "two scrapes of every target after the shards ended", 60*time.Second, func() (bool, string) {
		for _, side := range []struct {
			probe string
			n     int
			at    *float64
		}{{"omnibench:arrivals_started_total", shards, &tClient}, {"vllm:omni_e2e_request_latency_s_count", 1, &tServer}} {
			ts, err := prom.query(ctx, "timestamp("+side.probe+")", 0)
			if err != nil || len(ts) != side.n {
				return false, fmt.Sprintf("%s: %d series (%v), want %d", side.probe, len(ts), err, side.n)
			}
			earliest := ts[0].Value
			for _, s := range ts {
				earliest = min(earliest, s.Value)
			}
			if earliest <= end {
				return false, fmt.Sprintf("%s: a last sample at %.3f, the shards ended %.3f", side.probe, earliest, end)
			}
			since := fmt.Sprintf("%dms", int64((earliest-end)*1000))
			n, err := prom.query(ctx, "count_over_time("+side.probe+"["+since+"])", earliest)
			for _, s := range n {
				if s.Value < 2 {
					return false, fmt.Sprintf("%s: %v samples since the shards ended, want 2", side.probe, s.Value)
				}
			}
			if err != nil || len(n) != side.n {
				return false, fmt.Sprintf("%s: %v", side.probe, err)
			}
			*side.at = earliest
		}
		return true, ""
	})

	shardValues, err := prom.labelValues(ctx, "shard", "omnibench:arrivals_started_total")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(shardValues, ",") != "0,1,2" {
		t.Errorf("shard label values %v, want 0, 1, 2", shardValues)
	}
	runExpects(t, ctx, prom, []expect{
		{`count(count by (shard) (omnibench:arrivals_started_total))`, tClient, shards},
		{`sum(omnibench:arrivals_started_total)`, tClient, float64(started)},
		{`sum without (shard, instance) (omnibench:arrivals_started_total)`, tClient, float64(started)},
		{`sum(omnibench:requests_success_total)`, tClient, float64(started)},
		{`sum(omnibench:requests_success_total{finished_reason!="abort"})`, tClient, float64(completed)},
		{`sum(omnibench:requests_success_total{finished_reason="abort"})`, tClient, float64(failed)},
		{`sum without (shard, instance) (omnibench:errors_total{class="http_status"})`, tClient, float64(failed)},
		{`sum(omnibench:e2e_request_latency_s_count)`, tClient, float64(completed)},
		{`sum(omnibench:audio_frames_total)`, tClient, float64(frames)},
		{`sum(omnibench:num_requests_running)`, tClient, 0},
		// The server saw the same test.
		{`sum(vllm:omni_requests_success_total)`, tServer, float64(started)},
		{`sum(vllm:omni_requests_success_total{finished_reason="abort"})`, tServer, float64(failed)},
		{`sum(vllm:omni_audio_frames_total)`, tServer, float64(frames)},
	})
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, ctx, prom, sc.Model, tClient, tServer) })
}
