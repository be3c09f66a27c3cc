package check

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/omnibench/omnibench/internal/breakdown"
)

// Names of the rules the breakdown check returns.
const (
	ruleStageCounts  = "breakdown: every stage finished the pipeline's requests"
	ruleHops         = "breakdown: transfer hops cross every stage boundary of every request"
	rulePartsWithin  = "breakdown: pipeline e2e not below its stages and transfers"
	breakdownSkipped = "nothing to break down"
)

// breakdownConsistency checks what the breakdown of a run (package
// internal/breakdown) relies on: every stage counted the pipeline's
// requests, every request crossed every stage boundary at least once, and
// the pipeline's mean e2e is not below the sum of its stages' and
// transfers' means. Each rule skips where the families it reads are absent
// (stats off, an older server, a server without transfer series).
func (ev *evaluator) breakdownConsistency(_ *Rule, base Result) []Result {
	b := breakdown.Compute(breakdown.Select(ev.in.Before, time.Time{}), breakdown.Select(ev.in.After, time.Time{}),
		breakdown.ClientFigures{})
	rules := []string{ruleStageCounts, ruleHops, rulePartsWithin}
	if !b.Computable || len(b.Stages) == 0 {
		why := "the server exposes no per-stage series"
		if len(b.Reasons) > 0 {
			why = b.Reasons[0]
		}
		out := make([]Result, len(rules))
		for i, name := range rules {
			out[i] = base
			out[i].Rule, out[i].Status, out[i].Observed, out[i].Detail = name, Skip, breakdownSkipped, why
		}
		return out
	}
	return []Result{stageCounts(base, b), hopCounts(base, b), partsWithin(base, b)}
}

// stagesOf is the stages of b in order, with their finished requests and
// the sum and count of their e2e over every replica.
func stagesOf(b breakdown.Breakdown) (order []string, requests, e2eSum, e2eCount map[string]float64) {
	requests, e2eSum, e2eCount = map[string]float64{}, map[string]float64{}, map[string]float64{}
	for _, r := range b.Stages {
		if _, seen := requests[r.Stage]; !seen {
			order = append(order, r.Stage)
		}
		requests[r.Stage] += r.Requests
		e2eSum[r.Stage] += r.E2E.Sum
		e2eCount[r.Stage] += r.E2E.Count
	}
	return order, requests, e2eSum, e2eCount
}

func stageCounts(res Result, b breakdown.Breakdown) Result {
	res.Rule = ruleStageCounts
	order, requests, _, _ := stagesOf(b)
	var list []string
	for _, st := range order {
		if math.Abs(requests[st]-b.Requests) >= 0.5 {
			list = append(list, fmt.Sprintf("stage %s finished %s requests, the pipeline %s",
				st, count(requests[st]), count(b.Requests)))
		}
	}
	res = problems(res, len(order), "stages", list)
	res.Expected = count(b.Requests) + " per stage (the pipeline's)"
	return res
}

func hopCounts(res Result, b breakdown.Breakdown) Result {
	res.Rule = ruleHops
	if len(b.Edges) == 0 {
		res.Status, res.Observed = Skip, "no transfer series"
		res.Detail = "the server exposes no transfer families (vllm:omni_transfer_*): older servers do not"
		return res
	}
	order, _, _, _ := stagesOf(b)
	hops := map[string]float64{}
	for _, e := range b.Edges {
		hops[e.FromStage] += e.Hops
	}
	var list []string
	for i, st := range order {
		switch {
		case i == len(order)-1 && hops[st] > 0:
			list = append(list, fmt.Sprintf("stage %s is the last but handed on %s hops", st, count(hops[st])))
		case i < len(order)-1 && hops[st] < b.Requests-0.5:
			list = append(list, fmt.Sprintf("stage %s handed on %s hops for %s requests: some requests did not "+
				"cross to stage %s", st, count(hops[st]), count(b.Requests), order[i+1]))
		}
	}
	res = problems(res, len(order), "stages", list)
	res.Expected = "at least one hop per request from every stage but the last, none from the last"
	return res
}

func partsWithin(res Result, b breakdown.Breakdown) Result {
	res.Rule = rulePartsWithin
	a := b.Attribution
	order, _, e2eSum, e2eCount := stagesOf(b)
	parts := 0.0
	for _, st := range order {
		if e2eCount[st] > 0 {
			parts += e2eSum[st] / e2eCount[st]
		}
	}
	for _, e := range b.Edges {
		parts += (e.Tx.Sum + e.InFlight.Sum + e.Rx.Sum) / b.Requests
	}
	res.Expected = fmt.Sprintf("<= %s s (the pipeline's mean e2e)", strconv.FormatFloat(a.ServerE2E, 'g', 4, 64))
	res.Observed = fmt.Sprintf("%s s (stage means and hops per request)", strconv.FormatFloat(parts, 'g', 4, 64))
	res.Tolerance = fmt.Sprintf("%s s", strconv.FormatFloat(a.Tolerance, 'g', 3, 64))
	res.Status = pass(finite(parts) && parts <= a.ServerE2E+a.Tolerance)
	if res.Status == Fail {
		res.Detail = "the server's stages and transfers take longer than its requests: a stage counts time " +
			"outside the request, or its clock differs from the pipeline's"
	}
	return res
}

// count formats a count that is a whole number in any sane exposition.
func count(v float64) string { return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) }

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
