package stats

import (
	"encoding/binary"
	"math"
	"testing"
)

// FuzzSummarize checks invariants of Summarize and Holm on arbitrary input:
// min <= percentiles (non-decreasing in p) <= max, min <= mean <= max, and
// Holm-adjusted values in [raw, 1] and ordered like the raw ones.
func FuzzSummarize(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\xf0\x3f\x00\x00\x00\x00\x00\x00\x00\x40")) // 1, 2
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\xf8\x7f\x00\x00\x00\x00\x00\x00\xf0\x7f")) // NaN, +Inf
	f.Add([]byte("\xff\xff\xff\xff\xff\xff\xef\xff\xff\xff\xff\xff\xff\xff\xef\x7f")) // -MaxFloat64, +MaxFloat64
	f.Fuzz(func(t *testing.T, data []byte) {
		var xs []float64
		for len(data) >= 8 {
			xs = append(xs, math.Float64frombits(binary.LittleEndian.Uint64(data)))
			data = data[8:]
		}
		ps := []float64{0, 1, 25, 50, 75, 99, 100}
		s := Summarize(xs, ps)
		if s.N+s.Dropped != len(xs) {
			t.Fatalf("N %d + Dropped %d != %d", s.N, s.Dropped, len(xs))
		}
		if s.N == 0 {
			return
		}
		prev := s.Min
		for _, p := range s.Percentiles {
			if p.Value < prev || p.Value > s.Max {
				t.Fatalf("percentile %v = %v outside [%v, %v] or decreasing", p.P, p.Value, prev, s.Max)
			}
			prev = p.Value
		}
		// The mean may overflow to ±Inf for huge values; otherwise it lies
		// within the range up to rounding.
		tol := 1e-12 * math.Max(math.Abs(s.Min), math.Abs(s.Max))
		if !math.IsInf(s.Mean, 0) && (s.Mean < s.Min-tol || s.Mean > s.Max+tol) {
			t.Fatalf("mean %v outside [%v, %v]", s.Mean, s.Min, s.Max)
		}

		raw := make([]float64, 0, len(xs))
		for _, x := range xs {
			raw = append(raw, math.Abs(math.Mod(x, 1)))
		}
		adj := Holm(raw)
		for i := range raw {
			if math.IsNaN(raw[i]) {
				continue
			}
			if adj[i] < raw[i] || adj[i] > 1 {
				t.Fatalf("holm %v for raw %v", adj[i], raw[i])
			}
			for j := range raw {
				if raw[j] < raw[i] && adj[j] > adj[i] {
					t.Fatalf("holm not monotone: raw %v < %v but adjusted %v > %v", raw[j], raw[i], adj[j], adj[i])
				}
			}
		}
	})
}
