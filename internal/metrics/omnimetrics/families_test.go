package omnimetrics

import (
	"slices"
	"strings"
	"testing"
)

// The bucket lists of docs/reference/metric-families.md, sections 3.2 and
// 4.2, copied from that page rather than from the code under test.
var (
	protoSeconds     = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}
	protoSecondsFast = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60}
	protoRTF         = []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2, 5, 10}
	protoBytes       = []float64{1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456}
	protoTTFT        = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5,
		7.5, 10, 20, 40, 80, 160, 640, 2560}
	protoTokenLatency = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1,
		2.5, 5, 7.5, 10, 20, 40, 80}
	protoRequestLatency = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20,
		30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
)

type wantFamily struct {
	name    string
	typ     string
	labels  string // comma-separated, sorted
	buckets []float64
}

func checkFamilies(t *testing.T, got []FamilySpec, want []wantFamily) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d families, want %d", len(got), len(want))
	}
	byName := map[string]FamilySpec{}
	for _, s := range got {
		if _, dup := byName[s.Name]; dup {
			t.Errorf("family %s defined twice", s.Name)
		}
		byName[s.Name] = s
	}
	for _, w := range want {
		s, ok := byName[w.name]
		if !ok {
			t.Errorf("family %s missing", w.name)
			continue
		}
		if s.Type != w.typ {
			t.Errorf("%s: type %q, want %q", w.name, s.Type, w.typ)
		}
		labels := slices.Clone(s.Labels)
		slices.Sort(labels)
		if got := strings.Join(labels, ","); got != w.labels {
			t.Errorf("%s: labels %s, want %s", w.name, got, w.labels)
		}
		if !slices.Equal(s.Buckets, w.buckets) {
			t.Errorf("%s: buckets %v, want %v", w.name, s.Buckets, w.buckets)
		}
		if s.Help == "" {
			t.Errorf("%s: no HELP text", w.name)
		}
		if (s.Type == TypeCounter) != strings.HasSuffix(s.Name, "_total") {
			t.Errorf("%s: counters, and only counters, must end in _total", w.name)
		}
	}
}

// TestPipelineFamiliesMatchProtocol checks the table against
// docs/reference/metric-families.md, section 3.1, written out here
// independently.
func TestPipelineFamiliesMatchProtocol(t *testing.T) {
	const (
		m    = "model_name"
		sr   = "model_name,replica,stage"
		edge = "from_replica,from_stage,model_name,to_replica,to_stage"
	)
	checkFamilies(t, PipelineFamilies(), []wantFamily{
		{"num_requests_running", TypeGauge, m, nil},
		{"num_requests_waiting", TypeGauge, m, nil},
		{"requests_success_total", TypeCounter, "finished_reason,model_name", nil},
		{"e2e_request_latency_s", TypeHistogram, m, protoSeconds},
		{"prompt_tokens_total", TypeCounter, m, nil},
		{"generation_tokens_total", TypeCounter, m, nil},
		{"audio_ttfp_s", TypeHistogram, sr, protoSeconds},
		{"audio_duration_s", TypeHistogram, sr, protoSeconds},
		{"audio_rtf", TypeHistogram, sr, protoRTF},
		{"audio_frames_total", TypeCounter, sr, nil},
		{"audio_underrun_s", TypeHistogram, sr, protoSecondsFast},
		{"audio_continuity_ok_total", TypeCounter, "model_name,replica,stage,threshold_ms", nil},
		{"audio_skipped_requests_total", TypeCounter, "model_name,reason,replica,stage", nil},
		{"transfer_size_bytes", TypeHistogram, edge, protoBytes},
		{"transfer_tx_s", TypeHistogram, edge, protoSecondsFast},
		{"transfer_rx_s", TypeHistogram, edge, protoSecondsFast},
		{"transfer_in_flight_s", TypeHistogram, edge, protoSecondsFast},
	})
}

// TestUpstreamFamiliesMatchProtocol checks the upstream table against
// docs/reference/metric-families.md, section 4.2.
func TestUpstreamFamiliesMatchProtocol(t *testing.T) {
	const sr = "model_name,replica,stage"
	checkFamilies(t, UpstreamFamilies(), []wantFamily{
		{"vllm:num_requests_running", TypeGauge, sr, nil},
		{"vllm:num_requests_waiting", TypeGauge, sr, nil},
		{"vllm:kv_cache_usage_perc", TypeGauge, sr, nil},
		{"vllm:prompt_tokens_total", TypeCounter, sr, nil},
		{"vllm:generation_tokens_total", TypeCounter, sr, nil},
		{"vllm:request_success_total", TypeCounter, "finished_reason,model_name,replica,stage", nil},
		{"vllm:num_preemptions_total", TypeCounter, sr, nil},
		{"vllm:prefix_cache_queries_total", TypeCounter, sr, nil},
		{"vllm:prefix_cache_hits_total", TypeCounter, sr, nil},
		{"vllm:time_to_first_token_seconds", TypeHistogram, sr, protoTTFT},
		{"vllm:inter_token_latency_seconds", TypeHistogram, sr, protoTokenLatency},
		{"vllm:request_time_per_output_token_seconds", TypeHistogram, sr, protoTokenLatency},
		{"vllm:e2e_request_latency_seconds", TypeHistogram, sr, protoRequestLatency},
		{"vllm:request_queue_time_seconds", TypeHistogram, sr, protoRequestLatency},
		{"vllm:request_prefill_time_seconds", TypeHistogram, sr, protoRequestLatency},
		{"vllm:request_decode_time_seconds", TypeHistogram, sr, protoRequestLatency},
	})
}

func TestBucketFunctions(t *testing.T) {
	for _, tc := range []struct {
		name      string
		got, want []float64
	}{
		{"SECONDS", SecondsBuckets(), protoSeconds},
		{"SECONDS_FAST", SecondsFastBuckets(), protoSecondsFast},
		{"RTF", RTFBuckets(), protoRTF},
		{"BYTES", BytesBuckets(), protoBytes},
	} {
		if !slices.Equal(tc.got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

// TestFamiliesAreCopies makes sure a caller cannot change the one definition.
func TestFamiliesAreCopies(t *testing.T) {
	a := PipelineFamilies()
	a[0].Name = "changed"
	a[int(famE2E)].Buckets[0] = 42
	a[int(famRequestsSuccess)].Labels[0] = "changed"
	b := PipelineFamilies()
	if b[0].Name == "changed" || b[int(famE2E)].Buckets[0] == 42 || b[int(famRequestsSuccess)].Labels[0] == "changed" {
		t.Fatal("PipelineFamilies returned shared, mutable state")
	}
	SecondsBuckets()[0] = 42
	if SecondsBuckets()[0] != 0.05 {
		t.Fatal("SecondsBuckets returned shared, mutable state")
	}
}
