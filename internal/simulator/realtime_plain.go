package simulator

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// This file serves plain WS /v1/realtime (docs/reference/websocket.md,
// section 3):
// vLLM core's realtime transcription protocol with vLLM-Omni's audio out.
// session.update validates the model (no reply), commit{final:false}
// starts a generation, input_audio_buffer.append queues 16 kHz PCM16, and
// commit{final:true} ends the input; the reply streams as
// transcription.delta and response.audio.delta (field "audio", raw PCM16)
// events, then transcription.done and the terminal response.audio.done.
//
// The simulator models async_chunk off: the model sees the input only at
// the final flush, so the job arrives at the final commit and its prefill
// counts the input's seconds (Timing.AudioPrefill), as on the chat path.
// Like the real endpoint it exports only the request-end families (no
// TTFP, underrun or continuity), never closes a connection itself, and
// treats session.close as an unknown event.

// plainInputRate is the only input the endpoint takes: PCM16 mono 16 kHz.
const plainInputRate = 16000

// plainMaxInputS caps one generation's buffered input (the simulator's own
// bound; upstream's per-append cap is effectively none). More fails the
// generation with processing_error.
const plainMaxInputS = 600

// plainRealtimeConn is one plain connection's state. The receive loop and
// the generation goroutine both send; mu orders the writes.
type plainRealtimeConn struct {
	s   *Server
	ctx context.Context
	c   *websocket.Conn
	mu  sync.Mutex

	model     string // validated by session.update; "" until then
	running   bool   // a generation started by commit{final:false}
	input     []byte // the running generation's queued PCM
	overflow  bool   // input beyond plainMaxInputS was dropped
	responses sync.WaitGroup
}

// plainEvent is what the simulator reads of a plain realtime client event.
type plainEvent struct {
	Type  string  `json:"type"`
	Model *string `json:"model"`
	Audio *string `json:"audio"`
	Final bool    `json:"final"`
}

func parsePlainEvent(data []byte) (*plainEvent, error) {
	var ev plainEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return nil, err
	}
	return &ev, nil
}

// servePlainRealtime runs a plain connection until the client leaves.
func (s *Server) servePlainRealtime(ctx context.Context, c *websocket.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	pc := &plainRealtimeConn{s: s, ctx: ctx, c: c}
	defer pc.responses.Wait() // after cancel: a generation stops with its client
	defer cancel()
	pc.send(map[string]any{"type": "session.created", "id": fmt.Sprintf("sess-%032x", s.seq.Add(1)), "created": time.Now().Unix()})
	msgs := pumpMessages(ctx, c)
	for {
		// The endpoint has no idle timeout; the simulator still bounds
		// the wait, by the realtime session's idle default (300 s).
		m := nextMessage(ctx, msgs, s.cfg.WS.RealtimeIdleTimeout)
		if m.err != nil || m.typ != websocket.MessageText {
			// A binary frame ends the handler (receive_text fails).
			return
		}
		pc.event(m.data)
	}
}

func (pc *plainRealtimeConn) send(ev map[string]any) {
	pc.mu.Lock()
	defer pc.mu.Unlock()
	_ = writeJSONWS(pc.ctx, pc.c, ev) // a client gone shows on the next read
}

func (pc *plainRealtimeConn) sendError(code, msg string) {
	pc.send(map[string]any{"type": "error", "error": msg, "code": code})
}

// event handles one client event; the connection always stays open.
func (pc *plainRealtimeConn) event(data []byte) {
	ev, err := parsePlainEvent(data)
	if err != nil {
		pc.sendError("invalid_json", "Invalid JSON")
		return
	}
	switch ev.Type {
	case "session.update":
		if ev.Model == nil || *ev.Model == "" {
			pc.sendError("invalid_event", "Missing required field: model")
			return
		}
		if e := pc.s.checkModel(*ev.Model); e != nil {
			pc.sendError("model_not_found", fmt.Sprintf("The model `%s` does not exist.", *ev.Model))
			return
		}
		pc.model = *ev.Model
	case "input_audio_buffer.append":
		pc.append(ev)
	case "input_audio_buffer.commit":
		pc.commit(ev.Final)
	default:
		pc.sendError("unknown_event", "Unknown event type: "+ev.Type)
	}
}

// appendPCM is an append's PCM16, or the error code and message a refused
// one gets.
func appendPCM(ev *plainEvent) (pcm []byte, code, msg string) {
	if ev.Audio == nil {
		return nil, "processing_error", "1 validation error for InputAudioBufferAppend\naudio\n  Field required"
	}
	b, err := base64.StdEncoding.DecodeString(*ev.Audio)
	if err != nil || len(b) == 0 || len(b)%2 != 0 {
		return nil, "invalid_audio", "Invalid audio data"
	}
	return b, "", ""
}

func (pc *plainRealtimeConn) append(ev *plainEvent) {
	b, code, msg := appendPCM(ev)
	if code != "" {
		pc.sendError(code, msg)
		return
	}
	if len(pc.input)+len(b) > plainMaxInputS*plainInputRate*2 {
		pc.overflow = true
		return
	}
	pc.input = append(pc.input, b...)
}

func (pc *plainRealtimeConn) commit(final bool) {
	switch {
	case !final && pc.model == "":
		pc.sendError("model_not_validated", "Model not validated. Make sure to validate the model by sending a session.update event.")
	case !final:
		// A commit while a generation runs is ignored (a log line upstream).
		pc.running = true
	case pc.running:
		input, overflow := pc.input, pc.overflow
		pc.input, pc.overflow, pc.running = nil, false, false
		pc.responses.Add(1)
		go func() {
			defer pc.responses.Done()
			pc.respond(input, overflow)
		}()
	}
	// A final commit with nothing running queues a stop marker upstream
	// (UNVERIFIED); the simulator ignores it.
}

// respond runs one generation on the input's audio and streams its reply.
// Generations of one connection may overlap, as upstream, where each
// commit cycle is its own engine request.
func (pc *plainRealtimeConn) respond(input []byte, overflow bool) {
	s := pc.s
	inS := float64(len(input)) / (plainInputRate * 2)
	reply := defaultReply
	words := strings.Fields(reply)
	j := s.newJob(pc.ctx, time.Now(), jobSpec{
		endpoint:  "chat",
		key:       fmt.Sprintf("realtime-audio %d", len(input)),
		words:     words,
		textOn:    true,
		audioOn:   true,
		audioText: reply,
		voice:     DefaultVoice,
		speed:     1,
		promptTok: audioPromptTokens(inS),
		audioInS:  inS,
	})
	defer j.release()
	failed := func(msg string) {
		j.fail()
		pc.sendError("processing_error", msg)
		pc.send(map[string]any{"type": "response.audio.done", "has_audio": false})
	}
	switch {
	case overflow:
		failed(fmt.Sprintf("input audio exceeds the simulator's %d s per generation", plainMaxInputS))
		return
	case j.plan.faults.http500:
		failed("simulated internal server error (fault injection: --fault-500)")
		return
	}
	rate := s.cfg.SampleRate
	var text strings.Builder
	var pcm []byte
	hasAudio := false
	err := j.run(func(ev *event) error {
		if !ev.audio {
			text.WriteString(ev.word)
			pc.send(map[string]any{"type": "transcription.delta", "delta": ev.word})
			return pc.ctx.Err()
		}
		pcm = j.render(pcm[:0], ev)
		hasAudio = hasAudio || len(pcm) > 0
		pc.send(map[string]any{"type": "response.audio.delta", "audio": string(appendBase64(nil, pcm, ev.corrupt)),
			"format": "pcm16", "sample_rate_hz": rate})
		return pc.ctx.Err()
	})
	switch {
	case err == nil:
	case errors.Is(err, errFaultEvent):
		failed("simulated generation error (fault injection: --fault-error-event)")
		return
	case errors.Is(err, errFaultDisconnect):
		j.fail()
		pc.c.CloseNow()
		return
	default:
		j.fail()
		return // the connection is gone
	}
	j.succeed()
	completion := len(words)
	prompt := max(1, audioPromptTokens(inS))
	pc.send(map[string]any{"type": "transcription.done", "text": text.String(), "usage": map[string]any{
		"prompt_tokens": prompt, "total_tokens": prompt + completion, "completion_tokens": completion, "prompt_tokens_details": nil}})
	pc.send(map[string]any{"type": "response.audio.done", "has_audio": hasAudio})
}
