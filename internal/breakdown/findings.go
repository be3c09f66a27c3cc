package breakdown

import (
	"fmt"
	"math"
)

// ImbalanceRatio is the ratio at which a replica or an edge is a finding:
// a replica serving this many times its fair share of its stage's
// requests, or a replica or edge this many times slower (mean or
// estimated p95) than its siblings together.
const ImbalanceRatio = 2

// Kinds of Finding.
const (
	FindingReplicaShare = "replica_share" // a replica took far more than its share of its stage's requests
	FindingReplicaSlow  = "replica_slow"  // a replica is far slower than its siblings
	FindingEdgeSlow     = "edge_slow"     // an edge's hops are far slower than its siblings'
)

// Finding is an imbalance worth a note: which replica or edge, by how much
// and how it was measured.
type Finding struct {
	Kind    string `json:"kind"`
	Stage   string `json:"stage,omitempty"`
	Replica string `json:"replica,omitempty"`
	Edge    string `json:"edge,omitempty"` // "1/0->2/1"
	// Ratio is the replica's or edge's figure over its siblings' (or over
	// its fair share).
	Ratio float64 `json:"ratio"`
	Note  string  `json:"note"`
}

// findings compares every replica with its stage's other replicas and every
// edge with the other edges between the same two stages.
func findings(stages []StageRow, edges []EdgeRow) []Finding {
	out := []Finding{}
	byStage := map[string][]StageRow{}
	var order []string
	for _, r := range stages {
		if _, ok := byStage[r.Stage]; !ok {
			order = append(order, r.Stage)
		}
		byStage[r.Stage] = append(byStage[r.Stage], r)
	}
	for _, st := range order {
		out = append(out, replicaFindings(byStage[st])...)
	}
	return append(out, edgeFindings(edges)...)
}

// replicaFindings compares the replicas of one stage.
func replicaFindings(rows []StageRow) []Finding {
	var out []Finding
	if len(rows) < 2 {
		return out
	}
	fair := 1 / float64(len(rows))
	for i, r := range rows {
		if ratio := r.Share / fair; ratio >= ImbalanceRatio {
			out = append(out, Finding{Kind: FindingReplicaShare, Stage: r.Stage, Replica: r.Replica, Ratio: ratio,
				Note: fmt.Sprintf("stage %s replica %s served %.0f%% of the stage's requests, %.1f× its fair share of %.0f%%",
					r.Stage, r.Replica, 100*r.Share, ratio, 100*fair)})
		}
		sib := siblingsOf(rows, i)
		if r.E2E.Count == 0 || sib.count == 0 {
			continue
		}
		mean, sibMean := r.E2E.Mean, sib.sum/sib.count
		ratio, by := mean/sibMean, "mean"
		if p := r.E2E.P95Estimate / sib.p95; sib.p95 > 0 && p > ratio {
			ratio, by = p, "estimated p95"
		}
		if sibMean > 0 && ratio >= ImbalanceRatio {
			out = append(out, Finding{Kind: FindingReplicaSlow, Stage: r.Stage, Replica: r.Replica, Ratio: ratio,
				Note: fmt.Sprintf("stage %s replica %s is %.1f× slower than its siblings by %s e2e "+
					"(mean %s against %s)", r.Stage, r.Replica, ratio, by, seconds(mean), seconds(sibMean))})
		}
	}
	return out
}

// edgeFindings compares each edge with the other edges between the same
// two stages, by the mean time of a hop (sender, in flight, receiver).
func edgeFindings(edges []EdgeRow) []Finding {
	var out []Finding
	for i, e := range edges {
		var sibTime, sibHops float64
		for j, s := range edges {
			if j != i && s.FromStage == e.FromStage && s.ToStage == e.ToStage {
				sibTime += s.Tx.Sum + s.InFlight.Sum + s.Rx.Sum
				sibHops += s.Hops
			}
		}
		if sibHops == 0 || e.Hops == 0 || sibTime <= 0 {
			continue
		}
		mean, sibMean := e.hopMean(), sibTime/sibHops
		if ratio := mean / sibMean; ratio >= ImbalanceRatio {
			out = append(out, Finding{Kind: FindingEdgeSlow, Edge: e.Name(), Ratio: ratio,
				Note: fmt.Sprintf("edge %s: a hop takes %s, %.1f× the %s of the other edges from stage %s to %s",
					e.Name(), seconds(mean), ratio, seconds(sibMean), e.FromStage, e.ToStage)})
		}
	}
	return out
}

// ReplicaImbalance is the largest ratio of any replica finding's kind,
// whether or not it reached ImbalanceRatio: the slowest replica's mean e2e
// over its siblings', or the busiest replica's share over its fair share.
// It is 1 for a perfectly balanced pipeline, NaN without replicated stages.
func (b Breakdown) ReplicaImbalance() float64 {
	worst := math.NaN()
	byStage := map[string][]StageRow{}
	for _, r := range b.Stages {
		byStage[r.Stage] = append(byStage[r.Stage], r)
	}
	for _, rows := range byStage {
		if len(rows) < 2 {
			continue
		}
		for i, r := range rows {
			sib := siblingsOf(rows, i)
			share := r.Share * float64(len(rows))
			slow := math.NaN()
			if r.E2E.Count > 0 && sib.count > 0 && sib.sum > 0 {
				slow = r.E2E.Mean / (sib.sum / sib.count)
			}
			for _, v := range []float64{share, slow} {
				if !math.IsNaN(v) && (math.IsNaN(worst) || v > worst) {
					worst = v
				}
			}
		}
	}
	return worst
}

// siblings are the other replicas of a stage together: their e2e sum and
// count, and the largest of their estimated e2e p95s.
type siblings struct{ sum, count, p95 float64 }

// siblingsOf pools every row of rows but the i-th.
func siblingsOf(rows []StageRow, i int) siblings {
	var sib siblings
	for j, s := range rows {
		if j != i {
			sib.sum, sib.count = sib.sum+s.E2E.Sum, sib.count+s.E2E.Count
			sib.p95 = max(sib.p95, nanZero(s.E2E.P95Estimate))
		}
	}
	return sib
}

// nanZero is v, or 0 for NaN.
func nanZero(v float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return v
}
