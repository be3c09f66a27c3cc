package simulator

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestSlownessValidation(t *testing.T) {
	for _, c := range []struct {
		name string
		slow Slowness
		want string // "" when valid
	}{
		{"none", Slowness{}, ""},
		{"all knobs", Slowness{Stages: []SlowStage{{0, 2}}, Replicas: []SlowReplica{{2, 1, 3}},
			Edges: []SlowEdge{{1, 0, 1, 10 * time.Millisecond}}}, ""},
		{"stage out of topology", Slowness{Stages: []SlowStage{{3, 2}}}, "Slow.Stages[0]: stage 3"},
		{"zero factor", Slowness{Stages: []SlowStage{{0, 0}}}, "factor 0 is outside"},
		{"NaN factor", Slowness{Replicas: []SlowReplica{{0, 0, math.NaN()}}}, "factor NaN"},
		{"replica out of topology", Slowness{Replicas: []SlowReplica{{2, 2, 2}}}, "stage 2 replica 2"},
		{"edge past the last stage", Slowness{Edges: []SlowEdge{{2, 0, 0, time.Millisecond}}}, "edge 2/0 -> 3/0"},
		{"edge to a missing replica", Slowness{Edges: []SlowEdge{{1, 0, 2, time.Millisecond}}}, "edge 1/0 -> 2/2"},
		{"negative extra", Slowness{Edges: []SlowEdge{{0, 0, 0, -time.Millisecond}}}, "extra -1ms"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.Topology = []int{1, 1, 2}
			cfg.Slow = c.slow
			_, err := New(cfg)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("New: %v, want an error with %q", err, c.want)
			}
		})
	}
}

// The config keeps its own copy of the knobs.
func TestSlownessIsCopied(t *testing.T) {
	cfg := testConfig()
	cfg.Slow.Stages = []SlowStage{{0, 2}}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Slow.Stages[0].Factor = 5
	got := s.Config()
	got.Slow.Stages[0].Factor = 7
	if f := s.Config().Slow.Stages[0].Factor; f != 2 {
		t.Errorf("the server's factor became %v", f)
	}
}

// The stages' and hops' times the series record are the time the requests
// took: the pipeline's e2e is at least their sum (the rest, late timers and
// writing, is never negative), and a slow replica's and a slow edge's
// extra time shows in their own series by the factor and the extra given.
func TestStageTimesAddUpAndSlownessIsReal(t *testing.T) {
	cfg := testConfig()
	cfg.Topology = []int{1, 1, 2}
	cfg.Timing.TTFA = 20 * time.Millisecond
	cfg.Timing.RTF = 0.1 // 10 ms per 0.1 s chunk
	cfg.Slow = Slowness{Replicas: []SlowReplica{{2, 1, 3}}, Edges: []SlowEdge{{1, 0, 1, 5 * time.Millisecond}}}
	run := startSim(t, cfg)
	const requests = 4 // round robin: replicas 0, 1, 0, 1 of stage 2
	for range requests {
		if status, _, _ := doSpeech(t, run, speechReq(input10, nil)); status != 200 {
			t.Fatalf("status %d", status)
		}
	}
	mfs, _ := scrape(t, run.URL, "")
	hist := func(name string, labels m) (sum float64, count uint64) {
		h := sample(mfs, name, labels).GetHistogram()
		return h.GetSampleSum(), h.GetSampleCount()
	}
	e2e, n := hist(p+"e2e_request_latency_s", nil)
	var parts float64
	for _, l := range []m{lbl0(0), lbl0(1), lbl(0), lbl(1)} {
		s, c := hist("vllm:e2e_request_latency_seconds", l)
		if l["stage"] == "2" && c != requests/2 || l["stage"] != "2" && c != requests {
			t.Errorf("stage %s replica %s counted %d requests", l["stage"], l["replica"], c)
		}
		parts += s
	}
	// Speech streams no text, but the thinker's first token is its prefill.
	if ttft, c := hist("vllm:time_to_first_token_seconds", lbl0(0)); math.Abs(ttft/float64(c)-cfg.Timing.TTFT.Seconds()) > 1e-9 {
		t.Errorf("thinker's TTFT mean %v s, want %v", ttft/float64(c), cfg.Timing.TTFT)
	}
	slow, _ := hist("vllm:e2e_request_latency_seconds", lbl(1))
	fast, _ := hist("vllm:e2e_request_latency_seconds", lbl(0))
	if r := slow / fast; math.Abs(r-3) > 1e-3 {
		t.Errorf("slow replica's e2e is %.4f× the other's, want 3", r)
	}
	for _, edge := range []m{edgeLabels(0), edgeLabels(1)} {
		for _, fam := range []string{"transfer_tx_s", "transfer_rx_s", "transfer_in_flight_s"} {
			s, _ := hist(p+fam, edge)
			parts += s
		}
	}
	inFlight, hops := hist(p+"transfer_in_flight_s", edgeLabels(1))
	if mean := inFlight / float64(hops); mean < 0.005 || mean > 0.0051 {
		t.Errorf("slow edge's in-flight mean %v s, want 5 ms and its modelled 50 µs", mean)
	}
	if n != requests || parts > e2e+1e-9 {
		t.Errorf("stages and hops take %.6f s over %d requests, more than the pipeline's e2e %.6f s", parts, n, e2e)
	}
}

// lbl0 is stage 0 or 1's only replica.
func lbl0(stage int) m {
	return m{"model_name": testModel, "stage": string(rune('0' + stage)), "replica": "0"}
}

// edgeLabels is the edge from talker replica 0 to code2wav replica r.
func edgeLabels(r int) m {
	return m{"model_name": testModel, "from_stage": "1", "from_replica": "0", "to_stage": "2",
		"to_replica": string(rune('0' + r))}
}
