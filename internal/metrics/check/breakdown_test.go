package check

import (
	"fmt"
	"strings"
	"testing"
)

func breakdownRules(t *testing.T) []Rule {
	t.Helper()
	rules, err := Profile(ProfileBreakdown)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// The simulator's per-stage and per-edge series are consistent with its
// pipeline's: the breakdown profile passes.
func TestBreakdownRulesSimulator(t *testing.T) {
	run := startSimulator(t, true)
	before := scrapeSim(t, run)
	traffic(t, run.URL, 3)
	rep := Evaluate(Input{Before: before, After: scrapeSim(t, run)}, breakdownRules(t))
	res := byRule(rep)
	for _, name := range []string{ruleStageCounts, ruleHops, rulePartsWithin} {
		if r := res[name]; r.Status != Pass {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// A server whose stats are off has nothing to break down: the rules skip.
func TestBreakdownRulesStatsOff(t *testing.T) {
	run := startSimulator(t, false)
	before := scrapeSim(t, run)
	traffic(t, run.URL, 1)
	rep := Evaluate(Input{Before: before, After: scrapeSim(t, run)}, breakdownRules(t))
	if !rep.OK() || len(rep.Results) != 3 {
		t.Fatalf("stats off: %+v", rep.Results)
	}
	for _, r := range rep.Results {
		if r.Status != Skip || r.Detail == "" {
			t.Errorf("stats off: %+v", r)
		}
	}
}

// inconsistentExposition is two pipeline requests of 0.1 s each, of which
// stage 1 counted one, with no hop from stage 1 to stage 2 and stages that
// take longer than the pipeline.
func inconsistentExposition() string {
	var b strings.Builder
	hist := func(name, labels string, n int, sum float64) {
		fmt.Fprintf(&b, "# TYPE %s histogram\n", name)
		sep := ""
		if labels != "" {
			sep = ","
		}
		fmt.Fprintf(&b, "%s_bucket{%s%sle=\"1\"} %d\n%s_bucket{%s%sle=\"+Inf\"} %d\n", name, labels, sep, n, name, labels, sep, n)
		fmt.Fprintf(&b, "%s_sum{%s} %g\n%s_count{%s} %d\n", name, labels, sum, name, labels, n)
	}
	hist("vllm:omni_e2e_request_latency_s", `model_name="m"`, 2, 0.2)
	fmt.Fprintf(&b, "# TYPE vllm:e2e_request_latency_seconds histogram\n")
	for _, s := range []struct {
		stage string
		n     int
		sum   float64
	}{{"0", 2, 0.1}, {"1", 1, 0.15}, {"2", 2, 0.1}} {
		l := fmt.Sprintf(`replica="0",stage="%s"`, s.stage)
		fmt.Fprintf(&b, "vllm:e2e_request_latency_seconds_bucket{%s,le=\"1\"} %d\n", l, s.n)
		fmt.Fprintf(&b, "vllm:e2e_request_latency_seconds_bucket{%s,le=\"+Inf\"} %d\n", l, s.n)
		fmt.Fprintf(&b, "vllm:e2e_request_latency_seconds_sum{%s} %g\nvllm:e2e_request_latency_seconds_count{%s} %d\n", l, s.sum, l, s.n)
	}
	edge := `from_replica="0",from_stage="0",to_replica="0",to_stage="1"`
	for _, fam := range []string{"vllm:omni_transfer_tx_s", "vllm:omni_transfer_rx_s", "vllm:omni_transfer_in_flight_s"} {
		hist(fam, edge, 2, 0.002)
	}
	return b.String()
}

// Each inconsistency fails its rule and says which stage.
func TestBreakdownRulesInconsistent(t *testing.T) {
	rep := Evaluate(Input{After: parseText(t, inconsistentExposition())}, breakdownRules(t))
	res := byRule(rep)
	for _, c := range []struct{ rule, problem string }{
		{ruleStageCounts, "stage 1 finished 1 requests, the pipeline 2"},
		{ruleHops, "stage 1 handed on 0 hops for 2 requests"},
	} {
		r := res[c.rule]
		if r.Status != Fail || !strings.Contains(strings.Join(r.Problems, "\n")+r.Detail, c.problem) {
			t.Errorf("%s: %+v, want a failure naming %q", c.rule, r, c.problem)
		}
	}
	// Stage means 0.05 + 0.15 + 0.05 and the hops' 3 ms against 0.1 s of e2e.
	if r := res[rulePartsWithin]; r.Status != Fail {
		t.Errorf("%s: %+v", rulePartsWithin, r)
	}
}
