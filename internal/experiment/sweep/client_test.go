package sweep

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/omnibench/omnibench/internal/run/selfmon"
)

// saturatedFrom wraps a fake runner: from level k on, the load generator
// reports itself saturated.
func saturatedFrom(f *fakeRunner, k float64) RunFunc {
	return func(ctx context.Context, level float64) (Measurement, error) {
		m, err := f.run(ctx, level)
		if level >= k {
			m.ClientSaturated = "the load generator was saturated (CPU 97 % of 2 cores > 80 %): latencies include up to 12.0 ms of client delay; use fewer streams per process or shards"
		}
		return m, err
	}
}

// TestCapacityRefusesTheClientsKnee: the server's real capacity is 40, but
// the client saturates from 16 on and the level fails there; the search
// must not report 8..16 as the capacity: it stops, says the miss may be the
// client's, and marks the level.
func TestCapacityRefusesTheClientsKnee(t *testing.T) {
	f := passUpTo(40)
	run := func(ctx context.Context, level float64) (Measurement, error) {
		m, err := saturatedFrom(f, 16)(ctx, level)
		if level >= 16 { // the saturated client's delay breaks the SLO
			m.Summary.Requests.Failed, m.Summary.Requests.Completed = 1, m.Summary.Requests.Total-1
		}
		return m, err
	}
	s, err := Capacity(context.Background(), SearchOptions{Axis: Concurrency, SLOs: noErrors()}, run)
	if err != nil {
		t.Fatal(err)
	}
	if s.End != EndClientSaturated || s.Capacity != 8 || s.Fail != 16 {
		t.Fatalf("end %q capacity %v fail %v, want client-saturated at 16 after 8 passed", s.End, s.Capacity, s.Fail)
	}
	ans := s.Answer()
	if !strings.Contains(ans, "at least 8 concurrent streams") || !strings.Contains(ans, "load generator was saturated") || strings.Contains(ans, "capacity: 8") {
		t.Errorf("answer %q", ans)
	}
	doc := s.Document()
	if doc.Capacity.End != EndClientSaturated || doc.Levels[len(doc.Levels)-1].ClientSaturated == "" {
		t.Errorf("document: end %q, last level %+v", doc.Capacity.End, doc.Levels[len(doc.Levels)-1])
	}
	tab := s.Tables()[0]
	if !strings.Contains(strings.Join(tab.Notes, "\n"), "* concurrency 16: the load generator was saturated") {
		t.Errorf("notes %q lack the saturated level", tab.Notes)
	}
}

// TestCapacityKeepsASaturatedPass: a level that passes with a saturated
// client still passes (client delay only makes figures worse), so the
// search goes on.
func TestCapacityKeepsASaturatedPass(t *testing.T) {
	s, err := Capacity(context.Background(), SearchOptions{Axis: Concurrency, SLOs: noErrors(), Max: 64}, saturatedFrom(passUpTo(12), 4))
	if err != nil {
		t.Fatal(err)
	}
	// 16 fails with a saturated client: the search stops there instead of
	// bisecting to 12.
	if s.End != EndClientSaturated || s.Capacity != 8 {
		t.Errorf("end %q capacity %v", s.End, s.Capacity)
	}
	s, err = Capacity(context.Background(), SearchOptions{Axis: Concurrency, SLOs: noErrors(), Max: 64}, saturatedFrom(passUpTo(12), 1000))
	if err != nil || s.End != EndResolved || s.Capacity != 12 {
		t.Errorf("unsaturated: end %q capacity %v err %v", s.End, s.Capacity, err)
	}
}

// TestSweepMarksSaturatedLevels: the table marks the level, a note explains
// it, the JSON carries it, and an early stop there says it may be the client's.
func TestSweepMarksSaturatedLevels(t *testing.T) {
	f := &fakeRunner{fn: func(level float64) fakeLevel {
		if level >= 4 {
			return fakeLevel{ttfpMS: 1000, throughput: 2}
		}
		return fakeLevel{ttfpMS: 100, throughput: 2}
	}}
	sat := DefaultSaturation()
	res, err := Sweep(context.Background(), Options{Axis: Concurrency, Levels: []float64{1, 2, 4, 8}, Saturation: &sat}, saturatedFrom(f, 4))
	if err != nil {
		t.Fatal(err)
	}
	if res.Stop == nil || res.Stop.Level != 4 || !strings.Contains(res.Stop.Reason, "may be the client's limit") {
		t.Fatalf("stop %+v", res.Stop)
	}
	tab := res.Tables()[0]
	if tab.Rows[2][0] != "4*" || tab.Rows[1][0] != "2" {
		t.Errorf("level cells %q %q", tab.Rows[1][0], tab.Rows[2][0])
	}
	data, _ := json.Marshal(res.Document())
	if !strings.Contains(string(data), `"client_saturated":"the load generator was saturated`) {
		t.Errorf("JSON lacks client_saturated: %s", data)
	}
}

// judged is a run's load-generator report, judged as the runner does.
func judged(r selfmon.Report, stampMS float64, streams int) *selfmon.Report {
	r.Judge(selfmon.Thresholds{}, selfmon.Circumstances{StampP99MS: &stampMS, Streams: streams})
	return &r
}

// TestCapacityOnABusyHost: on a machine whose other processes hold the
// cores, one stream at 1 % CPU sees 40 ms of send-stamp delay and misses
// the SLO. The client is not the bottleneck, so the search answers (none)
// with the host's warning beside the level, instead of refusing with
// "unknown" as it did when every delay counted as the client's; with the
// client's own CPU the cause it still refuses.
func TestCapacityOnABusyHost(t *testing.T) {
	pressure := 0.92
	busy := &selfmon.Host{CPUs: 2, BusyCores: 1.82, OtherCores: 1.8, CPUPressure: &pressure}
	withHealth := func(f *fakeRunner, h func(level float64) *selfmon.Report) RunFunc {
		return func(ctx context.Context, level float64) (Measurement, error) {
			m, err := f.run(ctx, level)
			m.SetHealth(h(level))
			return m, err
		}
	}
	host := func(level float64) *selfmon.Report {
		return judged(selfmon.Report{Cores: 2, CPUShare: 0.01, PeakStreams: int(level), Host: busy}, 40, int(level))
	}
	s, err := Capacity(context.Background(), SearchOptions{Axis: Concurrency, SLOs: noErrors()}, withHealth(passUpTo(0), host))
	if err != nil {
		t.Fatal(err)
	}
	if ans := s.Answer(); s.End != EndStartFails || !strings.HasPrefix(ans, "capacity: none: even 1 concurrent stream misses an SLO") {
		t.Errorf("end %q answer %q, want none at 1 stream", s.End, ans)
	}
	doc := s.Document()
	if l := doc.Levels[0]; l.ClientSaturated != "" || !strings.Contains(l.ClientWarning, "the host is busy: other processes used 1.8 of 2 cores") ||
		strings.Contains(l.ClientWarning, "fewer streams") {
		t.Errorf("level 1: saturated %q warning %q", l.ClientSaturated, l.ClientWarning)
	}
	tab := s.Tables()[0]
	if notes := strings.Join(tab.Notes, "\n"); !strings.Contains(notes, "* concurrency 1: the host is busy") {
		t.Errorf("notes %q lack the host's warning", tab.Notes)
	}

	own := func(level float64) *selfmon.Report {
		return judged(selfmon.Report{Cores: 2, CPUShare: 0.95, PeakStreams: int(level), Host: busy}, 40, int(level))
	}
	s, err = Capacity(context.Background(), SearchOptions{Axis: Concurrency, SLOs: noErrors()}, withHealth(passUpTo(0), own))
	if err != nil || s.End != EndClientSaturated || !strings.Contains(s.Answer(), "capacity: unknown") {
		t.Errorf("client CPU: end %q answer %q err %v, want a refusal", s.End, s.Answer(), err)
	}
}

// TestHTMLLevelsCarryVerdicts: each level handed to the HTML page carries
// its SLO verdict and the load generator's warning, which the levels table
// shows in columns of their own.
func TestHTMLLevelsCarryVerdicts(t *testing.T) {
	f := &fakeRunner{fn: func(level float64) fakeLevel {
		if level >= 4 {
			return fakeLevel{ttfpMS: 100, throughput: 2, failed: 1}
		}
		return fakeLevel{ttfpMS: 100, throughput: 2}
	}}
	res, err := Sweep(context.Background(), Options{Axis: Concurrency, Levels: []float64{1, 2, 4}, SLOs: noErrors()}, saturatedFrom(f, 4))
	if err != nil {
		t.Fatal(err)
	}
	levels := res.HTMLLevels()
	if len(levels) != 3 {
		t.Fatalf("%d levels, want 3", len(levels))
	}
	for i, want := range []struct {
		slo       string
		saturated bool
	}{{"pass", false}, {"pass", false}, {"MISS", true}} {
		if l := levels[i]; l.SLO != want.slo || (l.ClientSaturated != "") != want.saturated {
			t.Errorf("level %v: SLO %q, client saturated %q; want %q, saturated %v", l.X, l.SLO, l.ClientSaturated, want.slo, want.saturated)
		}
	}
	if m := levels[2].SLOMissed; !strings.Contains(m, "errors") || !strings.Contains(m, "limit") {
		t.Errorf("missed level's SLOMissed %q: want the missed SLO and by how much", m)
	}
	if m := levels[0].SLOMissed; m != "" {
		t.Errorf("passing level's SLOMissed %q, want none", m)
	}
}
