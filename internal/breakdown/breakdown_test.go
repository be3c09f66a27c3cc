package breakdown

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

// consistentRun is two requests through three stages whose parts are known:
// stages 0.1 + 0.2 + 0.25 = 0.55 s per request, transfers 0.01 + 0.01 s,
// pipeline e2e 0.6 s, so the rest is 0.03 s.
func consistentRun() *expo {
	e := newExpo()
	e.hist(famPipelineE2E, model, slowBounds, 0.5, 0.7)
	e.hist("vllm_omni:audio_ttfp_s", sr(2, 0), fastBounds, 0.2, 0.3)
	e.stage(0, 0, 0.1, 0.1).stage(1, 0, 0.2, 0.2).stage(2, 0, 0.2, 0.3)
	e.hops(edge(0, 0, 1, 0), 2, 0.002, 0.006, 0.002)
	e.hops(edge(1, 0, 2, 0), 4, 0.001, 0.003, 0.001)
	return e
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestAttributionPartsAddUp(t *testing.T) {
	b := Compute(newExpo().series(t, t0), consistentRun().series(t, t0.Add(10*time.Second)),
		ClientFigures{Requests: 2, MeanE2E: 0.62, MeanTTFP: 0.27, MeanQueue: 0.001})
	if !b.Computable || b.Requests != 2 {
		t.Fatalf("computable %v, requests %v, reasons %q", b.Computable, b.Requests, b.Reasons)
	}
	a := b.Attribution
	if !a.Consistent {
		t.Fatalf("inconsistent: %q", a.Reasons)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"server e2e", a.ServerE2E, 0.6}, {"server ttfp", a.ServerTTFP, 0.25},
		{"stage", a.StageTime, 0.55}, {"transfer", a.TransferTime, 0.02}, {"rest", a.Rest, 0.03},
		{"client remainder", a.ClientRemainder, 0.02}, {"client queue", a.ClientQueue, 0.001},
		{"sum of parts", a.StageTime + a.TransferTime + a.Rest + a.ClientRemainder, a.ClientE2E},
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	want := []StagePart{{"0", 0.1}, {"1", 0.2}, {"2", 0.25}}
	if len(a.Stages) != 3 {
		t.Fatalf("stage parts %+v", a.Stages)
	}
	for i, p := range a.Stages {
		if p.Stage != want[i].Stage || !near(p.Seconds, want[i].Seconds) {
			t.Errorf("stage part %d = %+v, want %+v", i, p, want[i])
		}
	}
	if len(b.Edges) != 2 || b.Edges[1].Name() != "1/0->2/0" || b.Edges[1].HopsPerRequest != 2 ||
		b.Edges[1].Bytes != 4*2048 {
		t.Errorf("edges %+v", b.Edges)
	}
	if r := b.Stages[2]; r.Share != 1 || !near(r.TokensPerSecond, 2) || !near(r.E2E.Mean, 0.25) {
		t.Errorf("stage 2 row %+v", r)
	}
	if len(b.Findings) != 0 {
		t.Errorf("findings on a balanced run: %+v", b.Findings)
	}
}

// Each way the parts fail to add up is said, and no split is given.
func TestAttributionSaysWhyItCannotSplit(t *testing.T) {
	for _, c := range []struct {
		name   string
		run    func() *expo
		client ClientFigures
		reason string
	}{
		{"stage counted other requests", func() *expo {
			e := newExpo().hist(famPipelineE2E, model, slowBounds, 0.5, 0.7)
			return e.stage(0, 0, 0.1, 0.1).stage(1, 0, 0.2)
		}, ClientFigures{}, "stage 1 finished 1 requests, the pipeline 2"},
		{"stages overlap", func() *expo {
			e := newExpo().hist(famPipelineE2E, model, slowBounds, 0.5, 0.7)
			return e.stage(0, 0, 0.8, 0.8)
		}, ClientFigures{}, "they overlap in time"},
		{"no stage families", func() *expo {
			return newExpo().hist(famPipelineE2E, model, slowBounds, 0.5, 0.7)
		}, ClientFigures{}, "no per-stage e2e histogram"},
		{"no transfer families", func() *expo {
			e := newExpo().hist(famPipelineE2E, model, slowBounds, 0.5, 0.7)
			return e.stage(0, 0, 0.1, 0.1).stage(1, 0, 0.2, 0.2)
		}, ClientFigures{}, "no transfer histograms"},
		{"client counted other requests", consistentRun, ClientFigures{Requests: 3, MeanE2E: 0.62},
			"the client 3"},
		{"client faster than server", consistentRun, ClientFigures{Requests: 2, MeanE2E: 0.5},
			"below the server's"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := Compute(newExpo().series(t, t0), c.run().series(t, t0.Add(time.Second)), c.client)
			a := b.Attribution
			if !b.Computable || a.Consistent {
				t.Fatalf("computable %v consistent %v: %q", b.Computable, a.Consistent, a.Reasons)
			}
			if !strings.Contains(strings.Join(a.Reasons, "\n"), c.reason) {
				t.Errorf("reasons %q lack %q", a.Reasons, c.reason)
			}
			for _, v := range []float64{a.StageTime, a.TransferTime, a.Rest, a.ClientRemainder} {
				if !math.IsNaN(v) {
					t.Errorf("a part is %v despite the reasons; want NaN", v)
				}
			}
		})
	}
}

// A server whose stats are off, one that restarted, and one that is not
// vLLM-Omni: nothing is computed, and the reason says which.
func TestNotComputable(t *testing.T) {
	statsOff := func() *expo {
		e := newExpo()
		for _, f := range []string{famPipelineE2E, famPipelineTTFP, famTransferTx} {
			e.declare(f, "histogram")
		}
		return e
	}
	restarted := consistentRun()
	restarted.hist(famPipelineE2E, `model_name="other"`, slowBounds, 1)
	for _, c := range []struct {
		name          string
		before, after *expo
		client        ClientFigures
		reason        string
	}{
		{"stats off", statsOff(), statsOff(), ClientFigures{Requests: 5, MeanE2E: 1}, "stats are off"},
		{"stats off, no client", statsOff(), statsOff(), ClientFigures{}, "no requests finished"},
		{"restart", restarted, consistentRun(), ClientFigures{}, "restarted"},
		{"not vLLM-Omni", newExpo(), newExpo().counter("http_requests_total", `a="b"`, 1), ClientFigures{},
			"no pipeline e2e histogram"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := Compute(c.before.series(t, t0), c.after.series(t, t0.Add(time.Second)), c.client)
			if b.Computable || b.Attribution.Consistent {
				t.Fatalf("computed %+v", b)
			}
			if !strings.Contains(strings.Join(b.Reasons, "\n"), c.reason) ||
				!slices.Equal(b.Reasons, b.Attribution.Reasons) {
				t.Errorf("reasons %q / %q lack %q", b.Reasons, b.Attribution.Reasons, c.reason)
			}
			if _, err := json.Marshal(b); err != nil {
				t.Errorf("JSON: %v", err)
			}
		})
	}
}

func TestFindings(t *testing.T) {
	e := newExpo().hist(famPipelineE2E, model, slowBounds, 1, 1, 1, 1, 1, 1)
	// Stage 1: replica 1 serves 5 of 6 requests (1.67x its share: no
	// finding). Stage 2: replica 1 is three times slower.
	e.stage(1, 0, 0.1).stage(1, 1, 0.1, 0.1, 0.1, 0.1, 0.1)
	e.stage(2, 0, 0.2, 0.2, 0.2).stage(2, 1, 0.6, 0.6, 0.6)
	// Stage 3: replica 0 serves 5 of 6 with a third replica idle: 2.5x.
	e.stage(3, 0, 0.1, 0.1, 0.1, 0.1, 0.1).stage(3, 1, 0.1).stage(3, 2)
	// Edges 1 -> 2: the one into replica 1 takes 5x longer in flight.
	e.hops(edge(1, 0, 2, 0), 3, 0.001, 0.002, 0.001)
	e.hops(edge(1, 1, 2, 1), 3, 0.001, 0.018, 0.001)
	b := Compute(newExpo().series(t, t0), e.series(t, t0.Add(time.Second)), ClientFigures{})
	got := sortedKinds(b.Findings)
	want := []string{"edge_slow 1/1->2/1", "replica_share 3/0", "replica_slow 2/1"}
	if !slices.Equal(got, want) {
		t.Fatalf("findings %q, want %q: %+v", got, want, b.Findings)
	}
	for _, f := range b.Findings {
		if f.Kind == FindingReplicaSlow && (!near(f.Ratio, 3) || !strings.Contains(f.Note, "stage 2 replica 1")) {
			t.Errorf("slow replica finding %+v", f)
		}
		if f.Kind == FindingEdgeSlow && !near(f.Ratio, 5) {
			t.Errorf("slow edge finding %+v", f)
		}
	}
	if got := b.ReplicaImbalance(); !near(got, 3) {
		t.Errorf("ReplicaImbalance = %v, want 3", got)
	}
}

func TestFigureQuantilesAreMarkedEstimates(t *testing.T) {
	e := newExpo().hist(famStageE2E, sr(0, 0), slowBounds, 0.1, 0.4, 0.4, 0.6, 0.9, 0.9, 0.9, 0.9, 0.9, 2.2)
	b := Compute(newExpo().series(t, t0), e.hist(famPipelineE2E, model, slowBounds, 1).series(t, t0.Add(time.Second)),
		ClientFigures{})
	f := b.Stages[0].E2E
	// Rank 9.5 of 10 falls in (2, 2.5]: the estimate interpolates there.
	if f.P95Low != 2 || f.P95High != 2.5 || !(f.P95Estimate > 2 && f.P95Estimate <= 2.5) {
		t.Errorf("p95 %v in [%v, %v], want inside (2, 2.5]", f.P95Estimate, f.P95Low, f.P95High)
	}
	if !near(f.Mean, 8.2/10) || f.Count != 10 {
		t.Errorf("mean %v count %v", f.Mean, f.Count)
	}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"p95_estimate":`, `"p95_bucket_low":2`, `"rest_s":null`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("JSON lacks %s: %s", key, raw)
		}
	}
}

// Select keeps the families the breakdown reads and nothing else, under
// either pipeline prefix.
func TestSelectKeepsOnlyWhatItReads(t *testing.T) {
	e := consistentRun()
	e.counter("process_cpu_seconds_total", "", 3).gauge("python_info", `version="3"`, 1)
	s := e.series(t, t0)
	if _, ok := s.families["process_cpu_seconds_total"]; ok {
		t.Error("Select kept an unread family")
	}
	if _, ok := s.families[famPipelineTTFP]; !ok {
		t.Error("Select lost the vllm_omni: spelling of the TTFP family")
	}
	for name, f := range s.families {
		if f.Raw != nil {
			t.Errorf("%s keeps its decoded protobuf form", name)
		}
	}
}

// The family names the breakdown reads are the metric core's.
func TestFamilyNamesAreTheMetricCores(t *testing.T) {
	known := map[string]bool{}
	for _, f := range omnimetrics.PipelineFamilies() {
		known[omnimetrics.PrefixDesign+f.Name] = true
	}
	for _, f := range omnimetrics.UpstreamFamilies() {
		known[f.Name] = true
	}
	for _, name := range neededFamilies() {
		if !known[name] {
			t.Errorf("%s is not a family of omnimetrics", name)
		}
	}
}

// A server whose sums are NaN gets a reason, not a consistent NaN split.
func TestAttributionRefusesNonFiniteSums(t *testing.T) {
	e := newExpo().hist(famPipelineE2E, model, slowBounds, 0.5)
	e.stage(0, 0, math.NaN())
	b := Compute(newExpo().series(t, t0), e.series(t, t0.Add(time.Second)), ClientFigures{})
	if b.Attribution.Consistent || !strings.Contains(strings.Join(b.Attribution.Reasons, "\n"), "not finite") {
		t.Errorf("consistent %v, reasons %q", b.Attribution.Consistent, b.Attribution.Reasons)
	}
}
