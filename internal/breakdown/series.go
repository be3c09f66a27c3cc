package breakdown

import (
	"fmt"
	"time"

	"github.com/omnibench/omnibench/scrape"
)

// Canonical names (scrape.Canonical) of the families a breakdown reads. The
// pipeline families also match the vllm_omni: spelling, which scrape stores
// under these names; the upstream ones keep vLLM's own prefix.
const (
	famPipelineE2E     = "vllm:omni_e2e_request_latency_s"
	famPipelineTTFP    = "vllm:omni_audio_ttfp_s"
	famPipelineRunning = "vllm:omni_num_requests_running"
	famPipelineWaiting = "vllm:omni_num_requests_waiting"

	famTransferSize     = "vllm:omni_transfer_size_bytes"
	famTransferTx       = "vllm:omni_transfer_tx_s"
	famTransferRx       = "vllm:omni_transfer_rx_s"
	famTransferInFlight = "vllm:omni_transfer_in_flight_s"

	famStageE2E       = "vllm:e2e_request_latency_seconds"
	famStageQueue     = "vllm:request_queue_time_seconds"
	famStagePrefill   = "vllm:request_prefill_time_seconds"
	famStageDecode    = "vllm:request_decode_time_seconds"
	famStageTTFT      = "vllm:time_to_first_token_seconds"
	famStageITL       = "vllm:inter_token_latency_seconds"
	famStageGenTokens = "vllm:generation_tokens_total"
	famStageRunning   = "vllm:num_requests_running"
	famStageWaiting   = "vllm:num_requests_waiting"
	famStageKVUsage   = "vllm:kv_cache_usage_perc"
)

// Label names of the stage and edge families.
const (
	labelStage       = "stage"
	labelReplica     = "replica"
	labelFromStage   = "from_stage"
	labelFromReplica = "from_replica"
	labelToStage     = "to_stage"
	labelToReplica   = "to_replica"
)

// neededFamilies are the families Select keeps.
func neededFamilies() []string {
	return []string{
		famPipelineE2E, famPipelineTTFP, famPipelineRunning, famPipelineWaiting,
		famTransferSize, famTransferTx, famTransferRx, famTransferInFlight,
		famStageE2E, famStageQueue, famStagePrefill, famStageDecode, famStageTTFT, famStageITL,
		famStageGenTokens, famStageRunning, famStageWaiting, famStageKVUsage,
	}
}

// Series is what a breakdown keeps of one scrape: the time it was taken and
// the families it reads, nothing else of the exposition. Its size follows
// the server's topology (stages, replicas and edges), not the exposition's.
type Series struct {
	At       time.Time
	families scrape.Families
}

// Select keeps the families a breakdown reads from one parsed scrape taken
// at at. A family declared without samples (a server whose stats are off)
// is kept as declared, which is how Compute tells it from a missing one.
// The returned Series shares the series values with fs but holds nothing
// else of it: the decoded protobuf form is dropped.
func Select(fs scrape.Families, at time.Time) Series {
	kept := make(scrape.Families, len(neededFamilies()))
	for _, name := range neededFamilies() {
		f, ok := fs.Lookup(name)
		if !ok {
			continue
		}
		light := *f
		light.Raw = nil
		light.Help = ""
		kept[name] = &light
	}
	return Series{At: at, families: kept}
}

// FromSnapshot parses a snapshot and selects from it (see Select), timed
// by when the snapshot was fetched.
func FromSnapshot(s *scrape.Snapshot) (Series, error) {
	return fromParsed(s, s.Families)
}

// Filter keeps the families a breakdown reads (and the `_created`
// companions that date their series): the filter of the scrape.Selector
// that FromSelected takes.
func Filter() scrape.Filter { return scrape.Filter{Names: neededFamilies()} }

// FromSelected is FromSnapshot for the repeated scrapes of one server,
// decoded by sel (made with Filter): only the families a breakdown reads
// are decoded, and mostly only their values. Unlike FromSnapshot, it does
// not check the families it skips.
func FromSelected(sel *scrape.Selector, s *scrape.Snapshot) (Series, error) {
	return fromParsed(s, func() (scrape.Families, error) { return sel.Select(s) })
}

// fromParsed selects from what parse decodes of s.
func fromParsed(s *scrape.Snapshot, parse func() (scrape.Families, error)) (Series, error) {
	fs, err := parse()
	if err != nil {
		return Series{}, fmt.Errorf("breakdown of %s: %w", s.Source(), err)
	}
	return Select(fs, s.FetchedAt), nil
}

// Empty reports whether the scrape held none of the families a breakdown
// reads.
func (s Series) Empty() bool { return len(s.families) == 0 }
