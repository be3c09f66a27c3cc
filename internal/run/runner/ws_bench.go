package runner

import (
	"math"
	"slices"
	"strconv"

	"github.com/omnibench/omnibench/internal/run/summary"
	"github.com/omnibench/omnibench/stats"
)

// realtimeBench puts a realtime run's TTFP, RTF and TTFT into the bench
// block as the vLLM-Omni benchmark's realtime backends report them
// (docs/reference/websocket.md, section 8): one benchmark "request" is a session, a session
// fails when any of its turns does, a session's figure is the mean of its
// turns' non-null values (0 when it has none), and mean, median and
// percentiles are over sessions. The per-turn figures come from each
// record's ws.bench. The standard deviations of these three stems are
// removed (the benchmark saves none), so that no key mixes definitions.
// omnibench's own per-turn figures stay in the summary. Other kinds leave
// bench untouched.
func realtimeBench(bench map[string]float64, turns []summary.RealtimeTurn, percentiles []float64, durationS float64) {
	type session struct {
		failed          bool
		ttfp, rtf, ttft []float64
	}
	byID := map[int]*session{}
	var order []int
	for _, r := range turns {
		if r.Warmup {
			continue
		}
		s := byID[r.Session]
		if s == nil {
			s = &session{}
			byID[r.Session] = s
			order = append(order, r.Session)
		}
		if !r.OK {
			s.failed = true
			continue
		}
		if b := r.Bench; b != nil {
			s.ttfp = append(s.ttfp, b.TTFPS*1000)
			if b.RTF != nil {
				s.rtf = append(s.rtf, *b.RTF)
			}
			if b.TTFTS != nil {
				s.ttft = append(s.ttft, *b.TTFTS*1000)
			}
		}
	}
	if len(order) == 0 {
		return
	}
	slices.Sort(order)
	var ttfp, rtf, ttft []float64
	completed := 0
	for _, id := range order {
		s := byID[id]
		if s.failed {
			continue
		}
		completed++
		ttfp = append(ttfp, meanOrZero(s.ttfp))
		rtf = append(rtf, meanOrZero(s.rtf))
		ttft = append(ttft, meanOrZero(s.ttft))
	}
	bench["completed"] = float64(completed)
	bench["failed"] = float64(len(order) - completed)
	if durationS > 0 {
		bench["request_throughput"] = float64(completed) / durationS
	}
	for _, m := range []struct {
		stem string
		xs   []float64
	}{{"audio_ttfp_ms", ttfp}, {"audio_rtf", rtf}, {"ttft_ms", ttft}} {
		delete(bench, "std_"+m.stem)
		for k := range bench {
			if len(k) > len(m.stem) && k[len(k)-len(m.stem)-1:] == "_"+m.stem {
				delete(bench, k)
			}
		}
		if len(m.xs) == 0 {
			continue
		}
		s := stats.Summarize(m.xs, percentiles)
		bench["mean_"+m.stem] = s.Mean
		bench["median_"+m.stem] = s.Median
		for _, p := range s.Percentiles {
			if !math.IsNaN(p.Value) {
				bench["p"+strconv.FormatFloat(p.P, 'f', -1, 64)+"_"+m.stem] = p.Value
			}
		}
	}
}

// meanOrZero is the benchmark's per-session mean: 0 without values.
func meanOrZero(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
