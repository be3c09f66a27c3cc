package omnimetrics

// Metric prefixes. vllm_omni:X and vllm:omni_X name the same family
// (docs/reference/metric-families.md, section 1); the original metrics
// design's form is the default.
const (
	PrefixDesign  = "vllm:omni_" // the original metrics design and upstream's docs
	PrefixCurrent = "vllm_omni:" // servers since mid-2026
	PrefixClient  = "omnibench:" // omnibench's client-side exporter
)

// upstreamPrefix is the prefix of the upstream vLLM per-engine families; it
// does not follow Options.Prefix (docs/reference/metric-families.md,
// section 1).
const upstreamPrefix = "vllm:"

// Family types, as written in FamilySpec.Type and on # TYPE lines.
const (
	TypeCounter   = "counter"
	TypeGauge     = "gauge"
	TypeHistogram = "histogram"
)

// Label names used by the families.
const (
	LabelModelName      = "model_name"
	LabelStage          = "stage"
	LabelReplica        = "replica"
	LabelFinishedReason = "finished_reason"
	LabelThresholdMS    = "threshold_ms"
	LabelReason         = "reason"
	LabelFromStage      = "from_stage"
	LabelFromReplica    = "from_replica"
	LabelToStage        = "to_stage"
	LabelToReplica      = "to_replica"
)

// FamilySpec describes one metric family.
type FamilySpec struct {
	// Name is the family name without the prefix for pipeline families
	// (e.g. "audio_ttfp_s") and the full name for upstream families
	// (e.g. "vllm:time_to_first_token_seconds"). Counters carry "_total"
	// themselves: the Go client never appends it.
	Name    string
	Type    string // TypeCounter, TypeGauge or TypeHistogram
	Help    string
	Labels  []string  // variable label names, in the order the code resolves them
	Buckets []float64 // upper bounds for histograms (the exposition adds +Inf); nil otherwise
}

// SecondsBuckets is SECONDS: e2e latency, TTFP and audio duration.
func SecondsBuckets() []float64 {
	return []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300}
}

// SecondsFastBuckets is SECONDS_FAST: transfer times and audio underrun,
// which need millisecond resolution.
func SecondsFastBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60}
}

// RTFBuckets is RTF: the real-time factor, whose SLO line is 1.
func RTFBuckets() []float64 {
	return []float64{0.1, 0.25, 0.5, 0.75, 0.9, 1, 1.25, 1.5, 2, 5, 10}
}

// BytesBuckets is BYTES: cross-stage transfer payload sizes (1 KiB to 256 MiB).
func BytesBuckets() []float64 {
	return []float64{1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864, 268435456}
}

// ttftBuckets are upstream vLLM's time_to_first_token_seconds buckets.
func ttftBuckets() []float64 {
	return []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5,
		7.5, 10, 20, 40, 80, 160, 640, 2560}
}

// tokenLatencyBuckets are upstream vLLM's buckets for inter-token latency and
// time per output token.
func tokenLatencyBuckets() []float64 {
	return []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1,
		2.5, 5, 7.5, 10, 20, 40, 80}
}

// requestLatencyBuckets are upstream vLLM's buckets for e2e, queue, prefill
// and decode time.
func requestLatencyBuckets() []float64 {
	return []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20,
		30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
}

// Label sets. Functions, not variables, so no caller can alias and mutate them.
func modelLabels() []string { return []string{LabelModelName} }
func stageLabels() []string { return []string{LabelModelName, LabelStage, LabelReplica} }
func edgeLabels() []string {
	return []string{LabelModelName, LabelFromStage, LabelFromReplica, LabelToStage, LabelToReplica}
}
func withLabel(base []string, extra string) []string { return append(base, extra) }

// pipelineFamily indexes the pipeline table; the code reaches a family's
// collector through its index, never through a second copy of its name.
type pipelineFamily int

const (
	famRunning pipelineFamily = iota
	famWaiting
	famRequestsSuccess
	famE2E
	famPromptTokens
	famGenerationTokens
	famAudioTTFP
	famAudioDuration
	famAudioRTF
	famAudioFrames
	famAudioUnderrun
	famAudioContinuityOK
	famAudioSkipped
	famTransferSize
	famTransferTx
	famTransferRx
	famTransferInFlight
	numPipelineFamilies
)

// pipelineTable is the single definition of the pipeline families
// (docs/reference/metric-families.md, section 3). HELP texts are the
// original metrics design's descriptions; the two token counters, which that
// design predates, describe what newer servers count.
func pipelineTable() [numPipelineFamilies]FamilySpec {
	return [numPipelineFamilies]FamilySpec{
		famRunning: {Name: "num_requests_running", Type: TypeGauge, Labels: modelLabels(),
			Help: "Requests currently executing across all stages"},
		famWaiting: {Name: "num_requests_waiting", Type: TypeGauge, Labels: modelLabels(),
			Help: "Requests queued but not yet scheduled"},
		famRequestsSuccess: {Name: "requests_success_total", Type: TypeCounter,
			Labels: withLabel(modelLabels(), LabelFinishedReason),
			Help: "Total requests by completion reason ({stop, length, abort, ...}); aborts cover " +
				"client-disconnect / cancellation paths in addition to upstream FinishReason.ABORT"},
		famE2E: {Name: "e2e_request_latency_s", Type: TypeHistogram, Labels: modelLabels(),
			Buckets: SecondsBuckets(),
			Help:    "Pipeline-global end-to-end latency in seconds"},
		famPromptTokens: {Name: "prompt_tokens_total", Type: TypeCounter, Labels: modelLabels(),
			Help: "Prompt tokens processed (stage 0)"},
		famGenerationTokens: {Name: "generation_tokens_total", Type: TypeCounter, Labels: modelLabels(),
			Help: "Generation tokens produced, summed over all stages"},
		famAudioTTFP: {Name: "audio_ttfp_s", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: SecondsBuckets(),
			Help:    "Time from request arrival to first audio packet/frame"},
		famAudioDuration: {Name: "audio_duration_s", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: SecondsBuckets(),
			Help:    "Audio content duration (audio_frames / sample_rate)"},
		famAudioRTF: {Name: "audio_rtf", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: RTFBuckets(),
			Help:    "Real-time factor stage_gen_time_s / audio_duration_s (SLO < 1); uses RTF_BUCKETS"},
		famAudioFrames: {Name: "audio_frames_total", Type: TypeCounter, Labels: stageLabels(),
			Help: "Cumulative audio frames generated"},
		famAudioUnderrun: {Name: "audio_underrun_s", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: SecondsFastBuckets(),
			Help:    "Per-request worst-case player deficit; > 0 indicates listener heard silent gaps"},
		famAudioContinuityOK: {Name: "audio_continuity_ok_total", Type: TypeCounter,
			Labels: withLabel(stageLabels(), LabelThresholdMS),
			Help:   "Incremented when the request's worst underrun stayed below threshold_ms"},
		famAudioSkipped: {Name: "audio_skipped_requests_total", Type: TypeCounter,
			Labels: withLabel(stageLabels(), LabelReason),
			Help: "Silent-loss counter — code2wav rejected malformed codec input and returned " +
				"200 OK with empty audio"},
		famTransferSize: {Name: "transfer_size_bytes", Type: TypeHistogram, Labels: edgeLabels(),
			Buckets: BytesBuckets(),
			Help:    "Per-transfer payload size in bytes"},
		famTransferTx: {Name: "transfer_tx_s", Type: TypeHistogram, Labels: edgeLabels(),
			Buckets: SecondsFastBuckets(),
			Help:    "Sender-side time (serialize + submit to connector)"},
		famTransferRx: {Name: "transfer_rx_s", Type: TypeHistogram, Labels: edgeLabels(),
			Buckets: SecondsFastBuckets(),
			Help:    "Receiver-side time (recv + deserialize)"},
		famTransferInFlight: {Name: "transfer_in_flight_s", Type: TypeHistogram, Labels: edgeLabels(),
			Buckets: SecondsFastBuckets(),
			Help:    "Network in-flight time (TX done → RX recv start)"},
	}
}

// PipelineFamilies returns the pipeline, audio and transfer families of
// docs/reference/metric-families.md, section 3 (names without prefix). The result is a fresh copy.
func PipelineFamilies() []FamilySpec {
	t := pipelineTable()
	return t[:]
}

// SpeechStreamStem is how the names of the speech-stream families begin
// after the prefix. Servers since September 2026 count completed and aborted
// /v1/audio/speech streams in families named so; their full names and reason
// values were never published, so SpeechStreamFamilies holds the simulator's
// guess, and a checker should accept any family that begins with the stem.
const SpeechStreamStem = "speech_st"

// Names (without prefix) of the speech-stream counters in
// SpeechStreamFamilies: the simulator's guess.
const (
	SpeechStreamCompletedFamily = "speech_stream_completed_total"
	SpeechStreamAbortedFamily   = "speech_stream_aborted_total"
)

// Reasons of speech_stream_aborted_total (the simulator's guess at the
// server's bounded reason label).
const (
	SpeechAbortClientGone = "client_disconnect" // the client went away mid-stream
	SpeechAbortError      = "error"             // generation failed mid-stream
)

// speechStreamFamily indexes the speech-stream table.
type speechStreamFamily int

const (
	speechCompleted speechStreamFamily = iota
	speechAborted
	numSpeechStreamFamilies
)

// speechStreamTable is the single definition of the speech-stream counters
// (names without prefix). The names are the simulator's guess: see
// SpeechStreamStem.
func speechStreamTable() [numSpeechStreamFamilies]FamilySpec {
	return [numSpeechStreamFamilies]FamilySpec{
		speechCompleted: {Name: SpeechStreamCompletedFamily, Type: TypeCounter, Labels: modelLabels(),
			Help: "Speech streams (raw, SSE and WebSocket /v1/audio/speech) that completed normally"},
		speechAborted: {Name: SpeechStreamAbortedFamily, Type: TypeCounter,
			Labels: withLabel(modelLabels(), LabelReason),
			Help:   "Speech streams that ended before completing, by reason (client_disconnect, error)"},
	}
}

// SpeechStreamFamilies returns the speech-stream counters of servers since
// September 2026 under the simulator's guessed names (names without
// prefix). Metrics registers them only with Options.SpeechStreams. The
// result is a fresh copy.
func SpeechStreamFamilies() []FamilySpec {
	t := speechStreamTable()
	return t[:]
}

// upstreamFamily indexes the upstream table.
type upstreamFamily int

const (
	upRunning upstreamFamily = iota
	upWaiting
	upKVCacheUsage
	upPromptTokens
	upGenerationTokens
	upRequestSuccess
	upPreemptions
	upPrefixCacheQueries
	upPrefixCacheHits
	upTTFT
	upITL
	upTPOT
	upE2E
	upQueueTime
	upPrefillTime
	upDecodeTime
	numUpstreamFamilies
)

// upstreamTable is the single definition of the upstream vllm:* subset of
// docs/reference/metric-families.md, section 4.2, with vLLM's engine label replaced by stage and replica.
// HELP texts are upstream vLLM's.
func upstreamTable() [numUpstreamFamilies]FamilySpec {
	p := upstreamPrefix
	return [numUpstreamFamilies]FamilySpec{
		upRunning: {Name: p + "num_requests_running", Type: TypeGauge, Labels: stageLabels(),
			Help: "Number of requests in model execution batches."},
		upWaiting: {Name: p + "num_requests_waiting", Type: TypeGauge, Labels: stageLabels(),
			Help: "Number of requests waiting to be processed."},
		upKVCacheUsage: {Name: p + "kv_cache_usage_perc", Type: TypeGauge, Labels: stageLabels(),
			Help: "KV-cache usage. 1 means 100 percent usage."},
		upPromptTokens: {Name: p + "prompt_tokens_total", Type: TypeCounter, Labels: stageLabels(),
			Help: "Number of prefill tokens processed."},
		upGenerationTokens: {Name: p + "generation_tokens_total", Type: TypeCounter, Labels: stageLabels(),
			Help: "Number of generation tokens processed."},
		upRequestSuccess: {Name: p + "request_success_total", Type: TypeCounter,
			Labels: withLabel(stageLabels(), LabelFinishedReason),
			Help:   "Count of successfully processed requests."},
		upPreemptions: {Name: p + "num_preemptions_total", Type: TypeCounter, Labels: stageLabels(),
			Help: "Cumulative number of preemption from the engine."},
		upPrefixCacheQueries: {Name: p + "prefix_cache_queries_total", Type: TypeCounter, Labels: stageLabels(),
			Help: "Prefix cache queries, in terms of number of queried tokens."},
		upPrefixCacheHits: {Name: p + "prefix_cache_hits_total", Type: TypeCounter, Labels: stageLabels(),
			Help: "Prefix cache hits, in terms of number of cached tokens."},
		upTTFT: {Name: p + "time_to_first_token_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: ttftBuckets(),
			Help:    "Histogram of time to first token in seconds."},
		upITL: {Name: p + "inter_token_latency_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: tokenLatencyBuckets(),
			Help:    "Histogram of inter-token latency in seconds."},
		upTPOT: {Name: p + "request_time_per_output_token_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: tokenLatencyBuckets(),
			Help:    "Histogram of time_per_output_token_seconds per request."},
		upE2E: {Name: p + "e2e_request_latency_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: requestLatencyBuckets(),
			Help:    "Histogram of e2e request latency in seconds."},
		upQueueTime: {Name: p + "request_queue_time_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: requestLatencyBuckets(),
			Help:    "Histogram of time spent in WAITING phase for request."},
		upPrefillTime: {Name: p + "request_prefill_time_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: requestLatencyBuckets(),
			Help:    "Histogram of time spent in PREFILL phase for request."},
		upDecodeTime: {Name: p + "request_decode_time_seconds", Type: TypeHistogram, Labels: stageLabels(),
			Buckets: requestLatencyBuckets(),
			Help:    "Histogram of time spent in DECODE phase for request."},
	}
}

// UpstreamFamilies returns the upstream vllm:* stage/replica families of
// docs/reference/metric-families.md, section 4.2 (full names). The result is a fresh copy.
func UpstreamFamilies() []FamilySpec {
	t := upstreamTable()
	return t[:]
}

// LongStandingUpstreamFamilies returns the upstream families that every
// vLLM release has registered for years (TTFT, e2e latency, running and
// waiting requests, KV-cache usage, the token counters): the ones a checker
// can require of a server with LLM stages and stats on. Which of the others
// newer vLLM releases register is not known. The result is a fresh copy.
func LongStandingUpstreamFamilies() []FamilySpec {
	t := upstreamTable()
	var out []FamilySpec
	for _, i := range []upstreamFamily{upRunning, upWaiting, upKVCacheUsage, upPromptTokens, upGenerationTokens, upTTFT, upE2E} {
		out = append(out, t[i])
	}
	return out
}

// DiffusionFamilies returns the diffusion-stage families of newer servers
// (docs/reference/metric-families.md, section 5; names without prefix), histograms with model_name,
// stage and replica observed at finalize when a diffusion stage reports
// metrics. Metrics does not register them (the simulator has no diffusion
// stage); the vllm-omni check profile knows them as optional. Only the HELP
// of diffusion_exec_s is upstream's wording; the others describe the value.
// The result is a fresh copy.
func DiffusionFamilies() []FamilySpec {
	return []FamilySpec{
		{Name: "diffusion_exec_s", Type: TypeHistogram, Labels: stageLabels(), Buckets: SecondsBuckets(),
			Help: "DiT forward pass execution time per request"},
		{Name: "diffusion_exec_per_step_s", Type: TypeHistogram, Labels: stageLabels(), Buckets: SecondsFastBuckets(),
			Help: "DiT forward pass execution time per denoising step"},
		{Name: "diffusion_preprocess_s", Type: TypeHistogram, Labels: stageLabels(), Buckets: SecondsFastBuckets(),
			Help: "Diffusion preprocessing time per request"},
		{Name: "diffusion_postprocess_s", Type: TypeHistogram, Labels: stageLabels(), Buckets: SecondsFastBuckets(),
			Help: "Diffusion postprocessing time per request"},
	}
}
