package simulator

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/omnimetrics"
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
		nextText = p.firstText(t, j.s.currentSlowdown())
	}
	if na > 0 {
		g := p.chunkGen(t, sr, 0, j.s.currentSlowdown())
		j.genTime += g
		nextAudio = p.firstAudio(t, j.s.currentSlowdown())
		if p.chunkStall[0] {
			nextAudio += t.Stall
		}
	}
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
				g := p.chunkGen(t, sr, ai, j.s.currentSlowdown())
				j.genTime += g
				nextAudio += g
			}
		} else {
			ti++
			if ti < nt {
				nextText += p.wordGap(t, ti, j.s.currentSlowdown())
			}
		}
	}
	return nil
}

// sinceArrival is the server clock since arrival.
func (j *job) sinceArrival() time.Duration { return time.Since(j.arrival) }

// recordHops records the transfers that deliver audio chunk i to code2wav:
// with the first chunk, one hop per earlier stage pair (thinker hidden
// states to the talker, ...); with every chunk, the talker-to-code2wav hop
// of its codec tokens.
func (j *job) recordHops(i int) {
	last := len(j.bound) - 1
	if last < 1 {
		return
	}
	m := j.s.metrics
	if i == 0 {
		size := (j.spec.promptTok + len(j.spec.words)) * hiddenStateBytesPerToken
		for st := 0; st < last-1; st++ {
			j.hop(m, st, size)
		}
	}
	size := codecTokens(int64(j.plan.chunkFrames[i]), j.s.cfg.SampleRate) * codecBytesPerToken
	j.hop(m, last-1, size)
}

func (j *job) hop(m *omnimetrics.Metrics, from, size int) {
	e := omnimetrics.Edge{FromStage: from, FromReplica: j.bound[from], ToStage: from + 1, ToReplica: j.bound[from+1]}
	copyS := float64(size) / hopCopyBytesPerS
	m.TransferHop(e, size, hopTxBaseS+copyS, hopRxBaseS+copyS, hopInFlightBaseS+float64(size)/hopWireBytesPerS)
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

// observeUpstream feeds the upstream vllm:* stage families with the plan's
// stage times (nominal times scaled by the slowdown at admission): stage 0
// is the thinker (text), the stages before the last are talkers (codec
// tokens), the last stage is the vocoder, which has no LLM engine. A single
// stage gets the whole request.
func (j *job) observeUpstream() {
	up := j.s.metrics.Upstream()
	if up == nil {
		return
	}
	t := j.s.cfg.Timing
	p := j.plan
	s := j.admitS
	last := len(j.bound) - 1
	sr := func(st int) omnimetrics.StageReplica {
		return omnimetrics.StageReplica{Stage: st, Replica: j.bound[st]}
	}

	// Thinker: prefill until the first word, then one word per gap.
	ttft := p.firstText(t, s).Seconds()
	var itl []float64
	decode := 0.0
	for k := 1; k < len(j.spec.words); k++ {
		g := p.wordGap(t, k, s).Seconds()
		itl = append(itl, g)
		decode += g
	}
	genTok := len(j.spec.words)
	if last == 0 {
		genTok = j.generationTokens()
	}
	up.ObserveRequest(sr(0), ttft, ttft+decode, 0, ttft, decode, j.spec.promptTok, genTok, itl, "stop")
	up.PrefixCache(sr(0), j.spec.promptTok, 0)
	if !j.spec.audioOn || len(p.chunkFrames) == 0 {
		return
	}
	// Talkers: first codec tokens when the first chunk's vocoding starts,
	// then at the vocoder's pace; one inter-token latency per chunk.
	first := p.firstAudio(t, s) - p.chunkGen(t, j.s.cfg.SampleRate, 0, s)
	ttftA := max(first.Seconds(), 0)
	var itlA []float64
	decodeA := 0.0
	for i := 1; i < len(p.chunkFrames); i++ {
		g := p.chunkGen(t, j.s.cfg.SampleRate, i, s).Seconds()
		decodeA += g
		if n := codecTokens(int64(p.chunkFrames[i]), j.s.cfg.SampleRate); n > 0 {
			itlA = append(itlA, g/float64(n))
		}
	}
	for st := 1; st < last; st++ {
		up.ObserveRequest(sr(st), ttftA, ttftA+decodeA, 0, ttftA, decodeA, len(j.spec.words), j.codecTok, itlA, "stop")
	}
}
