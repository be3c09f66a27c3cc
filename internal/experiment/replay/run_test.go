package replay

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/omnibench/omnibench/continuity"
)

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// TestRun replays testdata/traces.jsonl. Hand-computed, 24 kHz mono s16
// (bps 48000) unless stated:
//
//	doc:       max underrun 0.2 s, 2 events (package continuity's worked
//	           example); stall-resume 1 stall of 0.2 s; pre-roll 200 ms is
//	           full at once (0.2 s in the first chunk): same as stall-resume.
//	smooth:    0.1 s every 0.05 s: no underrun; pre-roll reaches 0.2 s at the
//	           second chunk, 0.35-0.3 = 0.05 s after the first.
//	abs-clock: 0.1 s every 0.1 s at a 123456 s origin: default mode 0
//	           events, reference mode 8 (rounding residue, max ~5.8e-12 s);
//	           pre-roll starts at the second chunk, ~0.1 s.
//	stereo:    16 kHz stereo s16, bps 64000: 0.1 s at 0, the next at 0.5:
//	           0.5*64000-6400 = 25600 bytes = 0.4 s, 1 event; stall-resume
//	           stalls 0.4 s; pre-roll needs both chunks, starts at 0.5, no stall.
func TestRun(t *testing.T) {
	f, err := ReadFile(filepath.Join("testdata", "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Thresholds: []float64{0.1, 0.25}, Prebuffer: continuity.PrerollConfig{BufferS: 0.2}}
	resp, sum := Run(f.Traces, opts)
	if len(resp) != 4 {
		t.Fatalf("%d responses", len(resp))
	}
	type row struct {
		max          float64
		events       int
		ok100, ok250 bool
		srStalls     int
		srTotal      float64
		preStart     float64
		preStalls    int
		audio        float64
	}
	want := map[string]row{
		"doc":       {0.2, 2, false, true, 1, 0.2, 0, 1, 0.6},
		"smooth":    {0, 0, true, true, 0, 0, 0.05, 0, 0.4},
		"abs-clock": {0, 0, true, true, 0, 0, 0.1, 0, 2},
		"stereo":    {0.4, 1, false, false, 1, 0.4, 0.5, 0, 0.2},
	}
	for _, r := range resp {
		w := want[r.ID]
		if !near(r.MaxUnderrunS, w.max) || r.UnderrunEvents != w.events || r.OK["100"] != w.ok100 || r.OK["250"] != w.ok250 || len(r.OK) != 2 {
			t.Errorf("%s: continuity %+v, want %+v", r.ID, r.Continuity, w)
		}
		if r.StallResume.Stalls != w.srStalls || !near(r.StallResume.TotalStallS, w.srTotal) {
			t.Errorf("%s: stall-resume %+v, want %d stalls %g s", r.ID, *r.StallResume, w.srStalls, w.srTotal)
		}
		if r.Preroll.Stalls != w.preStalls || !near(r.Preroll.StartupDelayS, w.preStart) {
			t.Errorf("%s: preroll %+v, want start %g, %d stalls", r.ID, *r.Preroll, w.preStart, w.preStalls)
		}
		if !near(r.AudioS, w.audio) || r.Mode != "default" {
			t.Errorf("%s: audio %g mode %q", r.ID, r.AudioS, r.Mode)
		}
	}

	// Summary over the four: continuous at 100 ms: smooth, abs-clock (2/4);
	// at 250 ms also doc (3/4). Mean max underrun (0.2+0.4)/4 = 0.15, mean
	// events (2+1)/4 = 0.75. Stall-resume: 2 of 4 stall, mean stalls 0.5,
	// mean total (0.2+0.4)/4 = 0.15. Pre-roll: mean start-up
	// (0+0.05+0.1+0.5)/4 = 0.1625, max 0.5; only doc stalls (0.2 s):
	// mean stalls 0.25, mean total 0.05.
	if sum.Responses != 4 || sum.Mode != "default" || !near(sum.AudioS, 3.2) {
		t.Errorf("summary head %+v", sum)
	}
	if len(sum.ContinuousRate) != 2 || sum.ContinuousRate["100"] != 0.5 || sum.ContinuousRate["250"] != 0.75 {
		t.Errorf("continuous rate %v", sum.ContinuousRate)
	}
	if sum.WithUnderrun != 2 || !near(sum.MeanMaxUnderrunS, 0.15) || !near(sum.MaxMaxUnderrunS, 0.4) || sum.MeanUnderrunEvents != 0.75 {
		t.Errorf("underrun summary %+v", sum)
	}
	sr := sum.StallResume
	if sr.WithStalls != 2 || sr.MeanStalls != 0.5 || !near(sr.MeanTotalStallS, 0.15) || !near(sr.MaxTotalStallS, 0.4) || !near(sr.LongestStallS, 0.4) || sr.MeanStartupDelayS != 0 {
		t.Errorf("stall-resume summary %+v", sr)
	}
	pr := sum.Preroll
	if pr.WithStalls != 1 || pr.MeanStalls != 0.25 || !near(pr.MeanTotalStallS, 0.05) || !near(pr.MeanStartupDelayS, 0.1625) || !near(pr.MaxStartupDelayS, 0.5) {
		t.Errorf("preroll summary %+v", pr)
	}
	if sum.PrebufferS != 0.2 || sum.PrebufferMaxWaitS != 0 {
		t.Errorf("prebuffer %g/%g", sum.PrebufferS, sum.PrebufferMaxWaitS)
	}

	// Reference mode: abs-clock's rounding residue is 8 events, still
	// continuous.
	resp, sum = Run(f.Traces, Options{Mode: continuity.Reference})
	if r := resp[2]; r.UnderrunEvents != 8 || r.MaxUnderrunS <= 0 || r.MaxUnderrunS > 1e-11 || !r.OK["100"] || r.Mode != "reference" {
		t.Errorf("reference abs-clock %+v", r.Continuity)
	}
	if sum.Mode != "reference" || len(sum.Thresholds) != 1 || sum.Thresholds[0] != DefaultThresholdS || sum.WithUnderrun != 3 {
		t.Errorf("reference summary %+v", sum)
	}
}

func TestRunEmpty(t *testing.T) {
	resp, sum := Run(nil, Options{})
	if len(resp) != 0 || sum.Responses != 0 || len(sum.ContinuousRate) != 0 || sum.MeanMaxUnderrunS != 0 || sum.Preroll.MeanStalls != 0 {
		t.Fatalf("%v %+v", resp, sum)
	}
}

// TestRunThresholdNobodyMeets makes sure a threshold no response meets is
// reported as 0, not left out.
func TestRunThresholdNobodyMeets(t *testing.T) {
	tr := Trace{ID: "late", Input: continuity.Input{ArrivalsS: []float64{0, 1}, Bytes: []int{4800, 4800}, SampleRate: 24000}}
	_, sum := Run([]Trace{tr}, Options{Thresholds: []float64{0.1}})
	if v, ok := sum.ContinuousRate["100"]; !ok || v != 0 {
		t.Fatalf("rate %v", sum.ContinuousRate)
	}
}
