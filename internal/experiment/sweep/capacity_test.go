package sweep

import (
	"context"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strings"
	"testing"
)

func TestCapacityConcurrency(t *testing.T) {
	f := passUpTo(12)
	s, err := Capacity(t.Context(), SearchOptions{Axis: Concurrency, SLOs: noErrors()}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	// Bracket 1, 2, 4, 8, 16 (fails); bisect [8, 16]: 12 passes, 14 fails, 13 fails.
	wantPath := []float64{1, 2, 4, 8, 16, 12, 14, 13}
	if !slices.Equal(f.levels, wantPath) {
		t.Fatalf("path %v, want %v", f.levels, wantPath)
	}
	if !s.Found || s.Capacity != 12 || s.Fail != 13 || s.End != EndResolved || s.Runs() != 8 {
		t.Fatalf("found %v capacity %v fail %v end %q runs %d; want 12, 13, resolved, 8", s.Found, s.Capacity, s.Fail, s.End, s.Runs())
	}
	var phases []Phase
	for i, st := range s.Steps {
		phases = append(phases, st.Phase)
		if st.Run != i+1 || st.Point.Level != wantPath[i] || st.Point.Pass() != (wantPath[i] <= 12) {
			t.Errorf("step %d = run %d level %v pass %v", i, st.Run, st.Point.Level, st.Point.Pass())
		}
	}
	wantPhases := []Phase{"bracket", "bracket", "bracket", "bracket", "bracket", "bisect", "bisect", "bisect"}
	if !slices.Equal(phases, wantPhases) {
		t.Errorf("phases %v, want %v", phases, wantPhases)
	}
	wantAnswer := "capacity: 12 concurrent streams (13 fails: errors = 1, limit < 1: missed: exactly at the limit); resolution 1; 8 runs"
	if got := s.Answer(); got != wantAnswer {
		t.Errorf("answer\n got %q\nwant %q", got, wantAnswer)
	}
	m := s.Margins()
	if len(m) != 2 || !strings.HasPrefix(m[0], "margin at 12 (highest passing): tightest SLO errors = 0, limit < 1: ok, 1 to spare") ||
		!strings.HasPrefix(m[1], "at 13 (lowest failing): errors = 1") {
		t.Errorf("margins %q", m)
	}
}

// TestCapacityRunCount checks the search against every capacity 1..500:
// the answer is exact, and the run count is the hand-derived
// floor(log2 K) + 2 bracketing runs (1, 2, ..., 2^floor(log2 K), then the
// first failing power of two) plus floor(log2 K) bisections (halving an
// interval of width 2^floor(log2 K) down to 1).
func TestCapacityRunCount(t *testing.T) {
	for k := 1; k <= 500; k++ {
		f := passUpTo(float64(k))
		s, err := Capacity(t.Context(), SearchOptions{Axis: Concurrency, SLOs: noErrors(), MaxRuns: 100}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		lg := bits.Len(uint(k)) - 1
		if s.Capacity != float64(k) || s.Fail != float64(k+1) || s.End != EndResolved {
			t.Fatalf("K=%d: capacity %v fail %v end %q", k, s.Capacity, s.Fail, s.End)
		}
		if want := 2*lg + 2; s.Runs() != want {
			t.Fatalf("K=%d: %d runs, want %d (path %v)", k, s.Runs(), want, f.levels)
		}
	}
}

func TestCapacityRate(t *testing.T) {
	f := passUpTo(7.3)
	s, err := Capacity(t.Context(), SearchOptions{Axis: Rate, SLOs: noErrors()}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	// Bracket 1, 2, 4, 8 (fails); bisect [4, 8] to 0.5: 6, 7 pass, 7.5 fails.
	if want := []float64{1, 2, 4, 8, 6, 7, 7.5}; !slices.Equal(f.levels, want) {
		t.Fatalf("path %v, want %v", f.levels, want)
	}
	if s.Capacity != 7 || s.Fail != 7.5 || s.End != EndResolved || s.Resolution != 0.5 {
		t.Fatalf("capacity %v fail %v end %q resolution %v", s.Capacity, s.Fail, s.End, s.Resolution)
	}
	if got := s.Answer(); !strings.HasPrefix(got, "capacity: 7 req/s (7.5 fails: ") || !strings.HasSuffix(got, "; resolution 0.5; 7 runs") {
		t.Errorf("answer %q", got)
	}

	// A finer resolution and a fractional start.
	f = passUpTo(3)
	s, err = Capacity(t.Context(), SearchOptions{Axis: Rate, SLOs: noErrors(), Start: 0.25, Resolution: 0.1}, f.run)
	if err != nil {
		t.Fatal(err)
	}
	// 0.25 .. 2 pass, 4 fails; bisect [2, 4]: 3 passes, 3.5, 3.25, 3.125,
	// 3.0625 fail; 3.0625 - 3 <= 0.1 < 3.125 - 3.
	if want := []float64{0.25, 0.5, 1, 2, 4, 3, 3.5, 3.25, 3.125, 3.0625}; !slices.Equal(f.levels, want) {
		t.Fatalf("path %v, want %v", f.levels, want)
	}
	if s.Capacity != 3 || s.Fail != 3.0625 {
		t.Fatalf("capacity %v fail %v", s.Capacity, s.Fail)
	}
}

func TestCapacityEnds(t *testing.T) {
	ctx := t.Context()
	t.Run("start fails", func(t *testing.T) {
		f := passUpTo(0)
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors(), Start: 4}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		if s.Found || s.End != EndStartFails || s.Fail != 4 || s.Runs() != 1 {
			t.Fatalf("found %v end %q fail %v runs %d", s.Found, s.End, s.Fail, s.Runs())
		}
		if got := s.Answer(); !strings.HasPrefix(got, "capacity: below 4 concurrent streams: the start level already misses an SLO (4 fails: errors = 1") {
			t.Errorf("answer %q", got)
		}
		if js := s.JUnitSuites(); js[0].Cases[0].Failure == "" || len(js) != 1 {
			t.Errorf("JUnit: %+v", js)
		}
	})
	t.Run("max level passes", func(t *testing.T) {
		f := passUpTo(1000)
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors(), Max: 100}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		if want := []float64{1, 2, 4, 8, 16, 32, 64, 100}; !slices.Equal(f.levels, want) {
			t.Fatalf("path %v, want %v", f.levels, want)
		}
		if !s.Found || s.Capacity != 100 || !math.IsNaN(s.Fail) || s.End != EndMaxLevel {
			t.Fatalf("capacity %v fail %v end %q", s.Capacity, s.Fail, s.End)
		}
		if got := s.Answer(); !strings.HasPrefix(got, "capacity: at least 100 concurrent streams: every SLO held") {
			t.Errorf("answer %q", got)
		}
	})
	t.Run("run budget in bisection", func(t *testing.T) {
		f := passUpTo(12)
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors(), MaxRuns: 6}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		if want := []float64{1, 2, 4, 8, 16, 12}; !slices.Equal(f.levels, want) {
			t.Fatalf("path %v, want %v", f.levels, want)
		}
		if s.Capacity != 12 || s.Fail != 16 || s.End != EndMaxRuns {
			t.Fatalf("capacity %v fail %v end %q", s.Capacity, s.Fail, s.End)
		}
		if got := s.Answer(); !strings.HasPrefix(got, "capacity: at least 12 concurrent streams and below 16 (16 fails: ") ||
			!strings.HasSuffix(got, "resolution 1 not reached within the budget of 6 runs") {
			t.Errorf("answer %q", got)
		}
	})
	t.Run("run budget in bracketing", func(t *testing.T) {
		f := passUpTo(1000)
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors(), MaxRuns: 3}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		if s.Capacity != 4 || !math.IsNaN(s.Fail) || s.End != EndMaxRuns || s.Runs() != 3 {
			t.Fatalf("capacity %v fail %v end %q runs %d", s.Capacity, s.Fail, s.End, s.Runs())
		}
		if got := s.Answer(); got != "capacity: at least 4 concurrent streams: no level failed within the budget of 3 runs" {
			t.Errorf("answer %q", got)
		}
	})
	t.Run("one stream fails", func(t *testing.T) {
		f := passUpTo(0)
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors()}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		want := "capacity: none: even 1 concurrent stream misses an SLO (1 fails: errors = 1, limit < 1: missed: exactly at the limit); 1 run"
		if got := s.Answer(); got != want {
			t.Errorf("answer\n got %q\nwant %q", got, want)
		}
	})
	t.Run("resolved at once", func(t *testing.T) {
		f := passUpTo(1)
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors()}, f.run)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.levels, []float64{1, 2}) || s.Capacity != 1 || s.End != EndResolved {
			t.Fatalf("path %v capacity %v end %q", f.levels, s.Capacity, s.End)
		}
		if got := s.Answer(); !strings.HasPrefix(got, "capacity: 1 concurrent stream (2 fails:") {
			t.Errorf("answer %q", got)
		}
	})
	t.Run("run error", func(t *testing.T) {
		f := passUpTo(12)
		f.errAt = 8
		s, err := Capacity(ctx, SearchOptions{Axis: Concurrency, SLOs: noErrors()}, f.run)
		if !errors.Is(err, errFake) || !strings.Contains(err.Error(), "concurrency 8") {
			t.Fatalf("error %v", err)
		}
		if s.Runs() != 4 || !s.Steps[3].Point.Partial || s.End != "" || s.Capacity != 4 {
			t.Fatalf("runs %d partial %v end %q capacity %v", s.Runs(), s.Steps[3].Point.Partial, s.End, s.Capacity)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		f := &fakeRunner{}
		f.fn = func(float64) fakeLevel { cancel(); return fakeLevel{ttfpMS: 1} }
		s, err := Capacity(cctx, SearchOptions{Axis: Concurrency, SLOs: noErrors()}, f.run)
		if !errors.Is(err, context.Canceled) || s.Runs() != 1 {
			t.Fatalf("error %v runs %d", err, s.Runs())
		}
	})
}

func TestCapacityOptionErrors(t *testing.T) {
	run := passUpTo(1).run
	tests := []struct {
		opts SearchOptions
		want string
	}{
		{SearchOptions{Axis: Concurrency}, "no SLOs"},
		{SearchOptions{Axis: "x", SLOs: noErrors()}, `unknown axis "x"`},
		{SearchOptions{Axis: Concurrency, SLOs: noErrors(), Start: 1.5}, "start 1.5: concurrency is a whole number"},
		{SearchOptions{Axis: Rate, SLOs: noErrors(), Start: -1}, "start -1 must be greater than 0"},
		{SearchOptions{Axis: Concurrency, SLOs: noErrors(), Start: 8, Max: 4}, "max 4 must be at least the start 8"},
		{SearchOptions{Axis: Concurrency, SLOs: noErrors(), Resolution: 0.5}, "resolution 0.5: concurrency resolution is a whole number"},
		{SearchOptions{Axis: Rate, SLOs: noErrors(), Resolution: -1}, "resolution -1 must be greater than 0"},
		{SearchOptions{Axis: Rate, SLOs: noErrors(), MaxRuns: -2}, "max runs -2 must be at least 1"},
	}
	for _, tt := range tests {
		_, err := Capacity(t.Context(), tt.opts, run)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want %q", tt.opts, err, tt.want)
		}
	}
}
