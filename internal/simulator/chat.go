package simulator

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omnibench/omnibench/internal/audio/flac"
	"github.com/omnibench/omnibench/internal/audio/mp3"
	"github.com/omnibench/omnibench/internal/audio/opus"
	"github.com/omnibench/omnibench/internal/audio/wav"
	"github.com/omnibench/omnibench/internal/metrics/omnimetrics"
)

// defaultReply is spoken when a chat request carries no text at all.
const defaultReply = "Hello from the omnibench simulator."

// chatRequest is a validated chat completion request.
type chatRequest struct {
	model        string
	prompt       string // all message text, for prompt tokens and the generator key
	reply        string // what the assistant says: the last user text
	stream       bool
	includeUsage bool
	text, audio  bool   // requested output modalities
	format       string // "wav" or "pcm"
	voice        string
	inputAudioS  float64 // seconds of audio in the messages
}

// chatBody is the wire form of the fields the simulator reads.
type chatBody struct {
	Model         string            `json:"model"`
	Messages      []json.RawMessage `json:"messages"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Modalities json.RawMessage `json:"modalities"`
	// The voice is the top-level voice (or speaker): vLLM-Omni reads no
	// audio.voice, so neither does the simulator.
	Audio *struct {
		Format string `json:"format"`
	} `json:"audio"`
	Voice   string `json:"voice"`
	Speaker string `json:"speaker"`
}

type chatMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

type contentPart struct {
	Type       string `json:"type"`
	Text       string `json:"text"`
	InputAudio *struct {
		Data   string `json:"data"`
		Format string `json:"format"`
	} `json:"input_audio"`
	AudioURL *struct {
		URL string `json:"url"`
	} `json:"audio_url"`
}

// parseChatRequest validates a chat completion body. Errors are 400s naming
// the field.
func parseChatRequest(body []byte) (*chatRequest, *apiError) {
	var b chatBody
	if e := decodeJSON(body, &b); e != nil {
		return nil, e
	}
	if b.Messages == nil {
		return nil, badRequest("messages", "messages: field required")
	}
	if len(b.Messages) == 0 {
		return nil, badRequest("messages", "messages: must contain at least one message")
	}
	req := &chatRequest{model: b.Model, stream: b.Stream}
	if b.StreamOptions != nil {
		req.includeUsage = b.StreamOptions.IncludeUsage
	}
	var all []string
	for i, raw := range b.Messages {
		var m chatMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return nil, badRequest("messages", "messages[%d]: expected an object with role and content: %v", i, err)
		}
		if m.Role == "" {
			return nil, badRequest("messages", "messages[%d].role: field required", i)
		}
		text, audioS, e := messageText(i, m.Content)
		if e != nil {
			return nil, e
		}
		req.inputAudioS += audioS
		if text != "" {
			all = append(all, text)
		}
		if m.Role == "user" && strings.TrimSpace(text) != "" {
			req.reply = text
		}
	}
	req.prompt = strings.Join(all, "\n")
	if req.reply == "" {
		req.reply = defaultReply
	}

	req.text, req.audio = true, true // Qwen3-Omni's default output
	mods, e := parseModalities(b.Modalities)
	if e != nil {
		return nil, e
	}
	if len(mods) > 0 {
		req.text, req.audio = false, false
		var unsupported []string
		for _, m := range mods {
			switch m {
			case "text":
				req.text = true
			case "audio":
				req.audio = true
			default:
				unsupported = append(unsupported, m)
			}
		}
		if len(unsupported) > 0 {
			return nil, badRequest("modalities", "Unsupported output modalities %s for this model. Supported modalities: %s",
				pyList(unsupported), pyList([]string{"text", "audio"}))
		}
	}

	req.format = "wav"
	if b.Audio != nil {
		f, e := normalizeFormat("audio.format", b.Audio.Format)
		if e != nil {
			return nil, e
		}
		// Every name normalizeFormat accepts is produced (encodeFile).
		req.format = f
	}
	switch {
	case b.Voice != "":
		req.voice = b.Voice
	case b.Speaker != "":
		req.voice = b.Speaker
	default:
		req.voice = DefaultVoice
	}
	return req, nil
}

// parseModalities reads the modalities field: absent or null means the
// model's default (nil); anything but a list of strings is the 400 upstream
// sends (docs/reference/server-versions.md, section 5).
func parseModalities(raw json.RawMessage) ([]string, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var mods []string
	if raw[0] != '[' || json.Unmarshal(raw, &mods) != nil {
		return nil, badRequest("modalities", "'modalities' must be a list of strings.")
	}
	return mods, nil
}

// pyList formats names as Python prints a list of strings (['a', 'b']),
// the form of upstream's modality error message.
func pyList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "'" + n + "'"
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// messageText extracts the text of a message's content: a string, an array
// of content parts (text parts count, input_audio and audio_url parts are
// decoded and their seconds summed, image parts are ignored), or null.
func messageText(i int, raw json.RawMessage) (string, float64, *apiError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", 0, badRequest("messages", "messages[%d].content: %v", i, err)
		}
		return s, 0, nil
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return "", 0, badRequest("messages", "messages[%d].content: %v", i, err)
		}
		var texts []string
		audioS := 0.0
		for k, pr := range parts {
			var p contentPart
			if err := json.Unmarshal(pr, &p); err != nil {
				return "", 0, badRequest("messages", "messages[%d].content[%d]: expected a content part object: %v", i, k, err)
			}
			where := fmt.Sprintf("messages[%d].content[%d]", i, k)
			var d float64
			var e *apiError
			switch p.Type {
			case "text":
				texts = append(texts, p.Text)
			case "input_audio":
				if p.InputAudio == nil {
					return "", 0, badRequest("messages", "%s.input_audio: field required", where)
				}
				d, e = decodeInputAudio(where, p.InputAudio.Data, p.InputAudio.Format)
			case "audio_url":
				if p.AudioURL == nil {
					return "", 0, badRequest("messages", "%s.audio_url: field required", where)
				}
				d, e = decodeAudioURL("messages", where+".audio_url.url", p.AudioURL.URL)
			}
			if e != nil {
				return "", 0, e
			}
			audioS += d
		}
		return strings.Join(texts, " "), audioS, nil
	default:
		return "", 0, badRequest("messages", "messages[%d].content: expected a string, an array of content parts or null", i)
	}
}

func (s *Server) handleChat(w http.ResponseWriter, r *http.Request) {
	arrival := time.Now()
	body, e := readBody(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	req, e := parseChatRequest(body)
	if e == nil {
		e = s.checkModel(req.model)
	}
	if e != nil {
		writeError(w, e)
		return
	}
	// The assistant answers from the reply corpus with as many words as
	// the user's text; the audio length still follows the user's text.
	words := replyWords(s.cfg.Seed, req.prompt, len(strings.Fields(req.reply)))
	j := s.newJob(r.Context(), arrival, jobSpec{
		endpoint:  "chat",
		key:       req.prompt,
		words:     words,
		textOn:    req.text,
		audioOn:   req.audio,
		audioText: req.reply,
		voice:     req.voice,
		speed:     1,
		promptTok: promptTokens(utf8.RuneCountInString(req.prompt)) + audioPromptTokens(req.inputAudioS),
		audioInS:  req.inputAudioS,
	})
	defer j.release()
	if j.plan.faults.http500 {
		j.fail()
		writeError(w, errInternal("simulated internal server error (fault injection: --fault-500)"))
		return
	}
	if req.stream {
		s.streamChat(w, j, req)
	} else {
		s.completeChat(w, j, req)
	}
}

// chatID returns a new chat completion id.
func (s *Server) chatID() string {
	return "chatcmpl-" + strconv.FormatUint(s.seq.Add(1), 16)
}

// chunkPrefix is the part of every chunk before the delta's fields:
// {"id":...,"object":"chat.completion.chunk","created":...,"model":...,"choices":[{"index":0,"delta":{
func chunkPrefix(id string, created int64, model string) []byte {
	b := []byte(`{"id":`)
	b = appendJSONString(b, id)
	b = append(b, `,"object":"chat.completion.chunk","created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"model":`...)
	b = appendJSONString(b, model)
	return b
}

func appendFinish(dst []byte, last bool) []byte {
	if last {
		return append(dst, `},"logprobs":null,"finish_reason":"stop"}]`...)
	}
	return append(dst, `},"logprobs":null,"finish_reason":null}]`...)
}

// streamChat serves "stream": true (docs/reference/http-streams.md,
// section 2).
func (s *Server) streamChat(w http.ResponseWriter, j *job, req *chatRequest) {
	c := s.newChatStreamer(w, j, req)
	err := func() error {
		if req.text {
			c.payload = append(append(append(c.payload[:0], c.prefix...), chatChoicesOpen...),
				`"role":"assistant","content":""},"logprobs":null,"finish_reason":null}],"modality":"text"}`...)
			if err := c.out.send("", c.payload); err != nil {
				return err
			}
		}
		return j.run(c.event)
	}()
	c.end(err)
}

// chatChoicesOpen follows chunkPrefix in every event with a delta.
const chatChoicesOpen = `,"choices":[{"index":0,"delta":{`

// chatStreamer writes one streamed chat response: its writer, the
// buffers it reuses for every event and what the server's metrics take at
// the end.
type chatStreamer struct {
	s   *Server
	j   *job
	req *chatRequest
	out *sseOut

	prefix   []byte
	audioBuf []byte
	payload  []byte
	f        wav.Format
	sr       omnimetrics.StageReplica // the final stage, for the server's metrics

	arrivals   []float64
	pcmBytes   []int
	firstAudio bool // the server's TTFP is taken at the first audio output, even an empty one
	emptyDue   bool // the empty-audio-event fault's event is still to be sent
}

func (s *Server) newChatStreamer(w http.ResponseWriter, j *job, req *chatRequest) *chatStreamer {
	out := newSSEOut(j.ctx, w, s.cfg.Stamp)
	prefix := chunkPrefix(s.chatID(), time.Now().Unix(), s.cfg.Model)
	// Buffers sized once for the largest event, reused for every event.
	audioBuf := make([]byte, 0, wav.HeaderSize+j.maxChunkBytes())
	return &chatStreamer{
		s: s, j: j, req: req,
		out:      out,
		prefix:   prefix,
		audioBuf: audioBuf,
		payload:  make([]byte, 0, len(prefix)+base64.StdEncoding.EncodedLen(cap(audioBuf))+256),
		f:        wav.Format{SampleRate: s.cfg.SampleRate, Channels: 1, BitsPerSample: 16},
		sr:       j.finalSR(),
		emptyDue: j.plan.faults.emptyEvent,
	}
}

// firstAudioOut takes the server's TTFP at the first audio output.
func (c *chatStreamer) firstAudioOut(at float64) {
	if !c.firstAudio {
		c.firstAudio = true
		c.s.metrics.AudioFirstPacket(c.sr, at)
	}
}

// sendEmpty sends the empty-audio-event fault's event: an audio output
// with no samples gives content "" (upstream #5237).
func (c *chatStreamer) sendEmpty() error {
	c.emptyDue = false
	payload := append(append(c.payload[:0], c.prefix...), chatChoicesOpen...)
	payload = append(payload, `"role":"assistant","content":""`...)
	payload = appendFinish(payload, false)
	payload = append(payload, `,"usage":`...)
	payload = appendUsage(payload, c.j.spec.promptTok, 0)
	payload = append(payload, `,"modality":"audio","metrics":null}`...)
	c.payload = payload
	c.firstAudioOut(c.j.elapsed())
	return c.out.send("", c.payload)
}

// event sends one generated event: a text delta, or an audio output.
func (c *chatStreamer) event(ev *event) error {
	if c.emptyDue && (ev.audio || c.req.audio) {
		if err := c.sendEmpty(); err != nil {
			return err
		}
	}
	payload := append(append(c.payload[:0], c.prefix...), chatChoicesOpen...)
	if !ev.audio {
		payload = append(payload, `"content":`...)
		payload = appendJSONString(payload, ev.word)
		payload = appendFinish(payload, ev.last)
		payload = append(payload, `,"modality":"text","metrics":null}`...)
		c.payload = payload
		return c.out.send("", payload)
	}
	c.payload = payload
	return c.sendAudio(ev)
}

// sendAudio renders an audio event's samples in the requested format and
// sends them base64 in the delta's content.
func (c *chatStreamer) sendAudio(ev *event) error {
	audioBuf := c.audioBuf[:0]
	if c.req.format == "wav" {
		audioBuf = wav.AppendHeader(audioBuf, c.f, uint32(ev.frames*2))
	}
	pcmStart := len(audioBuf)
	audioBuf = c.j.render(audioBuf, ev)
	c.audioBuf = audioBuf
	file := audioBuf
	if c.req.format != "wav" && c.req.format != "pcm" {
		// Each event is a complete FLAC, MP3 or Ogg Opus file, as
		// with wav.
		var err error
		if file, err = encodeFile(c.req.format, c.f, audioBuf); err != nil {
			return fmt.Errorf("simulator: %w", err)
		}
	}
	payload := append(c.payload, `"role":"assistant","content":"`...)
	payload = appendBase64(payload, file, ev.corrupt)
	payload = append(payload, '"')
	payload = appendFinish(payload, ev.last)
	payload = append(payload, `,"usage":`...)
	payload = appendUsage(payload, c.j.spec.promptTok, 0)
	payload = append(payload, `,"modality":"audio","metrics":null}`...)
	c.payload = payload
	at := c.j.elapsed()
	c.firstAudioOut(at)
	c.arrivals = append(c.arrivals, at)
	c.pcmBytes = append(c.pcmBytes, len(audioBuf)-pcmStart)
	return c.out.send("", payload)
}

// end finishes the response after the last event, or after err stopped
// it: the usage chunk and [DONE], the fault's error event, or nothing for a
// client gone.
func (c *chatStreamer) end(err error) {
	s, j, out := c.s, c.j, c.out
	switch {
	case err == nil:
		// Record before the last writes, so a client that has read [DONE]
		// finds the request in /metrics.
		s.metrics.AudioStreamingFinalize(c.sr, c.arrivals, c.pcmBytes, s.cfg.SampleRate)
		j.succeed()
		if c.req.includeUsage {
			payload := append(c.payload[:0], c.prefix...)
			payload = append(payload, `,"choices":[],"usage":`...)
			payload = appendUsage(payload, j.spec.promptTok, j.generationTokens())
			payload = append(payload, '}')
			c.payload = payload
			if out.send("", payload) != nil {
				return
			}
		}
		_ = out.send("", []byte("[DONE]")) // a client gone at the very end changes nothing
	case errors.Is(err, errFaultEvent):
		j.fail()
		if out.send("", errInternal("simulated mid-stream error (fault injection: --fault-error-event)").marshal()) == nil {
			_ = out.send("", []byte("[DONE]"))
		}
	case errors.Is(err, errFaultDisconnect):
		j.fail()
		panic(http.ErrAbortHandler) // net/http closes the connection without a terminating chunk
	default: // the client went away or a write failed
		j.fail()
	}
}

// Non-streaming response types.
type chatCompletion struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   json.RawMessage `json:"usage"`
}

type chatChoice struct {
	Index        int            `json:"index"`
	Message      chatMessageOut `json:"message"`
	Logprobs     *struct{}      `json:"logprobs"`
	FinishReason string         `json:"finish_reason"`
}

type chatMessageOut struct {
	Role    string     `json:"role"`
	Content *string    `json:"content"`
	Audio   *audioData `json:"audio,omitempty"`
}

type audioData struct {
	ID         string `json:"id"`
	Data       string `json:"data"`
	ExpiresAt  int64  `json:"expires_at"`
	Transcript string `json:"transcript"`
}

// completeChat serves a non-streaming chat completion: the whole response
// after the whole generation, text and audio as separate choices (the audio
// one with message.audio.data, like vLLM-Omni).
func (s *Server) completeChat(w http.ResponseWriter, j *job, req *chatRequest) {
	var text strings.Builder
	pcm := make([]byte, 0, 2*j.plan.totalFrames)
	err := j.run(func(ev *event) error {
		if ev.audio {
			pcm = j.render(pcm, ev)
		} else {
			text.WriteString(ev.word)
		}
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
	now := time.Now()
	resp := chatCompletion{
		ID:      s.chatID(),
		Object:  "chat.completion",
		Created: now.Unix(),
		Model:   s.cfg.Model,
		Usage:   appendUsage(nil, j.spec.promptTok, j.generationTokens()),
	}
	if req.text {
		t := text.String()
		resp.Choices = append(resp.Choices, chatChoice{Message: chatMessageOut{Role: "assistant", Content: &t}, FinishReason: "stop"})
	}
	if req.audio {
		file := pcm
		f := wav.Format{SampleRate: s.cfg.SampleRate, Channels: 1, BitsPerSample: 16}
		switch req.format {
		case "wav":
			file = wav.Encode(f, pcm)
		case "flac", "mp3", "opus":
			var err error
			if file, err = encodeFile(req.format, f, pcm); err != nil {
				j.fail()
				writeError(w, errInternal("simulated "+err.Error()))
				return
			}
		}
		corrupt := j.plan.faults.malformed && len(j.plan.chunkFrames) > 0
		resp.Choices = append(resp.Choices, chatChoice{
			Message: chatMessageOut{Role: "assistant", Audio: &audioData{
				ID:        fmt.Sprintf("audio-%s", resp.ID[len("chatcmpl-"):]),
				Data:      string(appendBase64(nil, file, corrupt)),
				ExpiresAt: now.Add(24 * time.Hour).Unix(),
			}},
			FinishReason: "stop",
		})
	}
	j.succeed()
	writeJSON(w, http.StatusOK, resp)
}

// encodeFile writes one chat audio event of s16 pcm in format f as a
// complete file: FLAC carries the audio itself (flac); MP3 and Ogg Opus
// carry digital silence of the same duration (mp3, opus: no
// well-kept pure-Go encoder exists), so those responses are never audible.
// Opus counts at 48 kHz: the duration is pcm's, rounded to a 48 kHz sample.
func encodeFile(format string, f wav.Format, pcm []byte) ([]byte, error) {
	frames := int64(len(pcm) / f.BytesPerFrame())
	var file []byte
	var err error
	switch format {
	case "flac":
		file, err = flac.Encode(f, pcm)
	case "mp3":
		file, err = mp3.EncodeSilence(f.SampleRate, f.Channels, frames)
	case "opus":
		file, err = opus.EncodeSilence(f.Channels, f.SampleRate, (frames*opus.Rate+int64(f.SampleRate)/2)/int64(f.SampleRate))
	default:
		return nil, fmt.Errorf("no encoder for audio format %q", format)
	}
	if err != nil {
		return nil, fmt.Errorf("%s encoding failed: %w", format, err)
	}
	return file, nil
}
