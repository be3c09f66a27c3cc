package summary

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"

	"github.com/omnibench/omnibench/internal/run/offheap"
	"github.com/omnibench/omnibench/internal/run/results"
)

// A Set holds the finished requests of a run in compact form: per request
// only the figures that the summary, the SLO verdicts, the checks and the
// HTML charts read (a Sample, packed into 16 to 192 bytes), with the
// per-event values (text gaps, stamp delays) pooled (in memory up to a
// cap, then in a temporary file: pool.go), and the
// failures grouped by message as they come. The runner keeps a Set instead of the records, so a
// day-long soak holds a bounded amount per request while the full records go
// to the results file as they complete; readers of a results file build one
// with SetOf, so there is one computation of every figure.
//
// The figures from a Set are exactly those of the records, except past the
// caps below, where a warning of the summary says what changed.
//
// The samples and the pools live outside the Go heap (package offheap,
// store.go), so that they cost the memory written to them and no collector
// headroom; the Set gives it back when it is no longer reachable.
type Set struct {
	arena   *offheap.Arena // the samples' blocks and the pools' values
	samples sampleStore
	// maxSamples caps the samples kept; unkept counts the requests past it,
	// which are in the run-wide totals, the error set and the pools but in
	// no other figure (Summary warns).
	maxSamples, unkept int

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

// Sample is what a Set keeps of one finished request, as Set.All hands it
// out (unpacked from its stored form, store.go).
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
	// DefaultMaxSamples caps the requests a Set keeps figures of: a day at
	// 190 requests per second, about 1.7 GB of samples of short chat
	// responses. Past it a request still counts in the run-wide totals, the
	// error set and the per-event pools, and the summary warns that the
	// other figures leave it out.
	DefaultMaxSamples = 1 << 24
	// maxInterned bounds each string table; maxLabels the continuity
	// labels a Sample has bits for.
	maxInterned = 255
	maxLabels   = 16
	otherString = "(other)"
	// DefaultMaxEventValues caps the values each pooled per-event
	// distribution (text gaps, stamp delays) keeps in memory, 8 bytes and a
	// bit each: past it every further value goes to a temporary file
	// (pool.go) and the figures stay exact. Only when that file cannot be
	// written does the pool become a uniform sample of the values, and the
	// summary warns.
	DefaultMaxEventValues = 1 << 16
	// maxErrorKeys bounds the distinct (class, status, message) groups
	// counted; failures past it are counted as left out of the error set.
	maxErrorKeys = 10_000
)

// NewSet returns an empty Set.
func NewSet() *Set {
	s := &Set{
		arena:      new(offheap.Arena),
		maxSamples: DefaultMaxSamples,
		gaps:       pool{name: MetricTextGap + " (text gaps)", max: DefaultMaxEventValues, rng: rand.New(rand.NewPCG(1, 2))},
		stamps:     pool{name: MetricStampDelay + " (stamp delays)", max: DefaultMaxEventValues, rng: rand.New(rand.NewPCG(3, 4))},
		errors:     map[errorKey]*errorCount{},
		Totals:     Totals{Completed: map[string]int{}, Continuous: map[string]int{}, SpeechContinuous: map[string]int{}},
	}
	// The arena is its own object, so the cleanup does not keep s alive.
	runtime.AddCleanup(s, (*offheap.Arena).Free, s.arena)
	return s
}

// SetOf builds the Set of recs (a results file's records).
func SetOf(recs []results.Record) *Set {
	s := NewSet()
	for i := range recs {
		s.Add(&recs[i])
	}
	return s
}

// Len is the number of requests whose samples are kept (all those added,
// up to DefaultMaxSamples).
func (s *Set) Len() int { return s.samples.n }

// All calls f for every sample in the order added. The Sample is valid
// during the call only: f copies what it keeps.
func (s *Set) All(f func(*Sample)) {
	s.each(func(_ int, x *Sample) { f(x) })
}

// each is All with each sample's index.
func (s *Set) each(f func(i int, x *Sample)) {
	s.samples.each(f)
	runtime.KeepAlive(s) // the samples' memory is s's until here
}

// OffHeapBytes is the memory the Set's samples and pools fill outside the
// Go heap: what is resident of it, to within a page per block.
func (s *Set) OffHeapBytes() int {
	return s.samples.bytes() + s.gaps.offHeapBytes() + s.stamps.offHeapBytes()
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
			s.stamps.add(s, d*1000, ramp)
		}
		if r.OK() {
			for _, g := range r.TextGapsS {
				s.gaps.add(s, g*1000, ramp)
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
	if s.samples.n >= s.maxSamples {
		s.unkept++
		return
	}
	s.addQuality(s.Len(), r)
	s.samples.add(s.arena, &x, r.SampleRate)
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

// StampDelayPercentileMS is percentile p (numpy's linear method) of the
// stamp delays of the measured (non-warm-up) requests, ramp included, in
// milliseconds; ok is false when there are none, or when the part of them
// in the pool's temporary file cannot be read back.
func (s *Set) StampDelayPercentileMS(p float64) (v float64, ok bool) {
	var sc scratch
	defer sc.free()
	sum, _, err := s.stamps.summary(true, []float64{p}, &sc)
	runtime.KeepAlive(s)
	if err != nil || sum.N == 0 {
		return 0, false
	}
	return sum.Percentiles[0].Value, true
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
	for _, p := range []*pool{&s.gaps, &s.stamps} {
		if p.sampled() {
			w = append(w, p.sampleWarning())
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
	if s.unkept > 0 {
		w = append(w, fmt.Sprintf("%d requests past the first %d are left out of every figure but the error set, "+
			"the text gaps and stamp delays, and the server checks' totals: the results file has them all", s.unkept, s.maxSamples))
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
