package breakdown

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

// Breakdown is where the time between two scrapes went.
type Breakdown struct {
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Interval float64   `json:"interval_s"`

	// Requests is the pipeline's finished requests between the scrapes
	// (the increase of its e2e histogram's count).
	Requests float64 `json:"requests"`

	// Computable is false when nothing can be said: Reasons say why (the
	// server's stats are off, it restarted, it is not a vLLM-Omni server).
	Computable bool     `json:"computable"`
	Reasons    []string `json:"reasons,omitempty"`

	Stages      []StageRow  `json:"stages"`
	Edges       []EdgeRow   `json:"edges"`
	Attribution Attribution `json:"attribution"`
	Findings    []Finding   `json:"findings"`

	// Measured is the breakdown of the run's measured window, when the run
	// had a warm-up or ramp the breakdown above includes (nil otherwise).
	Measured *Window `json:"measured_window,omitempty"`
}

// Window is the breakdown of a run's measured window: from the last scrape
// taken before the measured phase began to the run's last scrape, beside
// the client's figures over the measured requests only. Breakdown is nil
// when no scrape bounds the window (no interval scrape fell in the warm-up
// or ramp); Note says which scrapes bound it, or why none do.
type Window struct {
	Breakdown *Breakdown `json:"breakdown,omitempty"`
	Note      string     `json:"note"`
}

// StageRow is one replica of one stage.
type StageRow struct {
	Stage   string `json:"stage"`
	Replica string `json:"replica"`

	// Requests is the replica's finished requests (its e2e count increase);
	// Share its part of its stage's.
	Requests float64 `json:"requests"`
	Share    float64 `json:"share"`

	Queue   Figure `json:"queue_s"`
	Prefill Figure `json:"prefill_s"`
	Decode  Figure `json:"decode_s"`
	E2E     Figure `json:"e2e_s"`
	TTFT    Figure `json:"ttft_s"`
	ITL     Figure `json:"itl_s"`

	GeneratedTokens float64 `json:"generated_tokens"`
	TokensPerSecond float64 `json:"tokens_per_s"`

	// KV-cache usage (a fraction, 1 = full): peak and mean over the values
	// seen, the two scrapes' unless WithTimeline added the ones between.
	// NaN when the server does not expose it.
	KVUsagePeak float64 `json:"kv_usage_peak"`
	KVUsageMean float64 `json:"kv_usage_mean"`
}

// EdgeRow is one edge: transfers from a replica of one stage to a replica
// of the next.
type EdgeRow struct {
	FromStage   string `json:"from_stage"`
	FromReplica string `json:"from_replica"`
	ToStage     string `json:"to_stage"`
	ToReplica   string `json:"to_replica"`

	Hops  float64 `json:"hops"`
	Bytes float64 `json:"bytes"`

	Tx       Figure `json:"tx_s"`
	Rx       Figure `json:"rx_s"`
	InFlight Figure `json:"in_flight_s"`

	// HopsPerRequest is Hops over the pipeline's requests.
	HopsPerRequest float64 `json:"hops_per_request"`
}

// Name is the edge as "1/0->2/1" (from stage/replica to stage/replica).
func (e EdgeRow) Name() string {
	return e.FromStage + "/" + e.FromReplica + "->" + e.ToStage + "/" + e.ToReplica
}

// hopMean is the mean time of one hop: sender, in flight and receiver.
func (e EdgeRow) hopMean() float64 {
	if e.Hops <= 0 {
		return math.NaN()
	}
	return (e.Tx.Sum + e.InFlight.Sum + e.Rx.Sum) / e.Hops
}

// Compute breaks down what the server did between two selected scrapes,
// beside the client's figures over the same requests (the zero
// ClientFigures when there are none).
func Compute(before, after Series, client ClientFigures) Breakdown {
	b := Breakdown{Start: before.At, End: after.At, Stages: []StageRow{}, Edges: []EdgeRow{}, Findings: []Finding{}}
	b.Interval = after.At.Sub(before.At).Seconds()
	d := scrape.Diff(before.families, after.families)
	if reasons := computable(d, after, client); len(reasons) > 0 {
		b.Reasons = reasons
		b.Attribution = notAttributed(client, reasons)
		return b
	}
	b.Computable = true
	e2e, _ := d.HistogramDelta(famPipelineE2E, nil)
	b.Requests = e2e.Count
	b.Stages = stageRows(d, b.Interval)
	b.Edges = edgeRows(d, b.Requests)
	b.Attribution = attribute(d, b, client)
	b.Findings = findings(b.Stages, b.Edges)
	return b
}

// computable says why nothing can be computed, if so.
func computable(d *scrape.Delta, after Series, client ClientFigures) []string {
	if _, ok := after.families[famPipelineE2E]; !ok {
		return []string{"the server exposes no pipeline e2e histogram (vllm:omni_e2e_request_latency_s): " +
			"it is not a vLLM-Omni server, or its metrics were not scraped"}
	}
	if d.Reset {
		return []string{fmt.Sprintf("the server restarted between the scrapes (%d series went down): "+
			"its counts do not cover the run", d.ResetSeries)}
	}
	e2e, _ := d.HistogramDelta(famPipelineE2E, nil)
	switch {
	case e2e.Count > 0:
		return nil
	case client.Requests > 0:
		return []string{fmt.Sprintf("the server counted no finished requests while the client finished %d: "+
			"its stats are off (vLLM-Omni logs no stats unless started with them on)", client.Requests)}
	default:
		return []string{"no requests finished between the scrapes"}
	}
}

// labelled returns the distinct values of the given labels over a family's
// series, ordered numerically where they are numbers.
func labelled(d *scrape.Delta, family string, names ...string) [][]string {
	f, ok := d.Family(family)
	if !ok {
		return nil
	}
	seen := map[string]bool{}
	var out [][]string
	for _, s := range f.Series {
		vals := make([]string, len(names))
		complete := true
		for i, n := range names {
			v, ok := s.Labels[n]
			vals[i], complete = v, complete && ok
		}
		key := fmt.Sprint(vals)
		if complete && !seen[key] {
			seen[key] = true
			out = append(out, vals)
		}
	}
	sort.Slice(out, func(i, j int) bool { return lessLabels(out[i], out[j]) })
	return out
}

// lessLabels orders label value lists numerically where both are numbers.
func lessLabels(a, b []string) bool {
	for k := range a {
		if a[k] == b[k] {
			continue
		}
		x, errX := strconv.Atoi(a[k])
		y, errY := strconv.Atoi(b[k])
		if errX == nil && errY == nil {
			return x < y
		}
		return a[k] < b[k]
	}
	return false
}

// figure summarises the family's series whose labels include match; a
// missing family gives a figure without observations.
func figure(d *scrape.Delta, family string, match map[string]string) Figure {
	h, _ := d.HistogramDelta(family, match)
	return figureOf(h)
}

// stageRows builds one row per (stage, replica) seen in the stage e2e family.
func stageRows(d *scrape.Delta, interval float64) []StageRow {
	rows := []StageRow{}
	perStage := map[string]float64{}
	for _, v := range labelled(d, famStageE2E, labelStage, labelReplica) {
		m := map[string]string{labelStage: v[0], labelReplica: v[1]}
		r := StageRow{Stage: v[0], Replica: v[1],
			Queue: figure(d, famStageQueue, m), Prefill: figure(d, famStagePrefill, m),
			Decode: figure(d, famStageDecode, m), E2E: figure(d, famStageE2E, m),
			TTFT: figure(d, famStageTTFT, m), ITL: figure(d, famStageITL, m),
			TokensPerSecond: math.NaN(), KVUsagePeak: math.NaN(), KVUsageMean: math.NaN()}
		r.Requests = r.E2E.Count
		perStage[r.Stage] += r.Requests
		if tok, ok := d.CounterDelta(famStageGenTokens, m); ok {
			r.GeneratedTokens = tok
			if interval > 0 {
				r.TokensPerSecond = tok / interval
			}
		}
		if g, ok := d.Gauge(famStageKVUsage, m); ok {
			r.KVUsagePeak, r.KVUsageMean = max(g.Before, g.After), (g.Before+g.After)/2
		}
		rows = append(rows, r)
	}
	for i := range rows {
		rows[i].Share = math.NaN()
		if n := perStage[rows[i].Stage]; n > 0 {
			rows[i].Share = rows[i].Requests / n
		}
	}
	return rows
}

// edgeRows builds one row per edge seen in the transfer families.
func edgeRows(d *scrape.Delta, requests float64) []EdgeRow {
	rows := []EdgeRow{}
	for _, v := range labelled(d, famTransferTx, labelFromStage, labelFromReplica, labelToStage, labelToReplica) {
		m := map[string]string{labelFromStage: v[0], labelFromReplica: v[1], labelToStage: v[2], labelToReplica: v[3]}
		e := EdgeRow{FromStage: v[0], FromReplica: v[1], ToStage: v[2], ToReplica: v[3],
			Tx: figure(d, famTransferTx, m), Rx: figure(d, famTransferRx, m),
			InFlight: figure(d, famTransferInFlight, m), HopsPerRequest: math.NaN()}
		e.Hops = e.Tx.Count
		e.Bytes = figure(d, famTransferSize, m).Sum
		if requests > 0 {
			e.HopsPerRequest = e.Hops / requests
		}
		rows = append(rows, e)
	}
	return rows
}
