package omnimetrics

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestUpstreamMaterializesTopology(t *testing.T) {
	opts := serverOpts(PrefixCurrent) // upstream names ignore the prefix
	opts.Upstream = true
	opts.Topology = []int{1, 2, 1}
	m := newTestMetrics(t, opts)
	if m.Upstream() == nil {
		t.Fatal("Upstream() = nil with stats on and Options.Upstream")
	}
	fams := familyNames(t, m.Registry())
	for _, s := range UpstreamFamilies() {
		mf, ok := fams[s.Name]
		if !ok {
			t.Errorf("%s not exposed", s.Name)
			continue
		}
		want := 4 // (0,0) (1,0) (1,1) (2,0)
		if s.Name == "vllm:request_success_total" {
			want = 4 * 3 // stop, length, abort
		}
		if got := len(mf.GetMetric()); got != want {
			t.Errorf("%s: %d series, want %d", s.Name, got, want)
		}
	}
	if r := findMetric(t, m.Registry(), "vllm:time_to_first_token_seconds", map[string]string{"stage": "1", "replica": "1", "model_name": testModel}); r == nil {
		t.Error("no TTFT child for stage 1 replica 1")
	}
	for name := range fams {
		if !strings.HasPrefix(name, "vllm:") && !strings.HasPrefix(name, PrefixCurrent) {
			t.Errorf("unexpected family %s", name)
		}
	}
}

func TestUpstreamObserveRequest(t *testing.T) {
	opts := serverOpts("")
	opts.Upstream = true
	opts.Topology = []int{1}
	m := newTestMetrics(t, opts)
	u := m.Upstream()
	sr := StageReplica{Stage: 0, Replica: 0}
	// 11 generated tokens over 1 s of decode: TPOT = 1 / (11 - 1) = 0.1.
	u.ObserveRequest(sr, 0.05, 2, 0.25, 0.05, 1, 30, 11, []float64{0.0625, 0.125}, "length")
	// One generated token: TPOT is 0 (vLLM observes the 0).
	u.ObserveRequest(sr, 0.5, 0.75, 0.125, 0.5, 0, 7, 1, nil, "")
	u.SetScheduler(sr, 4, 2, 0.375)
	u.PrefixCache(sr, 64, 16)
	u.Preempted(sr, 2)
	u.Preempted(sr, -1) // ignored

	lbl := map[string]string{"stage": "0", "replica": "0"}
	counter := func(name string, extra ...string) float64 {
		l := map[string]string{"stage": "0", "replica": "0"}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		mt := findMetric(t, m.Registry(), name, l)
		if mt == nil {
			t.Fatalf("%s%v missing", name, l)
		}
		if mt.Gauge != nil {
			return mt.GetGauge().GetValue()
		}
		return mt.GetCounter().GetValue()
	}
	for _, tc := range []struct {
		name  string
		extra []string
		want  float64
	}{
		{"vllm:prompt_tokens_total", nil, 37},
		{"vllm:generation_tokens_total", nil, 12},
		{"vllm:request_success_total", []string{"finished_reason", "length"}, 1},
		{"vllm:request_success_total", []string{"finished_reason", "stop"}, 1},
		{"vllm:request_success_total", []string{"finished_reason", "abort"}, 0},
		{"vllm:num_requests_running", nil, 4},
		{"vllm:num_requests_waiting", nil, 2},
		{"vllm:kv_cache_usage_perc", nil, 0.375},
		{"vllm:prefix_cache_queries_total", nil, 64},
		{"vllm:prefix_cache_hits_total", nil, 16},
		{"vllm:num_preemptions_total", nil, 2},
	} {
		if got := counter(tc.name, tc.extra...); got != tc.want {
			t.Errorf("%s%v = %v, want %v", tc.name, tc.extra, got, tc.want)
		}
	}

	hist := func(name string) (count uint64, sum float64) {
		h := findMetric(t, m.Registry(), name, lbl).GetHistogram()
		return h.GetSampleCount(), h.GetSampleSum()
	}
	for _, tc := range []struct {
		name  string
		count uint64
		sum   float64
	}{
		{"vllm:time_to_first_token_seconds", 2, 0.55},
		{"vllm:inter_token_latency_seconds", 2, 0.1875},
		{"vllm:request_time_per_output_token_seconds", 2, 0.1},
		{"vllm:e2e_request_latency_seconds", 2, 2.75},
		{"vllm:request_queue_time_seconds", 2, 0.375},
		{"vllm:request_prefill_time_seconds", 2, 0.55},
		{"vllm:request_decode_time_seconds", 2, 1},
	} {
		count, sum := hist(tc.name)
		if count != tc.count || math.Abs(sum-tc.sum) > 1e-12 {
			t.Errorf("%s: count %d sum %v, want %d %v", tc.name, count, sum, tc.count, tc.sum)
		}
	}
	// Bucket placement with upstream buckets: TTFT 0.05 lies in (0.04, 0.06].
	ttft := findMetric(t, m.Registry(), "vllm:time_to_first_token_seconds", lbl).GetHistogram()
	if bucketCount(t, ttft, 0.04) != 0 || bucketCount(t, ttft, 0.06) != 1 || bucketCount(t, ttft, 0.5) != 2 {
		t.Errorf("TTFT buckets %v", ttft.GetBucket())
	}
	// TPOT 0.1 lies in (0.075, 0.1]; the 0 from the one-token request in the first bucket.
	tpot := findMetric(t, m.Registry(), "vllm:request_time_per_output_token_seconds", lbl).GetHistogram()
	if bucketCount(t, tpot, 0.01) != 1 || bucketCount(t, tpot, 0.075) != 1 || bucketCount(t, tpot, 0.1) != 2 {
		t.Errorf("TPOT buckets %v", tpot.GetBucket())
	}

	// Unknown (stage, replica) outside the topology still works.
	u.SetScheduler(StageReplica{Stage: 5, Replica: 1}, 1, 0, 0)
	if n := testutil.CollectAndCount(m.Registry(), "vllm:num_requests_running"); n != 2 {
		t.Errorf("num_requests_running has %d series, want 2", n)
	}
}
