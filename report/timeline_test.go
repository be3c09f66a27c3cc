package report

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
)

// docExample is the worked example of the continuity package documentation:
// 24 kHz mono s16, chunks at 0, 0.10, 0.50, 0.55 s of 0.2, 0.1, 0.2, 0.1 s.
func docExample() continuity.Input {
	return continuity.Input{ArrivalsS: []float64{0, 0.10, 0.50, 0.55}, Bytes: []int{9600, 4800, 9600, 4800}, SampleRate: 24000}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func nearAll(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !near(got[i], want[i]) {
			return false
		}
	}
	return true
}

func TestPlayerCurvesWorkedExample(t *testing.T) {
	in := docExample()
	// Stall-and-resume: plays 0.3 s to 0.30, stalls until 0.50, then the
	// remaining 0.3 s to 0.80 (hand-computed from the documentation).
	p := playerCurve(in, 0)
	if !nearAll(p.ts, []float64{0, 0.3, 0.5, 0.8}) || !nearAll(p.pos, []float64{0, 0.3, 0.3, 0.6}) {
		t.Errorf("stall-resume curve = %v / %v", p.ts, p.pos)
	}
	if p.stalls != 1 || !near(p.totalStallS, 0.2) || !near(p.longestStallS, 0.2) {
		t.Errorf("stall-resume: %d stalls, %g s, longest %g", p.stalls, p.totalStallS, p.longestStallS)
	}
	// Pre-roll 0.25 s: starts at 0.10 with 0.3 s, dry at 0.40, stalls to 0.50.
	p = playerCurve(in, 0.10)
	if !nearAll(p.ts, []float64{0.1, 0.4, 0.5, 0.8}) || !nearAll(p.pos, []float64{0, 0.3, 0.3, 0.6}) {
		t.Errorf("pre-roll curve = %v / %v", p.ts, p.pos)
	}
	if p.stalls != 1 || !near(p.totalStallS, 0.1) {
		t.Errorf("pre-roll: %d stalls, %g s", p.stalls, p.totalStallS)
	}
	// Reference: from the first arrival at slope 1 through all 0.6 s.
	if ts, pos := referenceCurve(in); !nearAll(ts, []float64{0, 0.6}) || !nearAll(pos, []float64{0, 0.6}) {
		t.Errorf("reference = %v / %v", ts, pos)
	}
	if ts, a := receivedCurve(in); !nearAll(ts, []float64{0, 0, 0.1, 0.5, 0.55}) || !nearAll(a, []float64{0, 0.2, 0.3, 0.5, 0.6}) {
		t.Errorf("received = %v / %v", ts, a)
	}
}

// TestPlayerCurvesFromRecords checks what the chart relies on: a record
// keeps only the pre-roll player's start-up delay, and playerCurve recreates
// that player from it (the same stalls as continuity.Preroll with its
// configuration), and the curve stays under the received curve that report
// draws itself, ending with all the audio played. The curve's own shape is
// continuity's to test (TestPrerollTimelineShape).
func TestPlayerCurvesFromRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for trial := range 300 {
		in := continuity.Input{SampleRate: []int{16000, 24000, 48000}[trial%3], Channels: 1 + trial%2}
		t0 := 5 * rng.Float64()
		tm := t0
		for range 1 + rng.IntN(40) {
			b := 2 * in.Channels * (1 + rng.IntN(6000))
			if rng.Float64() < 0.1 {
				b = 0
			}
			in.ArrivalsS, in.Bytes = append(in.ArrivalsS, tm), append(in.Bytes, b)
			tm += 0.15 * rng.ExpFloat64()
		}
		if firstAudio(in) < 0 {
			if playerCurve(in, 0).ok {
				t.Fatalf("trial %d: a curve without audio", trial)
			}
			continue
		}
		for _, cfg := range []continuity.PrerollConfig{{}, {BufferS: 0.3}, {BufferS: 1, MaxWaitS: 0.4}} {
			want := continuity.Preroll(in, cfg)
			got := playerCurve(in, want.StartupDelayS)
			if got.stalls != want.Stalls || got.totalStallS != want.TotalStallS || got.longestStallS != want.LongestStallS || got.startupDelayS != want.StartupDelayS {
				t.Fatalf("trial %d %+v: curve %d stalls %g s (longest %g, start-up %g), continuity %+v", trial, cfg, got.stalls, got.totalStallS, got.longestStallS, got.startupDelayS, want)
			}
			rx, ry := receivedCurve(in)
			for i, tt := range got.ts {
				j, _ := slices.BinarySearch(rx, tt+1e-12)
				if got.pos[i] > ry[max(j-1, 0)]+1e-9 && i > 0 {
					t.Fatalf("trial %d: position %g at %g beyond received %g", trial, got.pos[i], tt, ry[max(j-1, 0)])
				}
			}
			if !near(got.pos[len(got.pos)-1], ry[len(ry)-1]) {
				t.Fatalf("trial %d: curve ends at %g s of %g received", trial, got.pos[len(got.pos)-1], ry[len(ry)-1])
			}
		}
	}
}

func TestPlayerCurvesInvalid(t *testing.T) {
	for _, in := range []continuity.Input{
		{},
		{ArrivalsS: []float64{0, 1}, Bytes: []int{1}, SampleRate: 24000},
		{ArrivalsS: []float64{0}, Bytes: []int{100}},
		{ArrivalsS: []float64{0, 1}, Bytes: []int{0, 0}, SampleRate: 24000},
	} {
		if p := playerCurve(in, 0); p.ok || p.ts != nil {
			t.Errorf("playerCurve(%+v) = %+v, want nothing", in, p)
		}
		if ts, _ := receivedCurve(in); ts != nil {
			t.Errorf("receivedCurve(%+v) = %v", in, ts)
		}
		if ts, _ := referenceCurve(in); ts != nil {
			t.Errorf("referenceCurve(%+v) = %v", in, ts)
		}
	}
}

func TestWorstResponse(t *testing.T) {
	tl := func(id string, u, e2e float64) results.Record {
		return results.Record{ID: id, E2ES: e2e, SampleRate: 24000, ChunkArrivalsS: []float64{0.1}, ChunkBytes: []int{4800},
			Continuity: &results.Continuity{MaxUnderrunS: u}}
	}
	recs := []results.Record{
		tl("a", 0.2, 3), tl("b", 0.5, 2), tl("c", 0.5, 4), tl("d", 0.5, 4),
		{ID: "no-timeline", E2ES: 99, Continuity: &results.Continuity{MaxUnderrunS: 9}},
	}
	w := tl("warm", 7, 1)
	w.Warmup = true
	recs = append(recs, w)
	// No continuity result: the default simulation ranks it (0.4 s here).
	recs = append(recs, results.Record{ID: "sim", E2ES: 1, SampleRate: 24000, ChunkArrivalsS: []float64{0, 0.5}, ChunkBytes: []int{4800, 4800}})
	got, u, ok := worstResponse(recs)
	if !ok || got.ID != "c" || u != 0.5 {
		t.Errorf("worst = %v %g %v, want c (largest underrun, then longest e2e, then first)", got.ID, u, ok)
	}
	got, u, _ = worstResponse(recs[len(recs)-1:])
	if got.ID != "sim" || !near(u, 0.4) {
		t.Errorf("simulated worst = %s %g, want sim 0.4", got.ID, u)
	}
	if _, _, ok := worstResponse(recs[4:6]); ok {
		t.Error("no usable timeline should give no worst response")
	}
}
