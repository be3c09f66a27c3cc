package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/audio/wav"
)

// Speech response modes (docs/reference/http-streams.md, section 3.2).
const (
	speechFile   = iota // whole file
	speechStream        // raw byte stream (stream_format "audio")
	speechSSE           // SSE (stream true or stream_format "sse")
)

// speechRequest is a validated /v1/audio/speech request.
type speechRequest struct {
	model  string
	input  string
	voice  string
	format string // wav or pcm
	speed  float64
	mode   int
	refS   float64 // seconds of the voice-cloning reference (ref_audio)
}

// speechBody is the wire form of the fields the simulator reads; the
// model-specific extras (task_type, language, ref_text, max_new_tokens,
// seed, ...) are accepted and ignored; ref_audio is decoded.
type speechBody struct {
	Input          *string         `json:"input"`
	Model          string          `json:"model"`
	Voice          json.RawMessage `json:"voice"` // a string, or the object {"id": ...} the OpenAI SDK sends
	Speaker        string          `json:"speaker"`
	ResponseFormat *string         `json:"response_format"`
	Speed          *float64        `json:"speed"`
	Stream         bool            `json:"stream"`
	StreamFormat   *string         `json:"stream_format"`
	RefAudio       *string         `json:"ref_audio"`
}

// Messages of the streaming constraints, as the real server words them.
const (
	msgStreamFormat = "Streaming (stream=true) requires response_format='pcm' or 'wav'. Got response_format='%s'."
	msgStreamSpeed  = "Speed adjustment is not supported when streaming (stream=true). Set speed=1.0 or omit it."
)

// parseSpeechRequest validates a speech body. Errors are 400s naming the field.
func parseSpeechRequest(body []byte) (*speechRequest, *apiError) {
	var b speechBody
	if e := decodeJSON(body, &b); e != nil {
		return nil, e
	}
	if b.Input == nil {
		return nil, badRequest("input", "input: field required")
	}
	if strings.TrimSpace(*b.Input) == "" {
		return nil, badRequest("input", "input: must not be empty")
	}
	req := &speechRequest{model: b.Model, input: *b.Input, speed: 1, voice: DefaultVoice}
	voice, e := parseSpeechVoice(b.Voice)
	if e != nil {
		return nil, e
	}
	switch {
	case voice != "":
		req.voice = voice
	case b.Speaker != "":
		req.voice = b.Speaker
	}
	format := "wav"
	if b.ResponseFormat != nil {
		f, e := normalizeFormat("response_format", *b.ResponseFormat, "aac")
		if e != nil {
			return nil, e
		}
		format = f
	}
	if b.Speed != nil {
		if !(*b.Speed >= 0.25 && *b.Speed <= 4) {
			return nil, badRequest("speed", "speed: must be between 0.25 and 4.0, got %v", *b.Speed)
		}
		req.speed = *b.Speed
	}
	switch {
	case b.StreamFormat == nil && !b.Stream:
		req.mode = speechFile
	case b.StreamFormat == nil || *b.StreamFormat == "sse":
		req.mode = speechSSE
	case *b.StreamFormat == "audio":
		req.mode = speechStream
	default:
		return nil, badRequest("stream_format", "stream_format: must be 'sse' or 'audio', got '%s'", *b.StreamFormat)
	}
	if req.mode != speechFile {
		if format != "pcm" && format != "wav" {
			return nil, badRequest("response_format", msgStreamFormat, format)
		}
		if req.speed != 1 {
			return nil, badRequest("speed", msgStreamSpeed)
		}
	}
	if format != "pcm" && format != "wav" {
		return nil, unsupportedFormat("response_format", format)
	}
	req.format = format
	if b.RefAudio != nil {
		d, e := decodeAudioURL("ref_audio", "ref_audio", *b.RefAudio)
		if e != nil {
			return nil, e
		}
		req.refS = d
	}
	return req, nil
}

// parseSpeechVoice reads speech's voice field: a voice name, or an object
// whose "id" is one (the OpenAI SDK's shape); absent or null is "". Any
// other JSON is a 400, as the real server's validation refuses it.
func parseSpeechVoice(raw json.RawMessage) (string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var name string
	if raw[0] == '"' && json.Unmarshal(raw, &name) == nil {
		return name, nil
	}
	var obj struct {
		ID *string `json:"id"`
	}
	if raw[0] == '{' && json.Unmarshal(raw, &obj) == nil && obj.ID != nil {
		return *obj.ID, nil
	}
	got := "JSON " + jsonKind(raw[0])
	if raw[0] == '{' {
		got = "an object without a string id"
	}
	return "", badRequest("voice", `voice: expected a voice name or an object {"id": "<voice name>"}, got %s`, got)
}

// jsonKind names the kind of the JSON value starting with byte c, the way
// the field errors name it.
func jsonKind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	}
	return "number"
}

func (s *Server) handleSpeech(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	body, e := readBody(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	req, e := parseSpeechRequest(body)
	if e == nil {
		e = s.checkModel(req.model)
	}
	if e != nil {
		writeError(w, e)
		return
	}
	j := s.newJob(r.Context(), arrival, jobSpec{
		endpoint:  "speech",
		key:       req.input,
		audioOn:   true,
		audioText: req.input,
		voice:     req.voice,
		speed:     req.speed,
		promptTok: promptTokens(utf8.RuneCountInString(req.input)) + audioPromptTokens(req.refS),
		audioInS:  req.refS,
	})
	defer j.release()
	if j.plan.faults.http500 {
		j.fail()
		writeError(w, errInternal("simulated internal server error (fault injection: --fault-500)"))
		return
	}
	switch req.mode {
	case speechFile:
		s.speechWhole(w, j, req)
	case speechStream:
		s.speechBytes(w, j, req)
	default:
		s.speechEvents(w, j, req)
	}
}

func (s *Server) wavFormat() wav.Format {
	return wav.Format{SampleRate: s.cfg.SampleRate, Channels: 1, BitsPerSample: 16}
}

func mediaType(format string) string {
	if format == "wav" {
		return "audio/wav"
	}
	return "audio/pcm"
}

// speechWhole answers with one file after the whole generation.
func (s *Server) speechWhole(w http.ResponseWriter, j *job, req *speechRequest) {
	pcm := make([]byte, 0, 2*j.plan.totalFrames)
	err := j.run(func(ev *event) error {
		pcm = j.render(pcm, ev)
		return nil
	})
	switch {
	case err == nil:
	case errors.Is(err, errFaultEvent):
		j.fail()
		writeError(w, errInternal("simulated generation error (fault injection: --fault-error-event)"))
		return
	case errors.Is(err, errFaultDisconnect):
		j.fail()
		panic(http.ErrAbortHandler)
	default:
		j.fail()
		return
	}
	body := pcm
	if req.format == "wav" {
		body = wav.Encode(s.wavFormat(), pcm)
	}
	j.succeed()
	w.Header().Set("Content-Type", mediaType(req.format))
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	setTokenHeaders(w.Header(), j.spec.promptTok, j.codecTok)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body) // the client may be gone; the metrics already count the request
}

// speechBytes streams raw PCM as it is produced; with wav, a 44-byte header
// with 0xFFFFFFFF sizes goes first, at once. Errors cannot be signalled in
// band, so the error-event fault drops the connection like the disconnect
// fault does.
func (s *Server) speechBytes(w http.ResponseWriter, j *job, req *speechRequest) {
	w.Header().Set("Content-Type", mediaType(req.format))
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	buf := make([]byte, 0, max(wav.HeaderSize, j.maxChunkBytes()))
	if req.format == "wav" {
		buf = wav.AppendHeader(buf, s.wavFormat(), wav.UnknownSize)
		_, _ = w.Write(buf) // a failure shows on the next write
	}
	_ = rc.Flush()
	cork := corkOf(j.ctx)
	sm := s.newSpeechStreamMetrics(j)
	err := j.run(func(ev *event) error {
		buf = j.render(buf[:0], ev)
		sm.payload(len(buf))
		return corked(cork, func() error {
			if _, err := w.Write(buf); err != nil {
				return err
			}
			return flush(rc)
		})
	})
	switch {
	case err == nil:
		sm.completed()
		j.succeed()
	case errors.Is(err, errFaultEvent), errors.Is(err, errFaultDisconnect):
		sm.aborted(abortReason(err))
		j.fail()
		panic(http.ErrAbortHandler)
	default:
		sm.aborted(abortReason(err))
		j.fail()
	}
}

// speechEvents streams speech.audio.delta events and a final
// speech.audio.done (no [DONE]); with wav the first delta is the bare
// streaming header, sent at once.
func (s *Server) speechEvents(w http.ResponseWriter, j *job, req *speechRequest) {
	out := newSSEOut(j.ctx, w, s.cfg.Stamp)
	const deltaType = "speech.audio.delta"
	pcm := make([]byte, 0, j.maxChunkBytes())
	payload := make([]byte, 0, base64.StdEncoding.EncodedLen(max(wav.HeaderSize, cap(pcm)))+256)
	delta := func(audio []byte, corrupt bool) error {
		payload = append(payload[:0], `{"type":"speech.audio.delta","audio":"`...)
		payload = appendBase64(payload, audio, corrupt)
		payload = append(payload, `","response_format":`...)
		payload = appendJSONString(payload, req.format)
		payload = append(payload, '}')
		return out.send(deltaType, payload)
	}
	sm := s.newSpeechStreamMetrics(j)
	err := func() error {
		if req.format == "wav" {
			if err := delta(wav.AppendHeader(nil, s.wavFormat(), wav.UnknownSize), false); err != nil {
				return err
			}
		}
		return j.run(func(ev *event) error {
			pcm = j.render(pcm[:0], ev)
			sm.payload(len(pcm))
			return delta(pcm, ev.corrupt)
		})
	}()
	switch {
	case err == nil:
		sm.completed()
		j.succeed()
		payload = append(payload[:0], `{"type":"speech.audio.done","usage":{"input_tokens":`...)
		payload = strconv.AppendInt(payload, int64(j.spec.promptTok), 10)
		payload = append(payload, `,"output_tokens":`...)
		payload = strconv.AppendInt(payload, int64(j.codecTok), 10)
		payload = append(payload, `,"total_tokens":`...)
		payload = strconv.AppendInt(payload, int64(j.spec.promptTok+j.codecTok), 10)
		payload = append(payload, `}}`...)
		_ = out.send("speech.audio.done", payload) // a client gone at the very end changes nothing
	case errors.Is(err, errFaultEvent):
		sm.aborted(abortReason(err))
		j.fail()
		e := errInternal("simulated mid-stream error (fault injection: --fault-error-event)")
		e.Type = "server_error"
		payload = append(payload[:0], `{"type":"speech.audio.error","error":`...)
		payload = append(payload, e.detailJSON()...)
		payload = append(payload, '}')
		_ = out.send("speech.audio.error", payload)
	case errors.Is(err, errFaultDisconnect):
		sm.aborted(abortReason(err))
		j.fail()
		panic(http.ErrAbortHandler)
	default:
		sm.aborted(abortReason(err))
		j.fail()
	}
}

// Token headers of a non-streaming speech response
// (docs/reference/http-streams.md, section 3.5).
const (
	HeaderInputTokens      = "X-VLLM-OMNI-INPUT-TOKENS"
	HeaderOutputTokens     = "X-VLLM-OMNI-OUTPUT-TOKENS"
	HeaderTotalTokens      = "X-VLLM-OMNI-TOTAL-TOKENS"
	HeaderInputTextTokens  = "X-VLLM-OMNI-INPUT-TEXT-TOKENS"
	HeaderInputAudioTokens = "X-VLLM-OMNI-INPUT-AUDIO-TOKENS"
)

// setTokenHeaders sets the five token headers: the simulator's input is
// text only, so input text tokens are the input tokens and audio tokens 0.
func setTokenHeaders(h http.Header, input, output int) {
	h.Set(HeaderInputTokens, strconv.Itoa(input))
	h.Set(HeaderOutputTokens, strconv.Itoa(output))
	h.Set(HeaderTotalTokens, strconv.Itoa(input+output))
	h.Set(HeaderInputTextTokens, strconv.Itoa(input))
	h.Set(HeaderInputAudioTokens, "0")
}
