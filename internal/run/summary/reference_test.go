package summary

// The pre-Set implementation of Compute, kept verbatim as the reference the
// compact path must match exactly (TestSetMatchesRecords).

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/omnibench/omnibench/continuity"
	"github.com/omnibench/omnibench/internal/run/results"
	"github.com/omnibench/omnibench/stats"
)

func ComputeRef(recs []results.Record, opts Options) *Summary {
	if len(opts.Percentiles) == 0 {
		opts.Percentiles = DefaultPercentiles()
	}
	if len(opts.Thresholds) == 0 {
		opts.Thresholds = []float64{0.1}
	}
	s := &Summary{
		SchemaVersion: results.SchemaVersion,
		Percentiles:   opts.Percentiles,
		Requests:      Requests{ByError: map[string]int{}, ByStatus: map[string]int{}, ByFinish: map[string]int{}},
	}
	var (
		ttfp, ttft, e2e, gaps, rtfLast, rtfE2E, rtfServer, audioRTF []float64
		dur, underrun, stalls, stallTime, lag, stamp, queue         []float64
		ttfpEvent, ttfa, silence                                    []float64
		firstSend, lastEnd                                          = math.Inf(1), math.Inf(-1)
		okCount                                                     = make([]int, len(opts.Thresholds))
		ofCount                                                     int
		prerollStartup                                              float64
	)
	labels := make([]string, len(opts.Thresholds))
	for i, th := range opts.Thresholds {
		labels[i] = continuity.ThresholdLabel(th)
	}
	for i := range recs {
		r := &recs[i]
		if r.Warmup {
			s.Requests.Warmup++
			continue
		}
		if r.Phase == "ramp" && !opts.IncludeRamp {
			s.Requests.Ramp++
			continue
		}
		s.Requests.Total++
		switch s.LatencyOrigin {
		case "":
			s.LatencyOrigin = r.Origin()
		case r.Origin():
		default:
			s.LatencyOrigin = OriginMixed
		}
		s.Audio.InputDurationS += r.InputAudioS
		s.Audio.InputBytes += r.InputAudioBytes
		firstSend = math.Min(firstSend, r.SentS)
		lastEnd = math.Max(lastEnd, r.SentS+r.E2ES)
		lag = append(lag, r.LagS*1000)
		queue = append(queue, r.QueueS*1000)
		for _, d := range r.StampDelaysS {
			stamp = append(stamp, d*1000)
		}
		if !r.OK() {
			s.Requests.Failed++
			s.Requests.ByError[r.ErrorClass]++
			if r.ErrorClass == results.ErrHTTPStatus {
				s.Requests.ByStatus[strconv.Itoa(r.Status)]++
			}
			continue
		}
		s.Requests.Completed++
		if r.FinishReason != "" {
			s.Requests.ByFinish[r.FinishReason]++
		}
		e2e = append(e2e, r.Latency(r.E2ES)*1000)
		if r.TTFTS > 0 {
			ttft = append(ttft, r.Latency(r.TTFTS)*1000)
		}
		for _, g := range r.TextGapsS {
			gaps = append(gaps, g*1000)
		}
		if !r.HasAudio() {
			continue
		}
		s.Requests.WithAudio++
		if r.ChatPath() {
			s.Requests.ChatWithAudio++
		}
		ttfp = append(ttfp, r.Latency(r.TTFPS)*1000)
		first := r.TTFPS
		if r.Kind == results.KindChat && r.FirstAudioEventS > 0 {
			first = min(first, r.FirstAudioEventS)
		}
		ttfpEvent = append(ttfpEvent, r.Latency(first)*1000)
		if r.TTFAAudibleS > 0 {
			ttfa = append(ttfa, r.Latency(r.TTFAAudibleS)*1000)
		}
		if r.LeadingSilenceS != nil {
			silence = append(silence, *r.LeadingSilenceS*1000)
		}
		dur = append(dur, r.AudioDurationS)
		s.Audio.TotalDurationS += r.AudioDurationS
		s.Audio.TotalFrames += r.AudioFrames
		if r.AudioDurationS > 0 {
			rtfLast = append(rtfLast, r.RTFLastChunk)
			rtfE2E = append(rtfE2E, r.RTFE2E)
			if r.ChatPath() {
				audioRTF = append(audioRTF, r.RTFLastChunk)
			} else {
				audioRTF = append(audioRTF, r.RTFE2E)
			}
		}
		if r.RTFServer != nil {
			rtfServer = append(rtfServer, *r.RTFServer)
		}
		if c := r.Continuity; c != nil {
			ofCount++
			underrun = append(underrun, c.MaxUnderrunS)
			for j, l := range labels {
				if ok, known := c.OK[l]; ok || (!known && c.MaxUnderrunS <= opts.Thresholds[j]) {
					okCount[j]++
				}
			}
			if p := c.StallResume; p != nil {
				s.Players.Responses++
				stalls = append(stalls, float64(p.Stalls))
				stallTime = append(stallTime, p.TotalStallS)
				if p.Stalls > 0 {
					s.Players.StallResumeStalled++
				}
				s.Players.StallResumeStalls += p.Stalls
				s.Players.StallResumeTotalS += p.TotalStallS
				s.Players.StallResumeLongestS = math.Max(s.Players.StallResumeLongestS, p.LongestStallS)
			}
			if p := c.Preroll; p != nil {
				if p.Stalls > 0 {
					s.Players.PrerollStalled++
				}
				prerollStartup += p.StartupDelayS
			}
		}
	}
	s.FromIntended = s.LatencyOrigin == results.OriginIntended
	if s.Players.Responses > 0 {
		s.Players.PrerollStartupMeanS = prerollStartup / float64(s.Players.Responses)
	}
	if s.Requests.Total > 0 {
		s.Requests.ErrorRate = float64(s.Requests.Failed) / float64(s.Requests.Total)
	}
	s.Errors, s.ErrorsOmitted = errorSetRef(recs, opts.IncludeRamp)
	if s.ErrorsOmitted > 0 {
		s.Warnings = append(s.Warnings, fmt.Sprintf("error set: %d failures in messages beyond the %d most frequent are not listed", s.ErrorsOmitted, MaxErrorGroups))
	}
	if s.Requests.Total > 0 && lastEnd > firstSend {
		s.DurationS = lastEnd - firstSend
		s.RequestRate = float64(s.Requests.Completed) / s.DurationS
		s.Audio.Throughput = s.Audio.TotalDurationS / s.DurationS
	}
	for j, l := range labels {
		c := Continuity{ThresholdMS: l, OK: okCount[j], Of: ofCount}
		if ofCount > 0 {
			c.Rate = float64(okCount[j]) / float64(ofCount)
		}
		s.Continuity = append(s.Continuity, c)
	}
	add := func(name, unit string, xs []float64) {
		if len(xs) == 0 {
			return
		}
		s.Metrics = append(s.Metrics, Metric{Name: name, Unit: unit, Summary: stats.Summarize(xs, opts.Percentiles)})
	}
	add(MetricTTFP, "ms", ttfp)
	add(MetricTTFPFirstEvent, "ms", ttfpEvent)
	add(MetricTTFAAudible, "ms", ttfa)
	add(MetricLeadingSilence, "ms", silence)
	add(MetricTTFT, "ms", ttft)
	add(MetricE2E, "ms", e2e)
	add(MetricTextGap, "ms", gaps)
	add(MetricRTFLastChunk, "", rtfLast)
	add(MetricRTFE2E, "", rtfE2E)
	add(MetricRTFServer, "", rtfServer)
	add(MetricAudioRTF, "", audioRTF)
	add(MetricDuration, "s", dur)
	add(MetricUnderrun, "s", underrun)
	add(MetricStalls, "", stalls)
	add(MetricStallTime, "s", stallTime)
	add(MetricLag, "ms", lag)
	add(MetricStampDelay, "ms", stamp)
	add(MetricQueue, "ms", queue)
	if len(opts.Goodput) > 0 {
		s.Goodput = computeGoodputRef(recs, opts.Goodput, opts.IncludeRamp, s.DurationS)
	}
	s.bench = benchSamplesOfRef(recs, opts.Percentiles, opts.IncludeRamp).figures()
	for k := range s.Requests.ByStatus {
		if k == "0" {
			s.Warnings = append(s.Warnings, "http_status errors without a status code")
		}
	}
	return s
}

func errorSetRef(recs []results.Record, includeRamp bool) (groups []ErrorGroup, omitted int) {
	type key struct {
		class   string
		status  int
		message string
	}
	index := map[key]int{}
	for i := range recs {
		r := &recs[i]
		if r.Warmup || r.OK() || (r.Phase == "ramp" && !includeRamp) {
			continue
		}
		k := key{r.ErrorClass, r.Status, trimMessage(r.Error)}
		if groupedByClass(r.ErrorClass) {
			k.message = "" // one group per class: the earliest request's message
		}
		j, ok := index[k]
		if !ok {
			j = len(groups)
			index[k] = j
			groups = append(groups, ErrorGroup{Class: k.class, Status: k.status, Message: trimMessage(r.Error), FirstID: r.ID, firstSeq: r.Seq})
		}
		g := &groups[j]
		g.Count++
		if r.Seq < g.firstSeq {
			g.firstSeq, g.FirstID, g.Message = r.Seq, r.ID, trimMessage(r.Error)
		}
	}
	slices.SortFunc(groups, func(a, b ErrorGroup) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.firstSeq, b.firstSeq))
	})
	if len(groups) > MaxErrorGroups {
		for _, g := range groups[MaxErrorGroups:] {
			omitted += g.Count
		}
		groups = groups[:MaxErrorGroups]
	}
	return groups, omitted
}

// benchSamplesRef are the benchmark's per-request samples of one run, as
// the summary kept them before it computed the bench block's figures one
// distribution at a time.
type benchSamplesRef struct {
	percentiles []float64
	dists       map[string][]float64 // key stem -> samples in the key's unit
	okCount     int
	completed   int
}

// figures are the bench block's figures, as Summary.Bench computed them
// from the samples.
func (b *benchSamplesRef) figures() *benchFigures {
	out := &benchFigures{dists: map[string]float64{}, okCount: b.okCount, completed: b.completed}
	for stem, xs := range b.dists {
		sum := stats.Summarize(xs, b.percentiles)
		put := func(k string, v float64) {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				out.dists[k] = v
			}
		}
		put("mean_"+stem, sum.Mean)
		put("median_"+stem, sum.Median)
		put("std_"+stem, stats.PopulationStd(xs))
		for _, p := range sum.Percentiles {
			put("p"+strconv.FormatFloat(p.P, 'f', -1, 64)+"_"+stem, p.Value)
		}
	}
	return out
}

func benchSamplesOfRef(recs []results.Record, percentiles []float64, includeRamp bool) *benchSamplesRef {
	b := &benchSamplesRef{percentiles: percentiles, dists: map[string][]float64{}}
	add := func(stem string, v float64) { b.dists[stem] = append(b.dists[stem], v) }
	for i := range recs {
		r := &recs[i]
		if r.Warmup || !r.OK() || (r.Phase == "ramp" && !includeRamp) {
			continue
		}
		b.completed++
		add("ttft_ms", 1000*r.TTFTS)
		add("e2el_ms", 1000*r.E2ES)
		for _, g := range r.TextGapsS {
			add("itl_ms", 1000*g)
		}
		var ttfp, rtf, underrun float64
		ok := true
		if r.HasAudio() {
			ttfp = r.TTFPS
			add("audio_ttfp_nonempty_ms", 1000*r.TTFPS)
			if r.Kind == results.KindChat && r.FirstAudioEventS > 0 {
				ttfp = min(ttfp, r.FirstAudioEventS)
			}
			if r.TTFAAudibleS > 0 {
				add("ttfa_audible_ms", 1000*r.TTFAAudibleS)
			}
			if r.LeadingSilenceS != nil {
				add("leading_silence_ms", 1000*(*r.LeadingSilenceS))
			}
			if r.AudioDurationS > 0 {
				rtf = r.RTFE2E
				if r.ChatPath() {
					rtf = r.RTFLastChunk
				}
			}
			if c := r.Continuity; c != nil && !r.ChatPath() {
				underrun = c.MaxUnderrunS
				verdict, known := c.OK[benchContinuityMS]
				ok = verdict || (!known && c.MaxUnderrunS <= 0.1)
			}
		}
		if !r.HasAudio() {
			add("audio_ttfp_nonempty_ms", 0) // zero-filled like audio_ttfp_ms
		}
		add("audio_ttfp_ms", 1000*ttfp)
		add("audio_rtf", rtf)
		add("audio_duration_s", r.AudioDurationS)
		add("audio_underrun_s", underrun)
		if ok {
			b.okCount++
		}
	}
	return b
}

func computeGoodputRef(recs []results.Record, slos []Goodput, includeRamp bool, durationS float64) *GoodputResult {
	res := &GoodputResult{}
	for _, g := range slos {
		res.SLOs = append(res.SLOs, g.String())
	}
	for i := range recs {
		r := &recs[i]
		if r.Warmup || (r.Phase == "ramp" && !includeRamp) {
			continue
		}
		res.Of++
		if !r.OK() {
			continue
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
				for _, x := range r.TextGapsS {
					v = max(v, x)
				}
			case "underrun":
				if r.Continuity != nil {
					v = r.Continuity.MaxUnderrunS
				}
			case "rtf":
				v = r.RTFE2E
				if r.ChatPath() {
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
	}
	if durationS > 0 {
		res.Rate = float64(res.Good) / durationS
	}
	if res.Of > 0 {
		res.Share = float64(res.Good) / float64(res.Of)
	}
	return res
}
