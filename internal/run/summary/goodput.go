package summary

import (
	"fmt"
	"strings"
	"time"
)

// Goodput is one per-request SLO: the request counts towards goodput only when
// its figure is at most Limit. Metrics: ttfp, ttft, e2e (also e2el), itl (the
// largest text gap), underrun, rtf (the benchmark's audio RTF).
type Goodput struct {
	Metric string
	Limit  float64 // seconds for times, plain number for rtf
}

// GoodputResult counts completed requests that met every SLO.
type GoodputResult struct {
	SLOs  []string `json:"slos"`
	Good  int      `json:"good"`
	Of    int      `json:"of"`
	Rate  float64  `json:"rate"`  // good requests per second
	Share float64  `json:"share"` // good / measured requests
}

// ParseGoodput parses "ttfp:500ms,e2e:2s,rtf:1" (a bare number for a time is
// milliseconds, as in vllm bench serve --goodput).
func ParseGoodput(s string) ([]Goodput, error) {
	var out []Goodput
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		name, val, ok := strings.Cut(part, ":")
		if !ok {
			return nil, fmt.Errorf("goodput %q: want METRIC:LIMIT, e.g. ttfp:500ms", part)
		}
		name = strings.ToLower(strings.TrimSpace(name))
		val = strings.TrimSpace(val)
		switch name {
		case "e2el":
			name = "e2e"
		case "ttfp", "ttft", "e2e", "itl", "underrun", "rtf":
		default:
			return nil, fmt.Errorf("goodput %q: unknown metric %q (want ttfp, ttft, e2e, itl, underrun or rtf)", part, name)
		}
		var limit float64
		if name == "rtf" {
			if _, err := fmt.Sscanf(val, "%g", &limit); err != nil {
				return nil, fmt.Errorf("goodput %q: rtf limit %q is not a number", part, val)
			}
		} else if d, err := time.ParseDuration(val); err == nil {
			limit = d.Seconds()
		} else if _, err := fmt.Sscanf(val, "%g", &limit); err == nil {
			limit /= 1000 // bare numbers are milliseconds
		} else {
			return nil, fmt.Errorf("goodput %q: limit %q is neither a duration (500ms) nor a number of milliseconds", part, val)
		}
		if limit <= 0 {
			return nil, fmt.Errorf("goodput %q: limit must be positive", part)
		}
		out = append(out, Goodput{Metric: name, Limit: limit})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("goodput %q: no SLO given", s)
	}
	return out, nil
}

func (g Goodput) String() string {
	if g.Metric == "rtf" {
		return fmt.Sprintf("rtf<=%g", g.Limit)
	}
	return fmt.Sprintf("%s<=%gms", g.Metric, g.Limit*1000)
}

func computeGoodput(set *Set, slos []Goodput, includeRamp bool, durationS float64) *GoodputResult {
	res := &GoodputResult{}
	for _, g := range slos {
		res.SLOs = append(res.SLOs, g.String())
	}
	set.All(func(r *Sample) {
		if r.Warmup() || (r.Ramp() && !includeRamp) {
			return
		}
		res.Of++
		if !set.OK(r) {
			return
		}
		good := true
		for _, g := range slos {
			var v float64
			switch g.Metric {
			case "ttfp":
				if !r.HasAudio() {
					good = false
				}
				v = r.Latency(r.TTFPS)
			case "ttft":
				v = r.Latency(r.TTFTS)
			case "e2e":
				v = r.Latency(r.E2ES)
			case "itl":
				v = r.MaxTextGapS
			case "underrun":
				if r.flags&flagContinuity != 0 {
					v = r.MaxUnderrunS
				}
			case "rtf":
				v = r.RTFE2E
				if set.ChatPath(r) {
					v = r.RTFLastChunk
				}
			}
			if v > g.Limit {
				good = false
			}
		}
		if good {
			res.Good++
		}
	})
	if durationS > 0 {
		res.Rate = float64(res.Good) / durationS
	}
	if res.Of > 0 {
		res.Share = float64(res.Good) / float64(res.Of)
	}
	return res
}
