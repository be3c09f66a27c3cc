package abtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/run/selfmon"
	"github.com/omnibench/omnibench/report"
	"github.com/omnibench/omnibench/stats"
)

// throughputConfig is a throughput A/B of the embedded simulator with stats
// on (A) and off (B), statsCost per request with stats on: a closed loop of
// 4 workers against a capacity of 1 stream, so that the server, not the
// client, sets the pace, for rounds rounds of 750 ms per arm.
func throughputConfig(t *testing.T, statsCost time.Duration, rounds int) Config {
	sim := fastSimulator(true)
	sim.Capacity = 1
	sim.StatsCost = statsCost
	a, b := SimulatorArms(sim)
	cfg := testConfig(t, a, b, 0, rounds)
	cfg.Throughput = true
	cfg.Run.Load.Concurrency = 4
	cfg.Run.Load.Requests = 0
	cfg.Run.Load.Duration = time.Duration(rounds) * 750 * time.Millisecond
	// A chance verdict in the null case happens with probability alpha:
	// a small alpha keeps that test from failing by chance, and the cost
	// of the other case is far beyond what the rounds can miss at it.
	cfg.Stats.Alpha = 0.005
	return cfg
}

// TestThroughputFindsARealCost: stats that cost 100 ms of service time per
// request (four times that at the slowdown of 4 workers on a capacity of
// 1, against a service of a few tens of milliseconds) lower the throughput
// of A to a fraction of B's, and the A/B says B (stats off) serves
// significantly more, on both throughput metrics.
func TestThroughputFindsARealCost(t *testing.T) {
	const rounds = 4
	cfg := throughputConfig(t, 100*time.Millisecond, rounds)
	res, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	tp := res.Throughput
	if tp == nil || len(tp.A) != rounds || len(tp.B) != rounds || len(tp.Metrics) != 2 {
		t.Fatalf("throughput %+v", tp)
	}
	for _, mr := range tp.Metrics {
		if !mr.Significant || !(mr.Comparison.DeltaPct > 0) || !strings.HasPrefix(mr.Verdict, "B higher by ") {
			t.Errorf("%s: A %v, B %v: significant %v, delta %.1f%%, verdict %q; want B significantly higher",
				mr.Metric.Name, mr.SamplesA, mr.SamplesB, mr.Significant, mr.Comparison.DeltaPct, mr.Verdict)
		}
	}
	if !res.Significant || !strings.HasPrefix(res.Verdict, "throughput: requests_per_s: B higher by ") || !strings.Contains(res.Verdict, "; latency: ") {
		t.Errorf("verdict %q, significant %v", res.Verdict, res.Significant)
	}
	checkThroughputOutputs(t, res)
}

// TestThroughputNoCostNoDifference: without a cost the arms serve the same
// simulated timings, and the A/B finds no significant throughput difference.
func TestThroughputNoCostNoDifference(t *testing.T) {
	const rounds = 4
	res, err := Run(context.Background(), throughputConfig(t, 0, rounds))
	if err != nil {
		t.Fatal(err)
	}
	tp := res.Throughput
	if tp == nil || len(tp.A) != rounds || len(tp.B) != rounds || len(tp.Metrics) != 2 {
		t.Fatalf("throughput %+v", tp)
	}
	for _, mr := range tp.Metrics {
		if !mr.Tested || mr.Significant || mr.Verdict != "no significant difference" {
			t.Errorf("%s: A %v, B %v: tested %v, significant %v (holm p %g), verdict %q",
				mr.Metric.Name, mr.SamplesA, mr.SamplesB, mr.Tested, mr.Significant, mr.HolmP, mr.Verdict)
		}
	}
	if !strings.HasPrefix(res.Verdict, "throughput: no significant difference at alpha 0.005 (requests_per_s, audio_s_per_s); latency: ") {
		t.Errorf("verdict %q", res.Verdict)
	}
}

// checkThroughputOutputs checks that every output shows the throughput
// comparison: the tables (within 100 columns), the JSON and the HTML page.
func checkThroughputOutputs(t *testing.T, res *Result) {
	t.Helper()
	var table bytes.Buffer
	if err := res.Write(&table, report.FormatTable); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Throughput: B against A", "Throughput per round", "requests_per_s (req/s)", "B higher", "throughput: requests_per_s: B higher by "} {
		if !strings.Contains(table.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, table.String())
		}
	}
	for _, line := range strings.Split(table.String(), "\n") {
		if n := utf8.RuneCountInString(line); n > 100 {
			t.Errorf("line of %d columns: %s", n, line)
		}
	}
	var js bytes.Buffer
	if err := res.Write(&js, report.FormatJSON); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Verdict    string `json:"verdict"`
		Throughput *struct {
			RoundsA []RoundThroughput `json:"rounds_a"`
			RoundsB []RoundThroughput `json:"rounds_b"`
			Metrics []struct {
				Metric  string  `json:"metric"`
				HolmP   float64 `json:"holm_p"`
				Verdict string  `json:"verdict"`
			} `json:"metrics"`
			Verdict string `json:"verdict"`
		} `json:"throughput"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	tp := doc.Throughput
	if doc.Verdict != res.Verdict || tp == nil || tp.Verdict != res.Throughput.Verdict || len(tp.RoundsA) != len(res.Throughput.A) ||
		len(tp.Metrics) != 2 || tp.Metrics[0].Metric != "requests_per_s" || tp.Metrics[0].Verdict != res.Throughput.Metrics[0].Verdict {
		t.Errorf("JSON: %s", js.String())
	}
	var page bytes.Buffer
	if err := report.WriteHTML(&page, res.HTML()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Throughput per round") {
		t.Error("HTML report lacks the throughput tables")
	}
}

// TestThroughputRefusals: too few rounds is a configuration error before
// anything runs, and a result with fewer than two measured rounds in an
// arm (an interrupted run) gets no verdict, with the reason.
func TestThroughputRefusals(t *testing.T) {
	cfg := throughputConfig(t, 0, 1)
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "at least 2 rounds") {
		t.Errorf("one round: %v, want an invalid configuration naming the rounds", err)
	}
	cfg = throughputConfig(t, 0, 2)
	cfg.Run.Load.Rate = 5
	if _, err := Run(context.Background(), cfg); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "closed loop") {
		t.Errorf("a rate: %v, want an invalid configuration", err)
	}

	res := &Result{
		A: &ArmResult{Name: "A", Used: 5}, B: &ArmResult{Name: "B", Used: 5},
		Throughput: &ThroughputResult{
			A: []RoundThroughput{{Round: 1, Completed: 5, WindowS: 1, RequestsPerS: 5}, {Round: 2, Completed: 5, WindowS: 1, RequestsPerS: 5}},
			B: []RoundThroughput{{Round: 1, Completed: 6, WindowS: 1, RequestsPerS: 6}},
		},
	}
	err := refusal(res, false)
	if !errors.Is(err, ErrTooFewRounds) || !strings.Contains(err.Error(), "A has 2 and B 1 measured rounds") {
		t.Fatalf("refusal %v, want ErrTooFewRounds naming the rounds", err)
	}
	res.Throughput.analyse(stats.Options{Alpha: 0.05})
	res.refuse(err.Error())
	if res.Throughput.Verdict != noVerdict || res.Throughput.Metrics[0].Verdict != noVerdict {
		t.Errorf("refused throughput verdict %q, metric %q", res.Throughput.Verdict, res.Throughput.Metrics[0].Verdict)
	}
}

// TestThroughputRefusesASaturatedClient: as the latency comparison, the
// throughput one gives no verdict when the load generator was saturated:
// the client, not the server, may have set the pace.
func TestThroughputRefusesASaturatedClient(t *testing.T) {
	cfg := throughputConfig(t, 0, 2)
	cfg.Run.Load.Duration = time.Second
	cfg.AllowSaturated = false
	// Thresholds every run exceeds: the client counts as saturated.
	cfg.Run.SelfMon = selfmon.Thresholds{CPUShare: 1e-12, Delay: time.Nanosecond}
	res, err := Run(context.Background(), cfg)
	if err == nil || res == nil || res.Refused == "" || res.Throughput == nil || res.Throughput.Verdict != noVerdict {
		t.Fatalf("err %v, result %+v: want a refusal", err, res)
	}
	for _, mr := range res.Throughput.Metrics {
		if mr.Verdict != noVerdict {
			t.Errorf("%s: verdict %q, want %q", mr.Metric.Name, mr.Verdict, noVerdict)
		}
	}
}
