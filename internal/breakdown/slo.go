package breakdown

import (
	"math"
	"strings"
)

// ServerFigure answers an SLO on a figure of the breakdown (the slo
// package's ServerFigures): name is a server_stage_<part>_<stat> or
// transfer_<part>_<stat> figure, or replica_imbalance; labels select the
// stage rows (stage, replica) or the edges (from_stage, from_replica,
// to_stage, to_replica) it is taken over. Over several rows it is the
// largest: the worst replica or edge. replica_imbalance is 1 for a pipeline
// of one replica per stage. Times are in seconds; NaN comes with
// the reason there is no value.
func (b Breakdown) ServerFigure(name string, labels map[string]string) (float64, string) {
	if !b.Computable {
		return math.NaN(), "the breakdown cannot be computed: " + strings.Join(b.Reasons, "; ")
	}
	if name == "replica_imbalance" {
		v := b.ReplicaImbalance()
		switch {
		case !math.IsNaN(v):
			return v, ""
		case len(b.Stages) > 0 && !replicated(b.Stages):
			return 1, "" // one replica per stage: nothing to be out of balance
		}
		return v, "no stage has two replicas that served requests"
	}
	if rest, ok := strings.CutPrefix(name, "server_stage_"); ok {
		part, stat := splitStat(rest)
		var figs []Figure
		for _, r := range b.Stages {
			if selects(labels, map[string]string{labelStage: r.Stage, labelReplica: r.Replica}) {
				figs = append(figs, stagePart(r, part)...)
			}
		}
		return worst(figs, stat, "no stage row matches the labels")
	}
	if rest, ok := strings.CutPrefix(name, "transfer_"); ok {
		part, stat := splitStat(rest)
		var figs []Figure
		for _, e := range b.Edges {
			if selects(labels, map[string]string{labelFromStage: e.FromStage, labelFromReplica: e.FromReplica,
				labelToStage: e.ToStage, labelToReplica: e.ToReplica}) {
				figs = append(figs, edgePart(e, part)...)
			}
		}
		return worst(figs, stat, "no edge matches the labels (the server exposes no transfer series?)")
	}
	return math.NaN(), "not a figure of the breakdown: " + name
}

// splitStat splits "queue_p95" into its part and statistic.
func splitStat(s string) (part, stat string) {
	i := strings.LastIndexByte(s, '_')
	if i < 0 {
		return s, ""
	}
	return s[:i], s[i+1:]
}

// selects reports whether every label asked for has the row's value.
func selects(want, row map[string]string) bool {
	for k, v := range want {
		if row[k] != v {
			return false
		}
	}
	return true
}

func stagePart(r StageRow, part string) []Figure {
	f, ok := map[string]Figure{"queue": r.Queue, "prefill": r.Prefill, "decode": r.Decode, "e2e": r.E2E,
		"ttft": r.TTFT, "itl": r.ITL}[part]
	if !ok {
		return nil
	}
	return []Figure{f}
}

func edgePart(e EdgeRow, part string) []Figure {
	f, ok := map[string]Figure{"tx": e.Tx, "rx": e.Rx, "in_flight": e.InFlight}[part]
	if !ok {
		return nil
	}
	return []Figure{f}
}

// worst is the largest value of stat over figs.
func worst(figs []Figure, stat, none string) (float64, string) {
	if len(figs) == 0 {
		return math.NaN(), none
	}
	v := math.NaN()
	for _, f := range figs {
		x := map[string]float64{"mean": f.Mean, "p50": f.P50Estimate, "p95": f.P95Estimate, "p99": f.P99Estimate}[stat]
		if !math.IsNaN(x) && (math.IsNaN(v) || x > v) {
			v = x
		}
	}
	if math.IsNaN(v) {
		return v, "the server observed nothing there during the run"
	}
	return v, ""
}

// replicated reports whether any stage has more than one replica row.
func replicated(rows []StageRow) bool {
	seen := map[string]bool{}
	for _, r := range rows {
		if seen[r.Stage] {
			return true
		}
		seen[r.Stage] = true
	}
	return false
}
