package simulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// Outcomes of a job's timeline other than success and context errors.
var (
	errFaultDisconnect = errors.New("simulated disconnect (fault injection)")
	errFaultEvent      = errors.New("simulated mid-stream error (fault injection)")
)

// Transfer-hop model constants: sizes and times of the simulated inter-stage
// payloads, so the transfer families carry plausible, deterministic values.
const (
	hiddenStateBytesPerToken = 2048 * 2 // thinker hidden size 2048 in bf16
	codecBytesPerToken       = 16 * 8   // 16 codebooks of int64 codes
	hopTxBaseS               = 20e-6
	hopRxBaseS               = 10e-6
	hopInFlightBaseS         = 50e-6
	hopCopyBytesPerS         = 4e9  // serialise/deserialise bandwidth
	hopWireBytesPerS         = 10e9 // connector bandwidth
)

// jobSpec is what a handler tells a job about the request.
type jobSpec struct {
	endpoint  string   // "chat" or "speech": part of the generator key
	key       string   // prompt text identifying the request for its generator
	words     []string // text words the thinker generates (chat)
	textOn    bool     // text events are emitted
	audioOn   bool     // audio is generated
	audioText string   // text the audio is derived from
	voice     string
	speed     float64
	promptTok int
	audioInS  float64 // seconds of input audio, prefilled before the first token
}

// job is one admitted request: its plan, its clock and what it has done.
type job struct {
	s       *Server
	ctx     context.Context
	arrival time.Time
	spec    jobSpec
	plan    *plan
	audio   audioSource // nil without audio
	// voiceErr is why the voice engine could not speak the text; run
	// fails the stream with it before the first event.
	voiceErr error
	bound    []int
	timer    *time.Timer
	admitS   float64 // slowdown at admission, for upstream stage times

	codecTok int
	genTime  time.Duration // code2wav generation time, for RTF
	done     bool          // metrics recorded

	slow   []float64       // per stage: the slowness factor of the bound replica (Config.Slow)
	extras []time.Duration // per edge st -> st+1: the extra in-flight time of its hops
	path   criticalPath
}

// criticalPath is the request's timeline as run scheduled it, split into
// the time each stage and the hops added before the last event. The
// per-stage series record these parts, so that they add up to the
// server's e2e less what the schedule does not see (a late timer, writing
// the response), the part a breakdown calls the rest.
type criticalPath struct {
	first []time.Duration // per stage: its part of the wait for the first audio chunk (or word)
	later []time.Duration // per stage: its part after that (vocoding, the thinker's text tail)
	ttft  time.Duration   // the thinker's first word
	itl   []float64       // the thinker's word gaps, in seconds
	hops  time.Duration   // every hop's sender, in-flight and receiver time
}

// newJob admits a request that arrived at arrival. The caller must call
// release (typically deferred) and exactly one of succeed or fail.
func (s *Server) newJob(ctx context.Context, arrival time.Time, spec jobSpec) *job {
	key := contentKey(spec.endpoint, spec.key)
	occurrence := s.occur.next(key)
	rng := requestRNG(s.cfg.Seed, key, occurrence)
	in := planInput{
		words:      len(spec.words),
		textRunes:  utf8.RuneCountInString(spec.audioText),
		speed:      spec.speed,
		audio:      spec.audioOn,
		sampleRate: s.cfg.SampleRate,
		audioInS:   spec.audioInS,
	}
	lead := int64(math.Round(s.cfg.Timing.LeadingSilence.Seconds() * float64(s.cfg.SampleRate)))
	var voice *voiceSource
	var voiceErr error
	if spec.audioOn && s.voice != nil {
		vf := drawVoiceFaults(s.cfg.Seed, key, occurrence, s.cfg.Faults)
		if voice, voiceErr = s.newVoiceSource(ctx, spec.audioText, spec.speed, lead, vf); voice != nil {
			in.frames = voice.total
		}
	}
	p := newPlan(rng, s.cfg.Timing, s.cfg.Faults, in)
	j := &job{
		s:        s,
		ctx:      ctx,
		arrival:  arrival,
		spec:     spec,
		plan:     p,
		bound:    s.bind(),
		timer:    time.NewTimer(time.Hour),
		codecTok: codecTokens(p.totalFrames, s.cfg.SampleRate),
		voiceErr: voiceErr,
	}
	j.timer.Stop()
	j.slow = s.cfg.Slow.factors(j.bound)
	j.extras = s.cfg.Slow.edgeExtras(j.bound)
	j.path.first = make([]time.Duration, len(j.bound))
	j.path.later = make([]time.Duration, len(j.bound))
	switch {
	case voice != nil:
		j.audio = voice
	case spec.audioOn:
		j.audio = newSynth(s.voices, spec.audioText, spec.voice, p.totalFrames, lead)
	}
	s.admit(j.bound)
	j.admitS = s.currentSlowdown()
	return j
}

// release ends the job's share of the load.
func (j *job) release() {
	j.timer.Stop()
	j.s.release(j.bound)
}

// finalSR is the code2wav stage and its bound replica: the labels of the
// audio families.
func (j *job) finalSR() omnimetrics.StageReplica {
	last := len(j.bound) - 1
	return omnimetrics.StageReplica{Stage: last, Replica: j.bound[last]}
}

// generationTokens is what the stages generated: text words plus codec tokens.
func (j *job) generationTokens() int {
	n := len(j.spec.words)
	if j.spec.audioOn {
		n += j.codecTok
	}
	return n
}

// elapsed is the server clock since arrival, in seconds.
func (j *job) elapsed() float64 { return time.Since(j.arrival).Seconds() }

// event is one timeline step handed to the emit callback.
type event struct {
	audio   bool
	index   int // word or chunk index
	last    bool
	word    string // text: the delta, with its leading space after the first word
	frames  int    // audio: frames of the chunk; render them with job.render
	corrupt bool   // audio: the malformed-base64 fault strikes this chunk
}

// maxChunkBytes is the PCM size of the job's largest audio chunk, so that
// handlers can size their buffers once per request.
func (j *job) maxChunkBytes() int {
	n := 0
	for _, c := range j.plan.chunkFrames {
		n = max(n, c)
	}
	return 2 * n
}

// render appends the event's audio as s16le PCM to dst.
func (j *job) render(dst []byte, ev *event) []byte {
	return j.audio.Append(dst, ev.frames)
}

// audioSource renders a response's audio as it streams: the tone voice
// (synth) or a spoken one (voiceSource).
type audioSource interface {
	// Append renders the next frames as s16le mono onto dst.
	Append(dst []byte, frames int) []byte
}

// sleepUntil waits until due after arrival, or until the request ends.
func (j *job) sleepUntil(due time.Duration) error {
	d := time.Until(j.arrival.Add(due))
	if d <= 0 {
		return j.ctx.Err()
	}
	j.timer.Reset(d)
	select {
	case <-j.timer.C:
		return nil
	case <-j.ctx.Done():
		j.timer.Stop()
		return j.ctx.Err()
	}
}

// run walks the timeline: text words and audio chunks in schedule order,
// waiting for each (see the package documentation for the formulas), with
// the job's mid-stream faults. A voice engine's failure fails the stream
// before its first event as the error-event fault does. It returns nil when every event was emitted,
// errFaultDisconnect or errFaultEvent for those faults, the context's error
// when the client went away, or emit's error.
func (j *job) run(emit func(*event) error) error {
	if j.voiceErr != nil {
		return fmt.Errorf("%w: %w", errFaultEvent, j.voiceErr)
	}
	t := j.s.cfg.Timing
	sr := j.s.cfg.SampleRate
	p := j.plan
	nt := 0
	if j.spec.textOn {
		nt = len(j.spec.words)
	}
	na := len(p.chunkFrames)

	// Mid-stream faults strike before audio chunk na/2, or before text word
	// nt/2 when there is no audio.
	faultAudio, faultAt := na > 0, na/2
	if !faultAudio {
		faultAt = nt / 2
	}
	midFault := p.faults.stall || p.faults.disconnect || p.faults.errorEvent

	var nextText, nextAudio time.Duration
	if nt > 0 {
		nextText = j.scale(0, p.firstText(t, j.s.currentSlowdown()))
		j.path.ttft = nextText
	}
	if na > 0 {
		s := j.s.currentSlowdown()
		j.genTime += p.chunkGen(t, sr, 0, s)
		nextAudio = j.firstAudioDue(s)
	}
	defer func() { j.textTail(nt, na, nextText, nextAudio) }()
	ti, ai := 0, 0
	for ti < nt || ai < na {
		isAudio := ai < na && (ti >= nt || nextAudio < nextText)
		idx, due := ti, nextText
		if isAudio {
			idx, due = ai, nextAudio
		}
		if midFault && isAudio == faultAudio && idx == faultAt {
			midFault = false
			if p.faults.stall {
				if err := j.sleepUntil(j.sinceArrival() + j.s.cfg.Faults.StallFor); err != nil {
					return err
				}
				nextText += j.s.cfg.Faults.StallFor
				nextAudio += j.s.cfg.Faults.StallFor
				due += j.s.cfg.Faults.StallFor
			}
			if p.faults.disconnect {
				return errFaultDisconnect
			}
			if p.faults.errorEvent {
				return errFaultEvent
			}
		}
		if err := j.sleepUntil(due); err != nil {
			return err
		}
		ev := event{audio: isAudio, index: idx, last: ti+ai+1 == nt+na}
		if isAudio {
			ev.frames = p.chunkFrames[ai]
			ev.corrupt = p.faults.malformed && ai == faultAt
			j.recordHops(ai)
		} else {
			ev.word = j.spec.words[ti]
			if ti > 0 {
				ev.word = " " + ev.word
			}
		}
		if j.s.cfg.onSend != nil {
			at := j.arrival.Add(due)
			j.s.cfg.onSend(at, time.Since(at))
		}
		if err := emit(&ev); err != nil {
			return err
		}
		if isAudio {
			ai++
			if ai < na {
				nextAudio += j.chunkDue(ai, j.s.currentSlowdown())
			}
		} else {
			ti++
			if ti < nt {
				g := j.scale(0, p.wordGap(t, ti, j.s.currentSlowdown()))
				j.path.itl = append(j.path.itl, g.Seconds())
				nextText += g
			}
		}
	}
	return j.spendStatsCost()
}

// spendStatsCost waits Config.StatsCost, slowed down by the current load as
// generation is, when stats are on: the request keeps its share of the
// load meanwhile, so the cost also slows the requests beside it. It returns
// the context's error when the client went away.
func (j *job) spendStatsCost() error {
	c := j.s.cfg.StatsCost
	if c <= 0 || !j.s.cfg.StatsEnabled {
		return nil
	}
	return j.sleepUntil(j.sinceArrival() + time.Duration(float64(c)*j.s.currentSlowdown()))
}

// sinceArrival is the server clock since arrival.
func (j *job) sinceArrival() time.Duration { return time.Since(j.arrival) }

// scale applies stage st's slowness factor to a duration of its work.
func (j *job) scale(st int, d time.Duration) time.Duration {
	if f := j.slow[st]; f != 1 {
		return time.Duration(float64(d) * f)
	}
	return d
}

// firstAudioDue is when the first audio chunk is due after arrival at
// slowdown s. The timing model's TTFA is split along the path the chunk
// takes: the thinker until its first word, the talkers, the hops (at their
// modelled times, carved out of the talkers' part), and code2wav vocoding
// the chunk. Each stage's part is then scaled by its slowness and each hop
// gets its edge's extra time, so without slowness the chunk is due at TTFA
// as before. A single stage takes the whole wait; with two, the thinker
// also talks.
func (j *job) firstAudioDue(s float64) time.Duration {
	t, p, sr := j.s.cfg.Timing, j.plan, j.s.cfg.SampleRate
	last := len(j.bound) - 1
	a0 := p.firstAudio(t, s)
	if j.path.ttft == 0 {
		// No text is streamed, but the thinker still reads the prompt
		// before anything else happens.
		j.path.ttft = j.scale(0, min(p.firstText(t, s), a0))
	}
	part := j.path.first
	if last == 0 {
		part[0] = j.scale(0, a0)
	} else {
		thinker := min(p.firstText(t, s), a0)
		vocode := p.chunkGen(t, sr, 0, s)
		if p.chunkStall[0] {
			vocode -= t.Stall
		}
		vocode = min(vocode, a0-thinker)
		base, _ := j.chunkHops(0)
		talk := max(a0-thinker-vocode-base, 0)
		part[0] = thinker
		if last == 1 {
			part[0] += talk
		}
		if talkers := time.Duration(last - 1); talkers > 0 {
			for st := 1; st < last; st++ {
				part[st] = talk / talkers
			}
			part[last-1] += talk % talkers // the rounding remainder
		}
		part[last] = vocode
		for st := range part {
			part[st] = j.scale(st, part[st])
		}
	}
	var due time.Duration
	for _, d := range part {
		due += d
	}
	if p.chunkStall[0] {
		part[last] += t.Stall
		due += t.Stall
	}
	_, hops := j.chunkHops(0)
	j.path.hops += hops
	return due + hops
}

// chunkDue is the wait between audio chunk i-1 and chunk i (i >= 1) at
// slowdown s: code2wav's generation time of the chunk, of which the hop
// delivering its codec tokens takes its modelled share, scaled by
// code2wav's slowness, plus the hop's extra time.
func (j *job) chunkDue(i int, s float64) time.Duration {
	last := len(j.bound) - 1
	g := j.plan.chunkGen(j.s.cfg.Timing, j.s.cfg.SampleRate, i, s)
	j.genTime += g
	base, hops := j.chunkHops(i)
	vocode := j.scale(last, max(g-base, 0))
	j.path.later[last] += vocode
	j.path.hops += hops
	return vocode + hops
}

// textTail adds to the thinker's part the time its last word came after
// the last audio chunk (all of a text-only response): the part of the
// critical path no other stage covers.
func (j *job) textTail(words, chunks int, lastWord, lastChunk time.Duration) {
	switch {
	case words == 0:
	case chunks == 0:
		j.path.first[0] = j.path.ttft
		j.path.later[0] = lastWord - j.path.ttft
	case lastWord > lastChunk:
		j.path.later[0] += lastWord - lastChunk
	}
}

// hopTimes is one hop of size bytes: the sender's (serialise and submit),
// the receiver's and the in-flight time, the last with the edge's extra.
func (j *job) hopTimes(from, size int) (tx, rx, inFlight time.Duration) {
	copyS := float64(size) / hopCopyBytesPerS
	sec := func(v float64) time.Duration { return time.Duration(v * float64(time.Second)) }
	return sec(hopTxBaseS + copyS), sec(hopRxBaseS + copyS),
		sec(hopInFlightBaseS+float64(size)/hopWireBytesPerS) + j.extras[from]
}

// forChunkHops calls visit for each transfer that delivers audio chunk i to
// code2wav: with the first chunk, one hop per earlier stage pair (thinker
// hidden states to the talker, ...); with every chunk, the
// talker-to-code2wav hop of its codec tokens.
func (j *job) forChunkHops(i int, visit func(from, size int)) {
	last := len(j.bound) - 1
	if last < 1 {
		return
	}
	if i == 0 {
		size := (j.spec.promptTok + len(j.spec.words)) * hiddenStateBytesPerToken
		for st := 0; st < last-1; st++ {
			visit(st, size)
		}
	}
	visit(last-1, codecTokens(int64(j.plan.chunkFrames[i]), j.s.cfg.SampleRate)*codecBytesPerToken)
}

// chunkHops is the time the hops of audio chunk i take: base without the
// edges' extra time, total with it.
func (j *job) chunkHops(i int) (base, total time.Duration) {
	j.forChunkHops(i, func(from, size int) {
		tx, rx, inFlight := j.hopTimes(from, size)
		total += tx + rx + inFlight
		base += tx + rx + inFlight - j.extras[from]
	})
	return base, total
}

// recordHops records the transfers of audio chunk i with the times its
// schedule gave them.
func (j *job) recordHops(i int) {
	m := j.s.metrics
	j.forChunkHops(i, func(from, size int) {
		e := omnimetrics.Edge{FromStage: from, FromReplica: j.bound[from], ToStage: from + 1, ToReplica: j.bound[from+1]}
		tx, rx, inFlight := j.hopTimes(from, size)
		m.TransferHop(e, size, tx.Seconds(), rx.Seconds(), inFlight.Seconds())
	})
}

// succeed records a finished request where the real server finalizes it:
// audio duration/RTF/frames (or skipped) for audio responses, tokens,
// success and e2e, and the upstream per-stage observations.
func (j *job) succeed() {
	if j.done {
		return
	}
	j.done = true
	m := j.s.metrics
	if j.spec.audioOn {
		m.AudioAtFinalize(j.finalSR(), j.plan.totalFrames, j.s.cfg.SampleRate, j.genTime.Seconds())
	}
	m.Tokens(j.spec.promptTok, j.generationTokens())
	m.RequestSucceeded(j.elapsed(), "stop")
	j.observeUpstream()
}

// fail records a request that ended without natural completion.
func (j *job) fail() {
	if j.done {
		return
	}
	j.done = true
	j.s.metrics.RequestFailed()
}

// observeUpstream feeds the upstream vllm:* stage families with each
// stage's part of the critical path (criticalPath): e2e is the part, prefill
// its share of the wait for the first output, decode the rest, and the
// queue time 0 (the simulator admits every request at once; its capacity
// model slows generation instead). So the stages' e2e times, with the hops,
// add up to the pipeline's e2e less the rest. A text-only response reaches
// only the thinker. Stage 0 is the thinker (text), the stages before the
// last are talkers (codec tokens), the last is code2wav.
func (j *job) observeUpstream() {
	up := j.s.metrics.Upstream()
	if up == nil {
		return
	}
	p := j.plan
	last := len(j.bound) - 1
	audio := j.spec.audioOn && len(p.chunkFrames) > 0
	sr := func(st int) omnimetrics.StageReplica {
		return omnimetrics.StageReplica{Stage: st, Replica: j.bound[st]}
	}
	part := func(st int) (prefill, decode float64) {
		return j.path.first[st].Seconds(), j.path.later[st].Seconds()
	}
	genTok := len(j.spec.words)
	if last == 0 {
		genTok = j.generationTokens()
	}
	prefill, decode := part(0)
	up.ObserveRequest(sr(0), j.path.ttft.Seconds(), prefill+decode, 0, prefill, decode,
		j.spec.promptTok, genTok, j.path.itl, "stop")
	up.PrefixCache(sr(0), j.spec.promptTok, 0)
	if !audio {
		return
	}
	// Later stages: one inter-token latency per chunk, at code2wav's pace.
	var itlA []float64
	for i := 1; i < len(p.chunkFrames); i++ {
		g := p.chunkGen(j.s.cfg.Timing, j.s.cfg.SampleRate, i, j.admitS).Seconds()
		if n := codecTokens(int64(p.chunkFrames[i]), j.s.cfg.SampleRate); n > 0 {
			itlA = append(itlA, j.slow[last]*g/float64(n))
		}
	}
	for st := 1; st <= last; st++ {
		prefill, decode := part(st)
		up.ObserveRequest(sr(st), prefill, prefill+decode, 0, prefill, decode, len(j.spec.words), j.codecTok, itlA, "stop")
	}
}
