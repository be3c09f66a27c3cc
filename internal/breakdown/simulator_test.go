package breakdown

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/bench/expositions"
	"github.com/omnibench/omnibench/internal/simulator"
	"github.com/omnibench/omnibench/scrape"
)

// testDeadline bounds each request and scrape of these tests: generous, the
// machine may be heavily loaded.
const testDeadline = 30 * time.Second

// simConfig is a stats-on simulator with a three-stage pipeline whose
// code2wav stage has two replicas, timed so that a request takes about
// 100 ms: 0.5 s of audio in five chunks.
func simConfig() simulator.Config {
	return simulator.Config{
		Addr:         "127.0.0.1:0",
		StatsEnabled: true,
		Seed:         1,
		Topology:     []int{1, 1, 2},
		Timing: simulator.Timing{
			TTFT: 10 * time.Millisecond, WordInterval: time.Millisecond, TTFA: 30 * time.Millisecond,
			ChunkAudio: 100 * time.Millisecond, RTF: 0.1, AudioPerChar: 50 * time.Millisecond,
			MinAudio: 500 * time.Millisecond, MaxAudio: 10 * time.Second,
		},
	}
}

func startSim(t *testing.T, cfg simulator.Config) *simulator.Running {
	t.Helper()
	run, err := simulator.Start(t.Context(), cfg)
	if err != nil {
		t.Fatalf("simulator: %v", err)
	}
	t.Cleanup(func() {
		if err := run.Close(); err != nil {
			t.Errorf("simulator close: %v", err)
		}
	})
	return run
}

// scrapeSeries fetches and selects the server's /metrics.
func scrapeSeries(t *testing.T, base string) Series {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), testDeadline)
	defer cancel()
	snap, err := scrape.Fetch(ctx, base+"/metrics", scrape.AcceptAuto)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	s, err := FromSnapshot(snap)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// speak sends n speech requests one after the other and returns the
// client's figures: every request's e2e from its send to its last byte.
func speak(t *testing.T, base string, n int) ClientFigures {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"input": "Good night"})
	var total time.Duration
	for range n {
		ctx, cancel := context.WithTimeout(t.Context(), testDeadline)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/audio/speech", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		sent := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("speech: %v", err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		total += time.Since(sent)
		cancel()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("speech: status %d, %v", resp.StatusCode, err)
		}
	}
	return ClientFigures{Requests: n, MeanE2E: total.Seconds() / float64(n)}
}

// runBreakdown drives n requests through a simulator and breaks them down.
func runBreakdown(t *testing.T, cfg simulator.Config, n int) Breakdown {
	t.Helper()
	run := startSim(t, cfg)
	before := scrapeSeries(t, run.URL)
	client := speak(t, run.URL, n)
	return Compute(before, scrapeSeries(t, run.URL), client)
}

func findingsOf(b Breakdown, kind string) []Finding {
	var out []Finding
	for _, f := range b.Findings {
		if f.Kind == kind {
			out = append(out, f)
		}
	}
	return out
}

// A balanced simulator: no findings, and the parts add up to the client's
// e2e: consistent (every stage counted every request, the stages and hops
// take no more than the pipeline's e2e, the client no less), with the
// stage time what the timing model gives.
func TestSimulatorAttributionAddsUp(t *testing.T) {
	const n = 6
	b := runBreakdown(t, simConfig(), n)
	a := b.Attribution
	if !b.Computable || !a.Consistent {
		t.Fatalf("computable %v consistent %v: %q %q", b.Computable, a.Consistent, b.Reasons, a.Reasons)
	}
	if a.Requests != n || len(b.Stages) != 4 || len(b.Edges) != 3 || len(b.Findings) != 0 {
		t.Fatalf("requests %v, %d stage rows, %d edges, findings %+v", a.Requests, len(b.Stages), len(b.Edges), b.Findings)
	}
	sum := a.StageTime + a.TransferTime + a.Rest + a.ClientRemainder
	if d := sum - a.ClientE2E; d > 1e-9 || d < -1e-9 {
		t.Errorf("parts add up to %v s, the client's e2e is %v s", sum, a.ClientE2E)
	}
	// The model's stage time per request: t_0 = 30 ms split between the
	// stages and the hops, then four chunks of 10 ms of vocoding.
	if stage := a.StageTime + a.TransferTime; stage < 0.069 || stage > 0.0701 {
		t.Errorf("stages and hops take %v s per request, want the model's 70 ms", stage)
	}
	for _, e := range b.Edges {
		if want := map[string]float64{"0": 1, "1": 2.5}[e.FromStage]; e.HopsPerRequest != want {
			t.Errorf("edge %s: %v hops per request, want %v", e.Name(), e.HopsPerRequest, want)
		}
	}
}

func TestSimulatorSlowReplicaIsNamed(t *testing.T) {
	cfg := simConfig()
	cfg.Slow.Replicas = []simulator.SlowReplica{{Stage: 2, Replica: 1, Factor: 4}}
	b := runBreakdown(t, cfg, 6)
	slow := findingsOf(b, FindingReplicaSlow)
	if len(slow) != 1 || slow[0].Stage != "2" || slow[0].Replica != "1" {
		t.Fatalf("slow-replica findings %+v, want stage 2 replica 1", b.Findings)
	}
	if !strings.Contains(slow[0].Note, "stage 2 replica 1") || slow[0].Ratio < 3.9 {
		t.Errorf("finding %+v", slow[0])
	}
	if !b.Attribution.Consistent {
		t.Errorf("a slow replica made the attribution inconsistent: %q", b.Attribution.Reasons)
	}
}

func TestSimulatorSlowEdgeIsFound(t *testing.T) {
	cfg := simConfig()
	cfg.Slow.Edges = []simulator.SlowEdge{{FromStage: 1, FromReplica: 0, ToReplica: 0, Extra: 5 * time.Millisecond}}
	b := runBreakdown(t, cfg, 6)
	slow := findingsOf(b, FindingEdgeSlow)
	if len(slow) != 1 || slow[0].Edge != "1/0->2/0" {
		t.Fatalf("slow-edge findings %+v, want 1/0->2/0", b.Findings)
	}
	if a := b.Attribution; !a.Consistent || a.TransferTime < 0.0125 {
		t.Errorf("transfer time %v s per request (want at least 2.5 hops x 5 ms), consistent %v %q",
			a.TransferTime, a.Consistent, a.Reasons)
	}
}

func TestSimulatorStatsOffCannotBeComputed(t *testing.T) {
	cfg := simConfig()
	cfg.StatsEnabled = false
	b := runBreakdown(t, cfg, 2)
	if b.Computable || b.Attribution.Consistent || len(b.Stages) != 0 {
		t.Fatalf("computed with stats off: %+v", b)
	}
	if !strings.Contains(strings.Join(b.Reasons, "\n"), "stats are off") {
		t.Errorf("reasons %q do not say the stats are off", b.Reasons)
	}
}

// Two runs compared stage by stage: B's slow replica is slower in B by
// what its factor adds, the replicas B shares with A are not, and a run
// whose breakdown cannot be computed gives no comparison but its reason.
func TestSimulatorCompareRuns(t *testing.T) {
	a := runBreakdown(t, simConfig(), 6)
	slowCfg := simConfig()
	slowCfg.Slow.Replicas = []simulator.SlowReplica{{Stage: 2, Replica: 1, Factor: 4}}
	b := runBreakdown(t, slowCfg, 6)
	d := Compare(a, b)
	if len(d.Reasons) > 0 || len(d.Stages) != 4 {
		t.Fatalf("diff %+v", d)
	}
	for _, s := range d.Stages {
		delta := s.B.E2E - s.A.E2E
		slow := s.Stage == "2" && s.Replica == "1"
		if slow && !(delta > 0.5*s.A.E2E) || !slow && math.Abs(delta) > 0.5*s.A.E2E {
			t.Errorf("stage %s/%s: e2e A %v s, B %v s", s.Stage, s.Replica, s.A.E2E, s.B.E2E)
		}
	}
	tab := d.Table()
	if len(tab.Rows) != 5 || tab.Rows[0][0] != "pipeline" || !strings.HasPrefix(tab.Rows[4][3], "+") {
		t.Errorf("table %+v", tab)
	}
	off := simConfig()
	off.StatsEnabled = false
	none := Compare(a, runBreakdown(t, off, 2))
	if len(none.Stages) != 0 || len(none.Reasons) != 1 || !strings.HasPrefix(none.Reasons[0], "B's breakdown cannot") {
		t.Errorf("diff with a stats-off run %+v", none)
	}
	if body, err := json.Marshal(Compare(a, b)); err != nil || !strings.Contains(string(body), `"pipeline":{"stage":"pipeline","a":{"requests":6,"queue_s":null`) {
		t.Errorf("JSON %s, %v", body, err)
	}
}

// FromSelected, through one Selector for all the scrapes of a server, is
// FromSnapshot: the same series, in the same scrape line.
func TestFromSelectedIsFromSnapshot(t *testing.T) {
	texts, err := expositions.Texts(t.Context(), expositions.Sizes[0], 3)
	if err != nil {
		t.Fatal(err)
	}
	sel := scrape.NewSelector(Filter())
	for i, text := range texts {
		snap := &scrape.Snapshot{ContentType: "text/plain; version=0.0.4", Body: text, FetchedAt: time.Unix(int64(i), 0)}
		want, err := FromSnapshot(snap)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FromSelected(sel, snap)
		if err != nil {
			t.Fatal(err)
		}
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) || want.Empty() {
			t.Fatalf("scrape %d: FromSelected\n%s\nFromSnapshot\n%s", i+1, g, w)
		}
	}
	if sel.Reused() != len(texts)-1 {
		t.Fatalf("%d of %d scrapes decoded by their values, want all but the first", sel.Reused(), len(texts))
	}
}
