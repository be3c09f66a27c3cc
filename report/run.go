package report

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/omnibench/omnibench/load"
	"github.com/omnibench/omnibench/results"
	"github.com/omnibench/omnibench/summary"
)

// Comparison is one row of the server-vs-client section: a figure as the
// server's /metrics delta states it and as the client measured it.
type Comparison struct {
	Figure    string   `json:"figure"`
	Server    *float64 `json:"server"` // nil: the server does not export it
	Client    *float64 `json:"client"`
	Diff      *float64 `json:"diff"` // server - client
	Unit      string   `json:"unit,omitempty"`
	Note      string   `json:"note,omitempty"`
	Tolerance string   `json:"tolerance,omitempty"`
}

// RunReport is what the run report shows.
type RunReport struct {
	Header         results.Header
	Summary        *summary.Summary
	Load           *load.Stats
	ServerVsClient []Comparison
	Notes          []string
}

// RunTables builds the run report's tables.
func RunTables(r RunReport) []Table {
	s := r.Summary
	var out []Table

	req := Table{Title: "Requests", Header: []string{"outcome", "count"}}
	req.Rows = append(req.Rows,
		[]string{"sent (measured)", strconv.Itoa(s.Requests.Total)},
		[]string{"completed", strconv.Itoa(s.Requests.Completed)},
		[]string{"failed", strconv.Itoa(s.Requests.Failed)},
	)
	for _, class := range results.ErrorClasses() {
		n := s.Requests.ByError[class]
		if n == 0 {
			continue
		}
		label := "  " + class
		if class == results.ErrHTTPStatus {
			var codes []string
			for code, c := range s.Requests.ByStatus {
				codes = append(codes, fmt.Sprintf("%s×%d", code, c))
			}
			sort.Strings(codes)
			label += " (" + strings.Join(codes, ", ") + ")"
		}
		req.Rows = append(req.Rows, []string{label, strconv.Itoa(n)})
	}
	if s.Requests.Warmup > 0 {
		req.Rows = append(req.Rows, []string{"warm-up (excluded)", strconv.Itoa(s.Requests.Warmup)})
	}
	if r.Load != nil && r.Load.Dropped > 0 {
		req.Rows = append(req.Rows, []string{"dropped arrivals (--max-inflight)", strconv.Itoa(r.Load.Dropped)})
	}
	if s.Requests.Total > 0 {
		req.Rows = append(req.Rows, []string{"error rate", ff(s.Requests.ErrorRate, 4)})
	}
	if s.Requests.Dropped > 0 {
		req.Rows = append(req.Rows, []string{"drop rate (dropped / scheduled)", ff(s.Requests.DropRate, 4)})
	}
	out = append(out, req)
	if errs, ok := ErrorSetTable(s); ok {
		out = append(out, errs)
	}

	rate := Table{Title: "Load", Header: []string{"figure", "value"}}
	rate.Rows = append(rate.Rows, []string{"mode", s.Mode})
	if r.Load != nil {
		l := r.Load
		if l.TargetRate > 0 {
			rate.Rows = append(rate.Rows, []string{"target rate (req/s)", ff(l.TargetRate, 3)})
		}
		rate.Rows = append(rate.Rows, []string{"achieved start rate (req/s)", ff(l.AchievedRate, 3)})
		if s.Mode == "open" {
			rate.Rows = append(rate.Rows,
				[]string{fmt.Sprintf("late starts (lag > %s)", l.LateThreshold), strconv.Itoa(l.Late)},
				[]string{"max scheduling lag", l.MaxLag.Round(time.Microsecond).String()})
		}
	}
	rate.Rows = append(rate.Rows,
		[]string{"duration (s)", ff(s.DurationS, 3)},
		[]string{"request throughput (req/s)", ff(s.RequestRate, 3)},
		[]string{"audio throughput (audio s / wall s)", ff(s.Audio.Throughput, 3)},
		[]string{"total audio (s)", ff(s.Audio.TotalDurationS, 3)},
		[]string{"total audio frames", strconv.FormatInt(s.Audio.TotalFrames, 10)},
	)
	if g := s.Goodput; g != nil {
		rate.Rows = append(rate.Rows,
			[]string{"goodput (" + strings.Join(g.SLOs, ", ") + ")", fmt.Sprintf("%d/%d good, %s req/s", g.Good, g.Of, ff(g.Rate, 3))})
	}
	out = append(out, rate)

	lat := Table{Title: "Latency and real-time factor", Header: append([]string{"metric", "n", "mean", "median", "std", "min", "max"}, percentileHeaders(s.Percentiles)...)}
	for _, m := range s.Metrics {
		name := m.Name
		if m.Unit != "" && !strings.HasSuffix(name, "_"+m.Unit) {
			name += " (" + m.Unit + ")"
		}
		ms := m.Summary
		row := []string{name, strconv.Itoa(ms.N), fv(ms.Mean), fv(ms.Median), fv(ms.Std), fv(ms.Min), fv(ms.Max)}
		for _, p := range ms.Percentiles {
			row = append(row, fv(p.Value))
		}
		lat.Rows = append(lat.Rows, row)
	}
	lat.Notes = append(lat.Notes,
		"rtf_last_chunk = (last audio chunk - send) / audio duration; rtf_e2e = end-to-end / audio duration; audio_rtf = the vLLM-Omni benchmark's choice (last chunk for chat, e2e for speech).")
	if s.FromIntended {
		lat.Notes = append(lat.Notes, "open loop: latencies are measured from each request's intended start (scheduling lag included).")
	}
	out = append(out, lat)

	if len(s.Continuity) > 0 && s.Continuity[0].Of > 0 {
		ct := Table{Title: "Playback continuity", Header: []string{"player", "threshold", "continuous", "rate"}}
		for _, c := range s.Continuity {
			ct.Rows = append(ct.Rows, []string{"reference (no re-buffering)", c.ThresholdMS + " ms", fmt.Sprintf("%d/%d", c.OK, c.Of), ff(c.Rate, 4)})
		}
		p := s.Players
		if p.Responses > 0 {
			ct.Rows = append(ct.Rows,
				[]string{"stall-and-resume", "-", fmt.Sprintf("%d/%d without a stall", p.Responses-p.StallResumeStalled, p.Responses), ff(float64(p.Responses-p.StallResumeStalled)/float64(p.Responses), 4)},
				[]string{"pre-roll", "-", fmt.Sprintf("%d/%d without a stall", p.Responses-p.PrerollStalled, p.Responses), ff(float64(p.Responses-p.PrerollStalled)/float64(p.Responses), 4)},
			)
			ct.Notes = append(ct.Notes, fmt.Sprintf("stall-and-resume: %d stalls, %.3f s in all, longest %.3f s; pre-roll mean start-up delay %.3f s",
				p.StallResumeStalls, p.StallResumeTotalS, p.StallResumeLongestS, p.PrerollStartupMeanS))
		}
		out = append(out, ct)
	}

	if len(r.ServerVsClient) > 0 {
		sv := Table{Title: "Server vs client", Header: []string{"figure", "server", "client", "server - client", "note"}}
		for _, c := range r.ServerVsClient {
			sv.Rows = append(sv.Rows, []string{c.Figure, fp(c.Server), fp(c.Client), fp(c.Diff), c.Note})
		}
		out = append(out, sv)
	}
	if len(r.Notes) > 0 || len(s.Warnings) > 0 {
		out = append(out, Table{Title: "Notes", Header: []string{"note"}, Rows: rowsOf(append(append([]string{}, r.Notes...), s.Warnings...))})
	}
	return out
}

func rowsOf(ss []string) [][]string {
	rows := make([][]string, len(ss))
	for i, s := range ss {
		rows[i] = []string{s}
	}
	return rows
}

func percentileHeaders(ps []float64) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = "p" + strconv.FormatFloat(p, 'f', -1, 64)
	}
	return out
}

// fv formats a figure of the run report, where counts sit beside
// statistics: whole numbers print without decimals.
func fv(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e7 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return FormatValue(v)
}

func ff(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func fp(v *float64) string {
	if v == nil {
		return "-"
	}
	return fv(*v)
}
