package summary

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/omnibench/omnibench/internal/run/results"
)

// A Set holds the finished requests of a run in compact form: per request
// only the figures that the summary, the SLO verdicts, the checks and the
// HTML charts read (a Sample, under 200 bytes), with the per-event values
// (text gaps, stamp delays) pooled and capped, and the failures grouped by
// message as they come. The runner keeps a Set instead of the records, so a
// day-long soak holds a bounded amount per request while the full records go
// to the results file as they complete; readers of a results file build one
// with SetOf, so there is one computation of every figure.
//
// The figures from a Set are exactly those of the records, except past the
// caps below, where a warning of the summary says what changed.
type Set struct {
	blocks [][]Sample // fixed-size blocks after the first (see Add): no doubling slack as the run grows

	// Interned strings: kinds, error classes and finish reasons (a Sample
	// holds their index). Past maxInterned distinct values of one table the
	// rest share the last index, named otherString, and a warning says so.
	kinds, classes, finishes tableOf
	// labels are the continuity thresholds ("100") the records' results
	// name; a Sample holds a bit per label.
	labels tableOf

	gaps, stamps pool

	errors       map[errorKey]*errorCount
	errorOrder   []errorKey // first appearance, which orders the error set's ties
	errorsUnkept [2]int     // failures past maxErrorKeys distinct messages, [steady, ramp]

	// Run-wide aggregates the checks read (over every record, warm-up and
	// ramp included, as check.FiguresFromRecords always did).
	Totals Totals

	kindsSeen, modelsSeen []string // first appearance order (report.Workload)
	realtime              []RealtimeTurn

	// qualities are the signal checks and transcription scores by sample
	// index (quality.go), kept apart so that a run without them spends
	// nothing per sample; empty until the first one.
	qualities   []quality
	defectNames []string   // audio defect reasons, by quality bit
	asr         *ASRCounts // a live run's transcription queue counts
}

// Totals are the aggregates over every record of a Set, in the terms the
// server counts: a response that ended normally (results.Record.Delivered)
// is a completed request there even when the client failed it for carrying
// no audio, so CompletedTotal and Completed count it, and Failed too.
type Totals struct {
	Requests, Failed, CompletedTotal int
	PromptTokens, CompletionTokens   int
	ChatAudioResponses               int
	TTFPSumS                         float64
	AudioFrames                      int64
	Completed                        map[string]int // finish reason ("stop" when none), "abort" for failures
	Continuous                       map[string]int // chat-path responses continuous at each label

	// The same for speech streams (results.SpeechStreamKind), which only
	// servers since September 2026 count in their audio families, and the
	// successful speech streams.
	SpeechStreams, SpeechCompleted int
	SpeechTTFPSumS                 float64
	SpeechContinuous               map[string]int
}

// RealtimeTurn is what the realtime bench block reads of one realtime turn.
type RealtimeTurn struct {
	Session    int
	Warmup, OK bool
	Bench      *results.WSBench
}

// Sample is the compact form of one finished request.
type Sample struct {
	SentS, E2ES, LagS, QueueS                    float64
	TTFPS, TTFTS, FirstAudioEventS, TTFAAudibleS float64
	LeadingSilenceS, RTFServer                   float64 // with flagSilence, flagRTFServer
	AudioDurationS, RTFLastChunk, RTFE2E         float64
	InputAudioS                                  float64
	MaxUnderrunS                                 float64 // with flagContinuity
	StallTotalS, StallLongestS, PrerollStartupS  float64 // with flagStallResume, flagPreroll
	MaxTextGapS                                  float64 // the largest text gap (goodput's itl)
	AudioFrames, InputAudioBytes                 int64
	Stalls                                       int32 // stall-and-resume stalls
	Status                                       int16
	known, ok                                    uint16 // continuity labels: result given, continuous
	flags                                        uint16
	kind, class, finish                          uint8
}

const (
	flagWarmup = 1 << iota
	flagRamp
	flagIntended
	flagAudio
	flagContinuity
	flagStallResume
	flagPreroll
	flagPrerollStalled
	flagSilence
	flagRTFServer
)

const (
	blockSize = 4096
	// maxInterned bounds each string table; maxLabels the continuity
	// labels a Sample has bits for.
	maxInterned = 255
	maxLabels   = 16
	otherString = "(other)"
	// DefaultMaxEventValues caps each pooled per-event distribution (text
	// gaps, stamp delays): up to it every value is kept and the figures are
	// exact; past it the pool is a uniform sample (reservoir) of all the
	// values, and the summary warns.
	DefaultMaxEventValues = 1 << 19
	// maxErrorKeys bounds the distinct (class, status, message) groups
	// counted; failures past it are counted as left out of the error set.
	maxErrorKeys = 10_000
)

// NewSet returns an empty Set.
func NewSet() *Set {
	return &Set{
		gaps:   pool{max: DefaultMaxEventValues, rng: rand.New(rand.NewPCG(1, 2))},
		stamps: pool{max: DefaultMaxEventValues, rng: rand.New(rand.NewPCG(3, 4))},
		errors: map[errorKey]*errorCount{},
		Totals: Totals{Completed: map[string]int{}, Continuous: map[string]int{}, SpeechContinuous: map[string]int{}},
	}
}

// SetOf builds the Set of recs (a results file's records).
func SetOf(recs []results.Record) *Set {
	s := NewSet()
	for i := range recs {
		s.Add(&recs[i])
	}
	return s
}

// Len is the number of requests added.
func (s *Set) Len() int {
	if len(s.blocks) == 0 {
		return 0
	}
	return (len(s.blocks)-1)*blockSize + len(s.blocks[len(s.blocks)-1])
}

// All calls f for every sample in the order added.
func (s *Set) All(f func(*Sample)) {
	for _, b := range s.blocks {
		for i := range b {
			f(&b[i])
		}
	}
}

// Add takes one finished request; r is not kept.
func (s *Set) Add(r *results.Record) {
	x := Sample{
		SentS: r.SentS, E2ES: r.E2ES, LagS: r.LagS, QueueS: r.QueueS,
		TTFPS: r.TTFPS, TTFTS: r.TTFTS, FirstAudioEventS: r.FirstAudioEventS, TTFAAudibleS: r.TTFAAudibleS,
		AudioDurationS: r.AudioDurationS, RTFLastChunk: r.RTFLastChunk, RTFE2E: r.RTFE2E,
		InputAudioS: r.InputAudioS, AudioFrames: r.AudioFrames, InputAudioBytes: r.InputAudioBytes,
		Status: int16(min(max(r.Status, math.MinInt16), math.MaxInt16)),
		kind:   s.kinds.index(r.Kind), class: s.classes.index(r.ErrorClass), finish: s.finishes.index(r.FinishReason),
	}
	ramp := r.Phase == "ramp"
	set := func(f uint16, on bool) {
		if on {
			x.flags |= f
		}
	}
	set(flagWarmup, r.Warmup)
	set(flagRamp, ramp)
	set(flagIntended, r.Origin() == results.OriginIntended)
	set(flagAudio, r.HasAudio())
	if r.LeadingSilenceS != nil {
		x.flags |= flagSilence
		x.LeadingSilenceS = *r.LeadingSilenceS
	}
	if r.RTFServer != nil {
		x.flags |= flagRTFServer
		x.RTFServer = *r.RTFServer
	}
	for _, g := range r.TextGapsS {
		x.MaxTextGapS = max(x.MaxTextGapS, g)
	}
	if c := r.Continuity; c != nil {
		x.flags |= flagContinuity
		x.MaxUnderrunS = c.MaxUnderrunS
		for l, ok := range c.OK {
			j := s.labels.index(l)
			if int(j) >= maxLabels {
				continue // past the bits: judged from the underrun (Summary warns)
			}
			x.known |= 1 << j
			if ok {
				x.ok |= 1 << j
			}
		}
		if p := c.StallResume; p != nil {
			x.flags |= flagStallResume
			x.Stalls = int32(min(p.Stalls, math.MaxInt32))
			x.StallTotalS, x.StallLongestS = p.TotalStallS, p.LongestStallS
		}
		if p := c.Preroll; p != nil {
			x.flags |= flagPreroll
			set(flagPrerollStalled, p.Stalls > 0)
			x.PrerollStartupS = p.StartupDelayS
		}
	}
	if !r.Warmup {
		for _, d := range r.StampDelaysS {
			s.stamps.add(d, ramp)
		}
		if r.OK() {
			for _, g := range r.TextGapsS {
				s.gaps.add(g, ramp)
			}
		} else {
			s.addError(r, ramp)
		}
	}
	if k := r.Kind; k != "" && !contains(s.kindsSeen, k) {
		s.kindsSeen = append(s.kindsSeen, k)
	}
	if m := r.Model; m != "" && !contains(s.modelsSeen, m) && len(s.modelsSeen) < maxInterned {
		s.modelsSeen = append(s.modelsSeen, m)
	}
	if r.Kind == results.KindRealtime && r.WS != nil {
		s.realtime = append(s.realtime, RealtimeTurn{Session: r.WS.Session, Warmup: r.Warmup, OK: r.OK(), Bench: r.WS.Bench})
	}
	s.total(r)
	s.addQuality(s.Len(), r)
	if n := len(s.blocks); n == 0 || len(s.blocks[n-1]) == blockSize {
		var b []Sample
		if n > 0 {
			b = make([]Sample, 0, blockSize)
		}
		s.blocks = append(s.blocks, b)
	}
	// The first block grows by appending, so that the first records do not
	// allocate a whole block (about 700 KB) while the run's other streams
	// are still receiving; later blocks are allocated whole.
	s.blocks[len(s.blocks)-1] = append(s.blocks[len(s.blocks)-1], x)
}

// total adds r to the run-wide aggregates.
func (s *Set) total(r *results.Record) {
	t := &s.Totals
	t.Requests++
	t.PromptTokens += r.PromptTokens
	t.CompletionTokens += r.CompletionTokens
	speech := results.SpeechStreamKind(r.Kind)
	switch {
	case r.TTFPS <= 0:
	case r.ChatPath():
		t.ChatAudioResponses++
		t.TTFPSumS += r.TTFPS
	case speech:
		t.SpeechStreams++
		t.SpeechTTFPSumS += r.TTFPS
	}
	if !r.OK() {
		t.Failed++
	}
	if !r.Delivered() {
		if (r.Status >= 200 && r.Status < 300) || r.Status >= 500 {
			t.Completed["abort"]++
		}
		return
	}
	reason := r.FinishReason
	if reason == "" {
		reason = "stop"
	}
	if _, seen := t.Completed[reason]; seen || len(t.Completed) < maxInterned {
		t.Completed[reason]++
	} else {
		t.Completed[otherString]++
	}
	t.CompletedTotal++
	t.AudioFrames += r.AudioFrames
	if speech {
		t.SpeechCompleted++
	}
	if r.Continuity == nil {
		return
	}
	var continuous map[string]int
	switch {
	case r.ChatPath():
		continuous = t.Continuous
	case speech:
		continuous = t.SpeechContinuous
	default:
		return
	}
	for th, ok := range r.Continuity.OK {
		if ok {
			continuous[th]++
		} else if _, seen := continuous[th]; !seen && len(continuous) < maxInterned {
			continuous[th] = 0
		}
	}
}

// Kinds are the request kinds, in order of first appearance.
func (s *Set) Kinds() []string { return s.kindsSeen }

// Models are the requested models, in order of first appearance (at most
// 255 of them).
func (s *Set) Models() []string { return s.modelsSeen }

// Realtime are the realtime turns, in the order added.
func (s *Set) Realtime() []RealtimeTurn { return s.realtime }

// StampDelaysS calls f with every kept stamp delay of the measured
// (non-warm-up) requests, ramp included.
func (s *Set) StampDelaysS(f func(float64)) {
	for _, v := range s.stamps.values {
		f(v)
	}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// Sample accessors, named after the Record methods they mirror.

func (x *Sample) Warmup() bool   { return x.flags&flagWarmup != 0 }
func (x *Sample) Ramp() bool     { return x.flags&flagRamp != 0 }
func (x *Sample) HasAudio() bool { return x.flags&flagAudio != 0 }

// Latency is Record.Latency.
func (x *Sample) Latency(sinceSendS float64) float64 {
	if x.flags&flagIntended != 0 {
		return sinceSendS + x.LagS
	}
	return sinceSendS
}

// Origin is Record.Origin.
func (x *Sample) Origin() string {
	if x.flags&flagIntended != 0 {
		return results.OriginIntended
	}
	return results.OriginSend
}

// Kind, ErrorClass and FinishReason are the record's strings.
func (s *Set) Kind(x *Sample) string         { return s.kinds.at(x.kind) }
func (s *Set) ErrorClass(x *Sample) string   { return s.classes.at(x.class) }
func (s *Set) FinishReason(x *Sample) string { return s.finishes.at(x.finish) }

// OK is Record.OK.
func (s *Set) OK(x *Sample) bool { return s.classes.at(x.class) == "" }

// Delivered is Record.Delivered.
func (s *Set) Delivered(x *Sample) bool { return results.DeliveredClass(s.classes.at(x.class)) }

// ChatPath is Record.ChatPath.
func (s *Set) ChatPath(x *Sample) bool {
	k := s.Kind(x)
	return k == results.KindChat || k == results.KindRealtime
}

// SpeechStream reports whether x is a speech stream (results.SpeechStreamKind).
func (s *Set) SpeechStream(x *Sample) bool { return results.SpeechStreamKind(s.Kind(x)) }

// Continuous is the continuity verdict at threshold th (label l): the
// record's own when its result has one, else max underrun <= th. ok is false
// without a continuity result.
func (s *Set) Continuous(x *Sample, l string, th float64) (continuous, ok bool) {
	if x.flags&flagContinuity == 0 {
		return false, false
	}
	if j, found := s.labels.find(l); found && j < maxLabels && x.known&(1<<j) != 0 {
		return x.ok&(1<<j) != 0, true
	}
	return x.MaxUnderrunS <= th, true
}

// tableOf interns strings to a byte index; index 0 is always "".
type tableOf struct {
	names  []string
	byName map[string]uint8
}

func (t *tableOf) index(v string) uint8 {
	if t.byName == nil {
		t.names, t.byName = []string{""}, map[string]uint8{"": 0}
	}
	if j, ok := t.byName[v]; ok {
		return j
	}
	if len(t.names) == maxInterned {
		t.names = append(t.names, otherString)
	}
	if len(t.names) > maxInterned {
		return maxInterned
	}
	j := uint8(len(t.names))
	t.names = append(t.names, v)
	t.byName[v] = j
	return j
}

func (t *tableOf) find(v string) (int, bool) {
	j, ok := t.byName[v]
	return int(j), ok
}

func (t *tableOf) at(j uint8) string {
	if int(j) >= len(t.names) {
		return ""
	}
	return t.names[j]
}

func (t *tableOf) overflowed() bool { return len(t.names) > maxInterned }

// pool keeps per-event values in arrival order up to max, then a uniform
// sample of all of them (Vitter's algorithm R); ramp marks each value's
// phase.
type pool struct {
	values []float64
	ramp   []bool
	seen   int
	max    int
	rng    *rand.Rand
}

func (p *pool) add(v float64, ramp bool) {
	p.seen++
	if len(p.values) < p.max {
		p.values = append(p.values, v)
		p.ramp = append(p.ramp, ramp)
		return
	}
	if j := p.rng.IntN(p.seen); j < p.max {
		p.values[j], p.ramp[j] = v, ramp
	}
}

// sampled reports whether the pool is a sample rather than every value.
func (p *pool) sampled() bool { return p.seen > len(p.values) }

// each calls f with the kept values in order, ramp ones only with includeRamp.
func (p *pool) each(includeRamp bool, f func(float64)) {
	for i, v := range p.values {
		if includeRamp || !p.ramp[i] {
			f(v)
		}
	}
}

// errorKey groups failures as the error set does; ramp keeps the phases
// apart for Options.IncludeRamp.
type errorKey struct {
	class   string
	status  int
	message string
	ramp    bool
}

type errorCount struct {
	count    int
	firstSeq int
	firstID  string
	// firstMessage is the earliest request's message: the group's message
	// when its key has none (groupedByClass).
	firstMessage string
}

// groupedByClass reports whether the failures of class form one group
// whatever their messages: a cancellation, an idle or a whole-request
// timeout says the same thing for every request, only how far it got
// ("after 12 events"), so one group per message would list the requests.
func groupedByClass(class string) bool {
	switch class {
	case results.ErrCancelled, results.ErrIdleTimeout, results.ErrTimeout:
		return true
	}
	return false
}

func (s *Set) addError(r *results.Record, ramp bool) {
	message := trimMessage(r.Error)
	k := errorKey{r.ErrorClass, r.Status, message, ramp}
	if groupedByClass(r.ErrorClass) {
		k.message = ""
	}
	e := s.errors[k]
	if e == nil {
		if len(s.errors) >= maxErrorKeys {
			s.errorsUnkept[b2i(ramp)]++
			return
		}
		e = &errorCount{firstSeq: r.Seq, firstID: r.ID, firstMessage: message}
		s.errors[k] = e
		s.errorOrder = append(s.errorOrder, k)
	}
	e.count++
	if r.Seq < e.firstSeq {
		e.firstSeq, e.firstID, e.firstMessage = r.Seq, r.ID, message
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// capWarnings say where a bound of the Set changed what is measured.
func (s *Set) capWarnings() []string {
	var w []string
	for _, p := range []struct {
		name string
		p    *pool
	}{{MetricTextGap + " (text gaps)", &s.gaps}, {MetricStampDelay + " (stamp delays)", &s.stamps}} {
		if p.p.sampled() {
			w = append(w, fmt.Sprintf("%s: %d values, more than the %d kept: its figures are from a uniform random sample of them",
				p.name, p.p.seen, len(p.p.values)))
		}
	}
	for _, t := range []struct {
		name string
		t    *tableOf
	}{{"request kinds", &s.kinds}, {"error classes", &s.classes}, {"finish reasons", &s.finishes}} {
		if t.t.overflowed() {
			w = append(w, fmt.Sprintf("more than %d distinct %s: the rest are counted as %q", maxInterned-1, t.name, otherString))
		}
	}
	if len(s.labels.names) > maxLabels {
		w = append(w, fmt.Sprintf("records name more than %d continuity thresholds: past them continuity is judged from the maximum underrun", maxLabels-1))
	}
	if n := s.errorsUnkept[0] + s.errorsUnkept[1]; n > 0 {
		w = append(w, fmt.Sprintf("error set: %d failures with messages past the %d distinct ones kept are counted, not grouped", n, maxErrorKeys))
	}
	return w
}

// Underrun is the maximum underrun of the request's continuity result; ok is
// false without one.
func (x *Sample) Underrun() (float64, bool) {
	return x.MaxUnderrunS, x.flags&flagContinuity != 0
}
