package breakdown

import (
	"fmt"
	"math"
	"strings"

	"github.com/omnibench/omnibench/scrape"
)

// ClientFigures are the client's own means over the requests it finished
// between the two scrapes, in seconds. The zero value means there are none:
// the attribution then stops at the server.
type ClientFigures struct {
	// Requests is how many requests the client finished successfully
	// between the scrapes: the server's count must match it for the client's
	// and the server's means to be over the same requests.
	Requests int
	// MeanE2E is the client's mean end-to-end latency, measured from when
	// the request was sent (not from its intended start: the client's
	// scheduling lag is not the server's to explain).
	MeanE2E float64
	// MeanTTFP is the client's mean time to the first audio packet; 0 or
	// NaN when unknown.
	MeanTTFP float64
	// MeanQueue and MeanStampDelay are the parts of the client's side the
	// client measured itself (its wait for a connection, the delay of its
	// send stamps); 0 or NaN when unknown.
	MeanQueue      float64
	MeanStampDelay float64
}

// Attribution splits the listener's mean latency over the run's requests:
// the server's pipeline e2e into the stages' time, the transfers' time
// (sender, in flight, receiver) and the rest (queueing outside the stages,
// orchestration), and the client's e2e into the server's and the remainder
// (the network, the client's own queue and stamp delay). Every part is a
// mean over the pipeline's requests (a sum increase divided by the
// pipeline's count), so where the server's figures are consistent the parts
// add up exactly:
//
//	ClientE2E = StageTime + TransferTime + Rest + ClientRemainder
//
// When they are not (Consistent false), Reasons say why and the split's
// figures are NaN rather than a number that misleads.
type Attribution struct {
	Requests       float64 `json:"requests"`
	ClientRequests int     `json:"client_requests"`

	ClientE2E          float64 `json:"client_e2e_s"`
	ClientTTFP         float64 `json:"client_ttfp_s"`
	ServerE2E          float64 `json:"server_e2e_s"`
	ServerTTFP         float64 `json:"server_ttfp_s"`
	ServerTTFPRequests float64 `json:"server_ttfp_requests"`

	Stages          []StagePart `json:"stages"`
	StageTime       float64     `json:"stage_s"`
	TransferTime    float64     `json:"transfer_s"`
	Rest            float64     `json:"rest_s"`
	ClientRemainder float64     `json:"client_remainder_s"`
	// The parts of the remainder the client measured itself.
	ClientQueue      float64 `json:"client_queue_s"`
	ClientStampDelay float64 `json:"client_stamp_delay_s"`

	// Tolerance is how far below zero Rest or ClientRemainder may fall
	// before the parts are called inconsistent (float residue, and the
	// few microseconds between a server's clocks).
	Tolerance  float64  `json:"tolerance_s"`
	Consistent bool     `json:"consistent"`
	Reasons    []string `json:"reasons,omitempty"`
}

// StagePart is one stage's mean time per pipeline request.
type StagePart struct {
	Stage   string  `json:"stage"`
	Seconds float64 `json:"seconds"`
}

// Tolerances of the attribution: a part may be negative by the larger of
// these before the split is called inconsistent.
const (
	toleranceAbs      = 1e-3 // seconds
	toleranceRelative = 0.01 // of the server's mean e2e
)

// notAttributed is the attribution when nothing could be computed.
func notAttributed(client ClientFigures, reasons []string) Attribution {
	a := emptyAttribution(client)
	a.Reasons = reasons
	return a
}

// emptyAttribution has the client's figures and NaN everywhere else.
func emptyAttribution(client ClientFigures) Attribution {
	nan := math.NaN()
	a := Attribution{ClientRequests: client.Requests, ClientE2E: nan, ClientTTFP: nan,
		ServerE2E: nan, ServerTTFP: nan, Stages: []StagePart{}, StageTime: nan, TransferTime: nan,
		Rest: nan, ClientRemainder: nan, ClientQueue: nan, ClientStampDelay: nan, Tolerance: nan}
	if client.Requests > 0 {
		a.ClientE2E = client.MeanE2E
		a.ClientTTFP = known(client.MeanTTFP)
		a.ClientQueue = known(client.MeanQueue)
		a.ClientStampDelay = known(client.MeanStampDelay)
	}
	return a
}

// known turns the zero value of an optional figure into NaN.
func known(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

// attribute splits the latency of the b.Requests pipeline requests.
func attribute(d *scrape.Delta, b Breakdown, client ClientFigures) Attribution {
	a := emptyAttribution(client)
	n := b.Requests
	e2e, _ := d.HistogramDelta(famPipelineE2E, nil)
	a.Requests, a.ServerE2E = n, e2e.Sum/n
	if ttfp, ok := d.HistogramDelta(famPipelineTTFP, nil); ok && ttfp.Count > 0 {
		a.ServerTTFP, a.ServerTTFPRequests = ttfp.Sum/ttfp.Count, ttfp.Count
	}
	a.Tolerance = max(toleranceAbs, toleranceRelative*a.ServerE2E)

	var reasons []string
	stages, stageReasons := stageParts(d, b.Stages, n)
	reasons = append(reasons, stageReasons...)
	transfer, transferReason := transferTime(d, b.Edges, len(stages), n)
	if transferReason != "" {
		reasons = append(reasons, transferReason)
	}
	var stageTime float64
	for _, p := range stages {
		stageTime += p.Seconds
	}
	rest := a.ServerE2E - stageTime - transfer
	if len(reasons) == 0 && !finite(rest) {
		reasons = append(reasons, "the server's sums are not finite numbers (NaN or infinite): its figures cannot be split")
	}
	if len(reasons) == 0 && rest < -a.Tolerance {
		reasons = append(reasons, fmt.Sprintf("the stages and transfers take %s more than the pipeline's e2e "+
			"per request: they overlap in time (stages that stream to each other work concurrently), so the "+
			"e2e cannot be split into sequential parts", seconds(-rest)))
	}
	remainder := math.NaN()
	if client.Requests > 0 {
		remainder = client.MeanE2E - a.ServerE2E
		reasons = append(reasons, clientReasons(client, n, remainder, a.Tolerance)...)
	}
	if len(reasons) > 0 {
		a.Reasons = reasons
		return a
	}
	a.Consistent = true
	a.Stages, a.StageTime, a.TransferTime, a.Rest, a.ClientRemainder = stages, stageTime, transfer, rest, remainder
	return a
}

// stageParts is each stage's e2e sum over the pipeline's requests, with a
// reason for every stage that did not count the same requests.
func stageParts(d *scrape.Delta, rows []StageRow, n float64) ([]StagePart, []string) {
	if _, ok := d.Family(famStageE2E); !ok || len(rows) == 0 {
		return nil, []string{"the server exposes no per-stage e2e histogram (vllm:e2e_request_latency_seconds " +
			"with stage and replica labels): the pipeline's time cannot be split into stages"}
	}
	var parts []StagePart
	var reasons []string
	sum, count := map[string]float64{}, map[string]float64{}
	for _, r := range rows {
		if _, seen := sum[r.Stage]; !seen {
			parts = append(parts, StagePart{Stage: r.Stage})
		}
		sum[r.Stage] += r.E2E.Sum
		count[r.Stage] += r.E2E.Count
	}
	for i := range parts {
		st := parts[i].Stage
		parts[i].Seconds = sum[st] / n
		if math.Abs(count[st]-n) >= 0.5 {
			reasons = append(reasons, fmt.Sprintf("stage %s finished %s requests, the pipeline %s: the stage's "+
				"time is not over the same requests", st, formatCount(count[st]), formatCount(n)))
		}
	}
	return parts, reasons
}

// transferTime is the hops' time (sender, in flight, receiver) over the
// pipeline's requests, or why it is unknown.
func transferTime(d *scrape.Delta, edges []EdgeRow, stages int, n float64) (float64, string) {
	_, txOK := d.Family(famTransferTx)
	_, rxOK := d.Family(famTransferRx)
	_, flightOK := d.Family(famTransferInFlight)
	if !txOK || !rxOK || !flightOK {
		if stages <= 1 {
			return 0, "" // one stage hands nothing on
		}
		return math.NaN(), "the server exposes no transfer histograms (vllm:omni_transfer_tx_s, _rx_s, " +
			"_in_flight_s): the time between its stages cannot be told from the stages' own"
	}
	var sum float64
	for _, e := range edges {
		sum += e.Tx.Sum + e.InFlight.Sum + e.Rx.Sum
	}
	return sum / n, ""
}

// clientReasons says why the client's figures cannot be set beside the
// server's, if so.
func clientReasons(client ClientFigures, n, remainder, tolerance float64) []string {
	var reasons []string
	if math.Abs(float64(client.Requests)-n) >= 0.5 {
		reasons = append(reasons, fmt.Sprintf("the server finished %s requests between the scrapes, the client %d: "+
			"their means are not over the same requests", formatCount(n), client.Requests))
	}
	if math.IsNaN(remainder) || remainder < -tolerance {
		reasons = append(reasons, fmt.Sprintf("the client's mean e2e is %s below the server's: the client measured "+
			"other requests, or from another moment than the server", seconds(-remainder)))
	}
	return reasons
}

// finite reports whether v is neither NaN nor infinite.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// seconds formats a duration in seconds for a reason.
func seconds(s float64) string {
	switch {
	case math.IsNaN(s):
		return "an unknown time"
	case math.Abs(s) < 1:
		return fmt.Sprintf("%.1f ms", s*1e3)
	}
	return fmt.Sprintf("%.3f s", s)
}

// formatCount formats a count that is a whole number in any sane exposition.
func formatCount(v float64) string {
	return strings.TrimSuffix(fmt.Sprintf("%.1f", v), ".0")
}
