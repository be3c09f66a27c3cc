package summary

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/omnibench/omnibench/internal/run/results"
)

// TestPercentilesEqualNumpys: the percentiles of a run's figures are
// numpy's (numpy.percentile, method "linear", what the vLLM-Omni benchmark
// reports) on the same records, which testdata/percentiles.py reads from a
// results file and takes the figures of with the definitions written out
// anew. Between the order statistics a and b, at the fraction t of the way,
// both take a + (b-a)t when t is under a half, and the test wants the same
// bits; from a half numpy takes b - (b-a)(1-t) instead, two roundings that
// can land up to two units in the last place away (omnibench's arithmetic
// is montanaflynn/stats', package stats), which the test allows there only.
// The same holds when the per-event pools keep only 50 values in memory and
// read the rest back from their temporary files.
func TestPercentilesEqualNumpys(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	python := pythonWithNumpy(ctx, t)
	recs := mixedRecords(4001, 11)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	var file bytes.Buffer
	w := results.NewWriter(&file)
	for i := range recs {
		if err := w.Write(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, file.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	percentiles := []float64{1, 10, 33.3, 50, 66.7, 90, 95, 99, 99.9, 100}
	ps := make([]string, len(percentiles))
	for i, p := range percentiles {
		ps[i] = strconv.FormatFloat(p, 'g', -1, 64)
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, python, filepath.Join("testdata", "percentiles.py"), path, strings.Join(ps, ","))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("percentiles.py: %v\n%s", err, stderr.Bytes())
	}
	var want map[string]numpyFigure
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatalf("percentiles.py printed %q: %v", out, err)
	}
	spilled := NewSet()
	for _, p := range []*pool{&spilled.gaps, &spilled.stamps} {
		p.max, p.dir = 50, t.TempDir()
	}
	for i := range recs {
		spilled.Add(&recs[i])
	}
	if spilled.gaps.spilled() == 0 || spilled.stamps.spilled() == 0 {
		t.Fatalf("the pools spilled %d and %d values, want some", spilled.gaps.spilled(), spilled.stamps.spilled())
	}
	for _, set := range []*Set{SetOf(recs), spilled} {
		checkNumpys(t, ComputeSet(set, Options{Percentiles: percentiles}), want)
	}
}

// checkNumpys compares the percentiles of got with numpy's.
func checkNumpys(t *testing.T, got *Summary, want map[string]numpyFigure) {
	t.Helper()
	for name, w := range want {
		m, ok := got.Metric(name)
		if !ok || m.N != w.N || w.N < 100 {
			t.Errorf("%s: %d values (found %v), numpy %d: want the same, and at least 100", name, m.N, ok, w.N)
			continue
		}
		for i, p := range m.Percentiles {
			rank := p.P / 100 * float64(m.N-1)
			allowed := int64(0)
			if rank-math.Floor(rank) >= 0.5 {
				allowed = 2
			}
			if ulps := ulpsApart(p.Value, w.Percentiles[i]); ulps > allowed {
				t.Errorf("%s p%g = %v, numpy's %v (%d units in the last place apart, %d allowed)", name, p.P, p.Value, w.Percentiles[i], ulps, allowed)
			}
		}
	}
	if len(want) < 10 {
		t.Errorf("numpy computed %d figures, want the script's 11", len(want))
	}
}

// numpyFigure is what testdata/percentiles.py prints of one figure.
type numpyFigure struct {
	N           int       `json:"n"`
	Percentiles []float64 `json:"percentiles"`
}

// pythonWithNumpy finds a Python interpreter that has numpy (Debian's
// python3-numpy installs it for /usr/bin/python3, which need not be the
// python3 first on PATH), or skips the test.
func pythonWithNumpy(ctx context.Context, t *testing.T) string {
	t.Helper()
	for _, py := range []string{"python3", "/usr/bin/python3"} {
		if exec.CommandContext(ctx, py, "-c", "import numpy").Run() == nil {
			return py
		}
	}
	t.Skip("no python3 with numpy (Debian: apt-get install python3-numpy)")
	return ""
}

// ulpsApart is how many float64 values lie between a and b, plus one (0
// when equal); both are finite and of one sign here.
func ulpsApart(a, b float64) int64 {
	if a == b {
		return 0
	}
	d := int64(math.Float64bits(a)) - int64(math.Float64bits(b))
	if d < 0 {
		d = -d
	}
	if (a < 0) != (b < 0) {
		return math.MaxInt64
	}
	return d
}
