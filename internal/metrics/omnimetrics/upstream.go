package omnimetrics

import (
	"strconv"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Upstream records the upstream vLLM per-engine families
// (docs/reference/metric-families.md, section 4.2) that vLLM-Omni relabels with {model_name, stage, replica}. Names keep the
// plain "vllm:" prefix whatever Options.Prefix is. Safe for concurrent use.
type Upstream struct {
	model string
	fam   [numUpstreamFamilies]vec
	sr    sync.Map // StageReplica -> *upstreamChildren
}

// materializedReasons are the finished_reason children created up front, as
// upstream vLLM creates one per FinishReason at start-up.
func materializedReasons() []string { return []string{"stop", "length", "abort"} }

// upstreamChildren are every series of one (stage, replica).
type upstreamChildren struct {
	labels                                             prometheus.Labels // model_name, stage, replica; read-only
	running, waiting, kvUsage                          prometheus.Gauge
	prompt, generation, preemptions, pcQueries, pcHits prometheus.Counter
	ttft, itl, tpot, e2e, queue, prefill, decode       prometheus.Observer
	success                                            sync.Map // finished_reason -> prometheus.Counter
}

func newUpstream(reg prometheus.Registerer, modelName string, topology []int, constLabels prometheus.Labels) (*Upstream, []declared, error) {
	u := &Upstream{model: modelName}
	decl := make([]declared, 0, numUpstreamFamilies)
	for i, spec := range upstreamTable() {
		v, d, err := register(reg, spec.Name, spec, constLabels)
		if err != nil {
			return nil, nil, err
		}
		u.fam[i] = v
		decl = append(decl, d)
	}
	// Materialise every (stage, replica) now, as upstream vLLM does per
	// engine at start-up, so a stats-on exposition is full-sized from the
	// first scrape.
	for stage, replicas := range topology {
		for r := range replicas {
			c := u.children(StageReplica{Stage: stage, Replica: r})
			for _, reason := range materializedReasons() {
				c.successCounter(u, reason)
			}
		}
	}
	return u, decl, nil
}

func (u *Upstream) children(sr StageReplica) *upstreamChildren {
	if c, ok := u.sr.Load(sr); ok {
		return c.(*upstreamChildren)
	}
	l := prometheus.Labels{
		LabelModelName: u.model,
		LabelStage:     strconv.Itoa(sr.Stage),
		LabelReplica:   strconv.Itoa(sr.Replica),
	}
	c := &upstreamChildren{
		labels:      l,
		running:     u.fam[upRunning].gauge.With(l),
		waiting:     u.fam[upWaiting].gauge.With(l),
		kvUsage:     u.fam[upKVCacheUsage].gauge.With(l),
		prompt:      u.fam[upPromptTokens].counter.With(l),
		generation:  u.fam[upGenerationTokens].counter.With(l),
		preemptions: u.fam[upPreemptions].counter.With(l),
		pcQueries:   u.fam[upPrefixCacheQueries].counter.With(l),
		pcHits:      u.fam[upPrefixCacheHits].counter.With(l),
		ttft:        u.fam[upTTFT].histogram.With(l),
		itl:         u.fam[upITL].histogram.With(l),
		tpot:        u.fam[upTPOT].histogram.With(l),
		e2e:         u.fam[upE2E].histogram.With(l),
		queue:       u.fam[upQueueTime].histogram.With(l),
		prefill:     u.fam[upPrefillTime].histogram.With(l),
		decode:      u.fam[upDecodeTime].histogram.With(l),
	}
	got, _ := u.sr.LoadOrStore(sr, c)
	return got.(*upstreamChildren)
}

func (c *upstreamChildren) successCounter(u *Upstream, reason string) prometheus.Counter {
	if s, ok := c.success.Load(reason); ok {
		return s.(prometheus.Counter)
	}
	l := prometheus.Labels{LabelFinishedReason: reason}
	for k, v := range c.labels {
		l[k] = v
	}
	s, _ := c.success.LoadOrStore(reason, u.fam[upRequestSuccess].counter.With(l))
	return s.(prometheus.Counter)
}

// ObserveRequest records one finished request on one (stage, replica) the
// way upstream vLLM does from its iteration stats: prompt and generation
// token counters, request_success_total{finished_reason}, TTFT, one
// inter-token latency observation per element of itlS, e2e, queue, prefill
// and decode time, and time per output token = decodeS / (genTok - 1), or 0
// when genTok <= 1 (the prefill token is not counted; vLLM observes the 0).
// An empty finishedReason means "stop"; negative token counts are ignored.
func (u *Upstream) ObserveRequest(sr StageReplica, ttftS, e2eS, queueS, prefillS, decodeS float64,
	promptTok, genTok int, itlS []float64, finishedReason string) {
	c := u.children(sr)
	if promptTok > 0 {
		c.prompt.Add(float64(promptTok))
	}
	if genTok > 0 {
		c.generation.Add(float64(genTok))
	}
	if finishedReason == "" {
		finishedReason = reasonStop
	}
	c.successCounter(u, finishedReason).Inc()
	c.ttft.Observe(ttftS)
	for _, d := range itlS {
		c.itl.Observe(d)
	}
	tpot := 0.0
	if genTok > 1 {
		tpot = decodeS / float64(genTok-1)
	}
	c.tpot.Observe(tpot)
	c.e2e.Observe(e2eS)
	c.queue.Observe(queueS)
	c.prefill.Observe(prefillS)
	c.decode.Observe(decodeS)
}

// SetScheduler sets the scheduler gauges of one (stage, replica):
// num_requests_running, num_requests_waiting and kv_cache_usage_perc (a
// fraction, 1 = full). Servers refresh them at most once a second.
func (u *Upstream) SetScheduler(sr StageReplica, running, waiting int, kvUsage float64) {
	c := u.children(sr)
	c.running.Set(float64(running))
	c.waiting.Set(float64(waiting))
	c.kvUsage.Set(kvUsage)
}

// PrefixCache adds to prefix_cache_queries_total and prefix_cache_hits_total
// (both in tokens). Negative counts are ignored.
func (u *Upstream) PrefixCache(sr StageReplica, queriedTokens, hitTokens int) {
	c := u.children(sr)
	if queriedTokens > 0 {
		c.pcQueries.Add(float64(queriedTokens))
	}
	if hitTokens > 0 {
		c.pcHits.Add(float64(hitTokens))
	}
}

// Preempted adds n to num_preemptions_total. Negative n is ignored.
func (u *Upstream) Preempted(sr StageReplica, n int) {
	if n > 0 {
		u.children(sr).preemptions.Add(float64(n))
	}
}
